package io.sluice.backend.bench;

import io.sluice.backend.raft.ShardClient;
import io.sluice.backend.raft.ShardStateMachine;
import io.sluice.common.SystemClock;
import io.sluice.common.raft.RatisSettings;
import io.sluice.partition.NewMessage;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionConfig;
import io.sluice.partition.PartitionId;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.storage.RaftStorage;

/**
 * What group commit buys: one shard as a 3-replica Ratis group in this JVM (real gRPC on loopback, RocksDB, Raft log
 * fsynced on a majority before a commit), 1 KiB single-message sends with {@code concurrency} outstanding, once one
 * command per entry and once batched. Prints messages per second and the batching factor.
 * Run: {@code scripts/bench-engine.sh} builds the classpath; then
 * {@code java -cp ... io.sluice.backend.bench.ShardGroupCommitBench [seconds] [concurrency]}.
 */
public final class ShardGroupCommitBench {
    public static void main(String[] args) throws Exception {
        int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 10;
        int concurrency = args.length > 1 ? Integer.parseInt(args[1]) : 64;
        Path dir = Files.createTempDirectory("sluice-shard-bench");
        RaftGroup group = LoopbackGroup.ofThree();
        List<RaftServer> servers = new ArrayList<>();
        for (RaftPeer p : group.getPeers()) {
            int port = LoopbackGroup.port(p);
            RaftServer server = RaftServer.newBuilder().setServerId(p.getId()).setGroup(group)
                    .setStateMachine(new ShardStateMachine(dir.resolve(p.getId().toString()).resolve("store"),
                            SystemClock.INSTANCE))
                    .setProperties(RatisSettings.server(dir.resolve(p.getId().toString()).resolve("raft"), "127.0.0.1", port, 1_000_000))
                    .setOption(RaftStorage.StartupOption.FORMAT).build();
            server.start();
            servers.add(server);
        }
        String body = "x".repeat(1024);
        int partition = 0;
        for (int[] shape : new int[][] {{1, concurrency}, {512, 2}}) {
            PartitionId p = new PartitionId(1, partition++);
            try (ShardClient client = new ShardClient(group, shape[0], shape[1], java.util.concurrent.ForkJoinPool.commonPool())) {
                client.submit(p, new PartitionCommand.Configure(PartitionConfig.STANDARD_DEFAULTS)).get(60, TimeUnit.SECONDS);
                Semaphore outstanding = new Semaphore(concurrency);
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
                long sent = 0;
                long start = System.nanoTime();
                while (System.nanoTime() < deadline) {
                    outstanding.acquire();
                    CompletableFuture<?> f = client.submit(p, new PartitionCommand.Send(List.of(
                            NewMessage.of("m" + sent, body))));
                    f.whenComplete((o, e) -> outstanding.release());
                    sent++;
                }
                outstanding.acquire(concurrency);
                double secs = (System.nanoTime() - start) / 1e9;
                long[] stats = client.stats();
                System.out.printf("shard R=3, %d outstanding, max %d commands/entry: %,.0f sends/s (%.1f commands per"
                        + " entry)%n", concurrency, shape[0], sent / secs, stats[1] / (double) stats[0]);
            }
        }
        for (RaftServer s : servers) {
            s.close();
        }
    }
}
