package io.sluice.backend.raft;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.backend.shard.LeaderClock;
import io.sluice.backend.shard.ShardQueries;
import io.sluice.common.SystemClock;
import io.sluice.partition.Effect;
import io.sluice.partition.NewMessage;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionConfig;
import io.sluice.partition.PartitionId;
import io.sluice.partition.PartitionResponse;
import io.sluice.testing.Ports;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A backend whose replica of a shard fails (here: its storage, on a one-replica group) reports that group as failed,
 * so its readiness can say so, instead of hosting a closed replica that neither votes nor acknowledges.
 */
class BackendServerIT {
    @TempDir
    Path dir;

    @Test
    void itsShardGroupsRunWithTheElectionTimeoutItIsGiven() throws Exception {
        try (BackendServer backend = new BackendServer("b1", "127.0.0.1", Ports.free(), dir,
                new LeaderClock(SystemClock.INSTANCE), 1_000_000, io.sluice.common.raft.RaftTransport.PLAINTEXT, 700)) {
            backend.start(); // closed once started: a Ratis server closed before its start leaves its threads behind
            var properties = backend.raftProperties();
            assertEquals(700, org.apache.ratis.server.RaftServerConfigKeys.Rpc.timeoutMin(properties)
                    .toLong(TimeUnit.MILLISECONDS));
            assertEquals(1_400, org.apache.ratis.server.RaftServerConfigKeys.Rpc.timeoutMax(properties)
                    .toLong(TimeUnit.MILLISECONDS));
        }
    }

    @Test
    void aReplicaThatFailsIsReportedFailed() throws Exception {
        int port = Ports.free();
        BackendServer backend = new BackendServer("b1", "127.0.0.1", port, dir, SystemClock.INSTANCE, 1_000_000);
        try {
            backend.start();
            RaftGroup group = RaftGroup.valueOf(RaftGroupId.valueOf(UUID.randomUUID()),
                    RaftPeer.newBuilder().setId("b1").setAddress("127.0.0.1:" + port).build());
            backend.join(group);
            await().atMost(Duration.ofSeconds(60)).until(() -> backend.isLeaderReady(group.getGroupId()));
            PartitionId p = new PartitionId(1, 0);
            backend.submit(group.getGroupId(), p, new PartitionCommand.Configure(PartitionConfig.STANDARD_DEFAULTS))
                    .get(30, TimeUnit.SECONDS);
            assertInstanceOf(PartitionResponse.Sent.class, backend.submit(group.getGroupId(), p,
                    new PartitionCommand.Send(List.of(NewMessage.of("ok", "fine")))).get(30, TimeUnit.SECONDS).response());
            assertEquals(Set.of(), backend.failedGroups());

            List<Throwable> halted = new CopyOnWriteArrayList<>();
            ShardStateMachine machine = backend.shard(group.getGroupId());
            machine.onStorageFailure(halted::add); // recorded instead of halting the test's JVM
            machine.core().applyFault(a -> {
                throw new io.sluice.backend.storage.StorageException("disk gone", new java.io.IOException());
            });
            backend.submit(group.getGroupId(), p, new PartitionCommand.Send(List.of(NewMessage.of("no", "fails"))));
            await().atMost(Duration.ofSeconds(60)).until(() -> !halted.isEmpty());
            await().atMost(Duration.ofSeconds(60)).until(() -> backend.failedGroups().equals(Set.of(group.getGroupId())));
        } finally {
            backend.close();
        }
    }

    /**
     * A shard led in this process is reached without an RPC ({@link LocalLeaders}): a client whose group names an
     * address where nothing listens still gets its commands applied and its reads answered through the local leader;
     * without it, the same client gets nothing.
     */
    @Test
    void aShardLedHereIsReachedWithoutTheNetwork() throws Exception {
        int port;
        int nowhere;
        try (ServerSocket s = new ServerSocket(0); ServerSocket t = new ServerSocket(0)) {
            port = s.getLocalPort();
            nowhere = t.getLocalPort(); // closed again: nothing listens there
        }
        BackendServer backend = new BackendServer("b1", "127.0.0.1", port, dir, SystemClock.INSTANCE, 1_000_000);
        try {
            backend.start();
            RaftGroupId id = RaftGroupId.valueOf(UUID.randomUUID());
            backend.join(RaftGroup.valueOf(id, RaftPeer.newBuilder().setId("b1").setAddress("127.0.0.1:" + port).build()));
            await().atMost(Duration.ofSeconds(60)).until(() -> backend.isLeaderReady(id));
            RaftGroup unreachable = RaftGroup.valueOf(id,
                    RaftPeer.newBuilder().setId("b1").setAddress("127.0.0.1:" + nowhere).build());
            PartitionId p = new PartitionId(1, 0);
            try (ShardClient local = new ShardClient(unreachable, 64, io.sluice.common.raft.RatisSettings
                    .MAX_ENTRY_PAYLOAD_BYTES, 2, Runnable::run, io.sluice.common.raft.RaftTransport.PLAINTEXT, backend);
                 ShardClient remote = new ShardClient(unreachable, 64, 2, Runnable::run)) {
                local.submit(p, new PartitionCommand.Configure(PartitionConfig.STANDARD_DEFAULTS)).get(30, TimeUnit.SECONDS);
                assertInstanceOf(PartitionResponse.Sent.class, local.submit(p, new PartitionCommand.Send(
                        List.of(NewMessage.of("m1", "in process")))).get(30, TimeUnit.SECONDS).response());
                var received = local.submit(p, new PartitionCommand.Receive(10, 30, null)).get(30, TimeUnit.SECONDS);
                assertEquals(1, received.delivered().size(), "leased, and its body read from the local leader");
                assertEquals("in process", received.delivered().get(0).message().body());
                var overNetwork = remote.submit(p, new PartitionCommand.Send(List.of(NewMessage.of("m2", "lost"))));
                org.junit.jupiter.api.Assertions.assertThrows(Exception.class, () -> overNetwork.get(5, TimeUnit.SECONDS),
                        "the same group over the network reaches nobody");
            }
            // the arrival watch (a parked AWAIT) goes to the local leader too: arrivals are learnt without the network
            try (ShardedPartitionService service = new ShardedPartitionService(only(unreachable),
                    io.sluice.common.raft.RaftTransport.PLAINTEXT, backend)) {
                List<Effect.MessagesAvailable> seen = new CopyOnWriteArrayList<>();
                service.addListener(effects -> effects.stream().filter(Effect.MessagesAvailable.class::isInstance)
                        .map(Effect.MessagesAvailable.class::cast).forEach(seen::add));
                await().atMost(Duration.ofSeconds(30)).until(() -> {
                    service.submit(p, new PartitionCommand.Send(List.of(NewMessage.of(UUID.randomUUID().toString(), "x"))))
                            .get(30, TimeUnit.SECONDS);
                    return !seen.isEmpty();
                });
                assertEquals(p, seen.get(0).partition());
            }
        } finally {
            backend.close();
        }
    }
    /**
     * A frontend's arrival watch learns how many messages a partition has visible, so it wakes that many parked polls
     * rather than all of them; an answer from a backend that sends no counts still wakes all.
     */
    @Test
    void arrivalsReachAFrontendWithTheirCount() throws Exception {
        int port = Ports.free();
        BackendServer backend = new BackendServer("b1", "127.0.0.1", port, dir, SystemClock.INSTANCE, 1_000_000);
        RaftGroup group = RaftGroup.valueOf(RaftGroupId.valueOf(UUID.randomUUID()),
                RaftPeer.newBuilder().setId("b1").setAddress("127.0.0.1:" + port).build());
        try (ShardedPartitionService service = new ShardedPartitionService(only(group))) {
            backend.start();
            backend.join(group);
            await().atMost(Duration.ofSeconds(60)).until(() -> backend.isLeaderReady(group.getGroupId()));
            PartitionId p = new PartitionId(1, 0);
            service.createPartition(p, PartitionConfig.STANDARD_DEFAULTS).get(30, TimeUnit.SECONDS);
            List<Effect.MessagesAvailable> seen = new CopyOnWriteArrayList<>();
            service.addListener(effects -> effects.stream().filter(Effect.MessagesAvailable.class::isInstance)
                    .map(Effect.MessagesAvailable.class::cast).forEach(seen::add));
            // the watch parks its AWAIT within a second of start; sends until one arrival is seen after it
            await().atMost(Duration.ofSeconds(30)).until(() -> {
                service.submit(p, new PartitionCommand.Send(List.of(NewMessage.of("a", "1"), NewMessage.of("b", "2"),
                        NewMessage.of("c", "3")))).get(30, TimeUnit.SECONDS);
                return !seen.isEmpty();
            });
            Effect.MessagesAvailable first = seen.get(0);
            assertEquals(p, first.partition());
            assertTrue(first.visibleCount() >= 3 && first.visibleCount() % 3 == 0,
                    "the answer carries the partition's visible count: " + first.visibleCount());
        } finally {
            backend.close();
        }
    }

    /** A router that knows one group, holding every partition. */
    private static ShardedPartitionService.Router only(RaftGroup group) {
        return new ShardedPartitionService.Router() {
            @Override
            public RaftGroup groupOf(PartitionId partition) {
                return group;
            }

            @Override
            public java.util.Collection<RaftGroup> allGroups() {
                return List.of(group);
            }
        };
    }
}
