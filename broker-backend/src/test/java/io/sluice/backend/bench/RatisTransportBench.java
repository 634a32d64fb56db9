package io.sluice.backend.bench;

import com.sun.management.OperatingSystemMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.RaftConfigKeys;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.netty.NettyConfigKeys;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.rpc.SupportedRpcType;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.util.TimeDuration;

/**
 * The floor under every replicated write: bare Ratis, with none of Sluice's code. Three replicas in this JVM over
 * loopback, a state machine that applies nothing, the Raft log forced to disk on a majority before a commit (Ratis'
 * defaults otherwise, Sluice's 500/1000 ms RPC timeouts). One client keeps {@code outstanding} entries of
 * {@code bytes} in flight; prints entries per second and the process's CPU per entry (three replicas and the client
 * together), for the gRPC transport Sluice uses or Ratis' Netty transport. A warm-up round, then a measured one.
 *
 * <p>Run: {@code scripts/bench-ratis.sh} (both transports, a few shapes).
 */
public final class RatisTransportBench {
    private RatisTransportBench() {
    }

    /** Applies nothing: what is left is Ratis itself. */
    private static final class NoOpStateMachine extends BaseStateMachine {
        @Override
        public CompletableFuture<Message> applyTransaction(TransactionContext trx) {
            updateLastAppliedTermIndex(trx.getLogEntry().getTerm(), trx.getLogEntry().getIndex());
            return CompletableFuture.completedFuture(Message.EMPTY);
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 4) {
            System.err.println("usage: RatisTransportBench grpc|netty SECONDS OUTSTANDING BYTES");
            System.exit(2);
        }
        SupportedRpcType transport = SupportedRpcType.valueOfIgnoreCase(args[0]);
        int seconds = Integer.parseInt(args[1]);
        int outstanding = Integer.parseInt(args[2]);
        int bytes = Integer.parseInt(args[3]);
        Path dir = Files.createTempDirectory("sluice-ratis-bench");
        RaftGroup group = LoopbackGroup.ofThree();
        List<RaftServer> servers = new ArrayList<>();
        for (RaftPeer peer : group.getPeers()) {
            int port = LoopbackGroup.port(peer);
            RaftProperties p = new RaftProperties();
            RaftConfigKeys.Rpc.setType(p, transport);
            if (transport == SupportedRpcType.GRPC) {
                GrpcConfigKeys.Server.setPort(p, port);
            } else {
                NettyConfigKeys.Server.setPort(p, port);
            }
            RaftServerConfigKeys.setStorageDir(p, List.of(dir.resolve(peer.getId().toString()).toFile()));
            RaftServerConfigKeys.Rpc.setTimeoutMin(p, TimeDuration.valueOf(500, TimeUnit.MILLISECONDS));
            RaftServerConfigKeys.Rpc.setTimeoutMax(p, TimeDuration.valueOf(1000, TimeUnit.MILLISECONDS));
            RaftServer server = RaftServer.newBuilder().setServerId(peer.getId()).setGroup(group)
                    .setStateMachine(new NoOpStateMachine()).setProperties(p)
                    .setOption(RaftStorage.StartupOption.FORMAT).build();
            server.start();
            servers.add(server);
        }
        RaftProperties clientProperties = new RaftProperties();
        RaftConfigKeys.Rpc.setType(clientProperties, transport);
        OperatingSystemMXBean os = (OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        try (RaftClient client = RaftClient.newBuilder().setRaftGroup(group).setProperties(clientProperties).build()) {
            Message message = Message.valueOf(ByteString.copyFrom(new byte[bytes]));
            client.io().send(message); // waits for a leader
            for (String round : List.of("warm-up", "measured")) {
                Semaphore inFlight = new Semaphore(outstanding);
                long sent = 0;
                long cpuBefore = os.getProcessCpuTime();
                long start = System.nanoTime();
                long deadline = start + TimeUnit.SECONDS.toNanos(seconds);
                while (System.nanoTime() < deadline) {
                    inFlight.acquire();
                    client.async().send(message).whenComplete((reply, error) -> inFlight.release());
                    sent++;
                }
                inFlight.acquire(outstanding);
                double elapsed = (System.nanoTime() - start) / 1e9;
                double cpuMillisPerEntry = (os.getProcessCpuTime() - cpuBefore) / 1e6 / sent;
                System.out.printf("%-5s %-8s %3d outstanding, %6d-byte entries: %,7.0f entries/s, %5.2f ms CPU per"
                        + " entry (3 replicas + client)%n", transport, round, outstanding, bytes, sent / elapsed,
                        cpuMillisPerEntry);
            }
        } finally {
            for (RaftServer server : servers) {
                server.close();
            }
        }
        System.exit(0); // Ratis' Netty transport leaves a non-daemon worker thread behind after close
    }
}
