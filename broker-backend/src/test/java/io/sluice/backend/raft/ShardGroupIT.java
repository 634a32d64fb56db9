package io.sluice.backend.raft;

import io.sluice.backend.shard.LeaderClock;
import io.sluice.partition.DeliveredMessage;
import io.sluice.partition.PartitionOutcome;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.common.SystemClock;
import io.sluice.common.raft.RatisSettings;
import io.sluice.partition.CommandCodec;
import io.sluice.partition.NewMessage;
import io.sluice.partition.OutcomeCodec;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionConfig;
import io.sluice.partition.PartitionId;
import io.sluice.partition.PartitionResponse;
import io.sluice.testing.Ports;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.util.TimeDuration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One shard as a 3-replica Ratis group on loopback (real gRPC, real RocksDB, WAL off): batched commands replicate,
 * replicas reach identical partition states, a stopped leader loses nothing acknowledged, a restarted replica
 * catches up, and without a majority nothing is acknowledged.
 */
class ShardGroupIT {
    static final PartitionId P = new PartitionId(1, 0);
    static final PartitionId Q = new PartitionId(2, 0);

    @TempDir
    Path dir;
    RaftGroup group;
    long snapshotEvery = 1_000_000;
    io.sluice.common.Clock clock = SystemClock.INSTANCE;
    java.util.function.Function<String, LeaderClock> leaderClocks = id -> new LeaderClock(clock);
    final Map<String, RaftServer> servers = new LinkedHashMap<>();
    final Map<String, ShardStateMachine> machines = new LinkedHashMap<>();
    final List<RaftClient> clients = new ArrayList<>();
    final java.util.concurrent.ExecutorService replies = java.util.concurrent.Executors.newFixedThreadPool(2,
            r -> new Thread(r, "test-replies"));

    @AfterEach
    void close() throws IOException {
        for (RaftClient c : clients) {
            c.close();
        }
        for (RaftServer s : servers.values()) {
            s.close();
        }
        replies.shutdownNow();
    }

    void startGroup() throws IOException {
        List<RaftPeer> peers = new ArrayList<>();
        for (int i = 1; i <= 3; i++) {
            peers.add(RaftPeer.newBuilder().setId("r" + i).setAddress("127.0.0.1:" + Ports.free()).build());
        }
        group = RaftGroup.valueOf(RaftGroupId.valueOf(UUID.randomUUID()), peers);
        for (RaftPeer p : peers) {
            start(p.getId().toString());
        }
    }

    void start(String id) throws IOException {
        RaftPeer peer = group.getPeer(RaftPeerId.valueOf(id));
        int port = Integer.parseInt(peer.getAddress().substring(peer.getAddress().lastIndexOf(':') + 1));
        ShardStateMachine sm = new ShardStateMachine(dir.resolve(id).resolve("store"), leaderClocks.apply(id));
        org.apache.ratis.conf.RaftProperties properties = RatisSettings.server(dir.resolve(id).resolve("raft"), "127.0.0.1", port,
                snapshotEvery);
        org.apache.ratis.server.RaftServerConfigKeys.Log.setPurgeGap(properties, 10);
        // small segments: purging removes whole closed segments only
        org.apache.ratis.server.RaftServerConfigKeys.Log.setSegmentSizeMax(properties,
                org.apache.ratis.util.SizeInBytes.valueOf("64KB"));
        org.apache.ratis.server.RaftServerConfigKeys.Log.setPreallocatedSize(properties,
                org.apache.ratis.util.SizeInBytes.valueOf("16KB"));
        RaftServer server = RaftServer.newBuilder().setServerId(RaftPeerId.valueOf(id)).setGroup(group)
                .setStateMachine(sm).setProperties(properties)
                .setOption(RaftStorage.StartupOption.RECOVER).build();
        server.start();
        servers.put(id, server);
        machines.put(id, sm);
    }

    RaftClient client(int attempts) {
        RaftClient c = RaftClient.newBuilder().setProperties(RatisSettings.client()).setRaftGroup(group)
                .setRetryPolicy(RetryPolicies.retryUpToMaximumCountWithFixedSleep(attempts,
                        TimeDuration.valueOf(200, TimeUnit.MILLISECONDS))).build();
        clients.add(c);
        return c;
    }

    static List<PartitionOutcome> submit(RaftClient client, List<CommandCodec.Addressed> batch) throws IOException {
        RaftClientReply reply = client.io().send(Message.valueOf(ByteString.copyFrom(CommandCodec.encode(batch))));
        if (!reply.isSuccess()) {
            throw new IOException("not committed", reply.getException());
        }
        List<PartitionOutcome> outcomes = OutcomeCodec.decode(reply.getMessage().getContent().toByteArray());
        for (PartitionOutcome o : outcomes) { // the leader's reply carries its receives' bodies
            assertTrue(OutcomeCodec.hasBodies(o), "a receive's reply without its bodies: " + o);
        }
        return outcomes;
    }

    static CommandCodec.Addressed at(PartitionId p, PartitionCommand c) {
        return new CommandCodec.Addressed(p, c);
    }

    String leader() throws IOException {
        for (Map.Entry<String, RaftServer> e : servers.entrySet()) {
            if (e.getValue().getDivision(group.getGroupId()).getInfo().isLeader()) {
                return e.getKey();
            }
        }
        return null;
    }

    void awaitSameState(List<String> replicas) {
        await().atMost(Duration.ofSeconds(120)).until(() -> replicas.stream()
                .map(r -> machines.get(r).core().describe(P) + machines.get(r).core().describe(Q)).distinct().count() == 1);
    }

    @Test
    void batchesReplicateAndSurviveTheLeadersLossAndARestart() throws Exception {
        startGroup();
        RaftClient client = client(40);
        List<PartitionOutcome> created = submit(client, List.of(
                at(P, new PartitionCommand.Configure(PartitionConfig.STANDARD_DEFAULTS)),
                at(Q, new PartitionCommand.Configure(PartitionConfig.FIFO_DEFAULTS)),
                at(P, new PartitionCommand.Send(List.of(NewMessage.of("m1", "one"), NewMessage.of("m2", "two")))),
                at(Q, new PartitionCommand.Send(List.of(NewMessage.fifo("f1", "first", "g", "d1")))),
                at(P, new PartitionCommand.Receive(1, 60, null))));
        assertEquals(5, created.size());
        assertInstanceOf(PartitionResponse.Sent.class, created.get(2).response());
        assertEquals("one", created.get(4).delivered().get(0).message().body(), "a receive reads a body sent in the same entry");

        String first = Objects.requireNonNull(leader());
        servers.remove(first).close();
        machines.remove(first);
        List<PartitionOutcome> after = submit(client, List.of(
                at(P, new PartitionCommand.Send(List.of(NewMessage.of("m3", "three")))),
                at(Q, new PartitionCommand.Receive(10, 60, null))));
        assertEquals("first", after.get(1).delivered().get(0).message().body(), "acknowledged before the loss, still there");
        awaitSameState(List.copyOf(machines.keySet()));

        start(first);
        awaitSameState(List.of("r1", "r2", "r3"));
        assertNotNull(machines.get(first).core().describe(P));
    }

    /**
     * A leader whose wall clock jumps two hours ahead: neither before it has read the reference (its stamps are bound
     * to the last stamp plus monotonic time) nor after (bound to the reference) does an in-flight message become
     * visible; the message's lease ends when the reference's time says so.
     */
    @Test
    void aLeaderWhoseClockJumpsAheadCannotEndLeasesEarly() throws Exception {
        io.sluice.common.ManualClock wall = new io.sluice.common.ManualClock(1_700_000_000_000L);
        java.util.concurrent.atomic.AtomicLong nanos = new java.util.concurrent.atomic.AtomicLong();
        Map<String, LeaderClock> clocks = new java.util.concurrent.ConcurrentHashMap<>();
        leaderClocks = id -> clocks.computeIfAbsent(id, k -> new LeaderClock(wall, nanos::get, 1_000));
        startGroup();
        RaftClient client = client(40);
        List<PartitionOutcome> first = submit(client, List.of(
                at(P, new PartitionCommand.Configure(PartitionConfig.STANDARD_DEFAULTS)),
                at(P, new PartitionCommand.Send(List.of(NewMessage.of("m1", "one")))),
                at(P, new PartitionCommand.Receive(1, 30, null))));
        assertEquals(1, first.get(2).delivered().size());

        wall.advance(Duration.ofHours(2));
        assertEquals(0, submit(client, List.of(at(P, new PartitionCommand.Receive(10, 30, null)))).get(0)
                .delivered().size(), "no reference yet: the stamp is bound to the last one, the lease holds");

        long referenceNow = wall.nowMillis() - Duration.ofHours(2).toMillis();
        clocks.values().forEach(c -> assertTrue(c.observeReference(referenceNow, nanos.get(), nanos.get())));
        LeaderClock leaderClock = clocks.get(Objects.requireNonNull(leader()));
        assertTrue(leaderClock.skewed());
        assertEquals(Duration.ofHours(2).toMillis(), leaderClock.offsetMillis());
        assertEquals(0, submit(client, List.of(at(P, new PartitionCommand.Receive(10, 30, null)))).get(0)
                .delivered().size(), "with the reference: still held");

        wall.advance(Duration.ofSeconds(32));
        nanos.addAndGet(Duration.ofSeconds(32).toNanos());
        List<DeliveredMessage> again = submit(client, List.of(
                at(P, new PartitionCommand.Receive(10, 30, null)))).get(0).delivered();
        assertEquals(1, again.size(), "the lease ends by the reference's time");
        assertEquals(2, again.get(0).delivery().receiveCount());
    }

    /**
     * A clean stop, then a restart with every clock a day ahead and no reference yet: the first stamps are bound to the
     * last stamp the store holds (its entries are skipped on replay, or purged behind a snapshot), not the raw wall
     * clock, so a lease taken before the stop still holds.
     */
    @Test
    void aGroupRestartedWithItsClocksADayAheadKeepsItsLeases() throws Exception {
        io.sluice.common.ManualClock wall = new io.sluice.common.ManualClock(1_700_000_000_000L);
        java.util.concurrent.atomic.AtomicLong nanos = new java.util.concurrent.atomic.AtomicLong();
        leaderClocks = id -> new LeaderClock(wall, nanos::get, 1_000);
        startGroup();
        List<PartitionOutcome> first = submit(client(40), List.of(
                at(P, new PartitionCommand.Configure(PartitionConfig.STANDARD_DEFAULTS)),
                at(P, new PartitionCommand.Send(List.of(NewMessage.of("m1", "one")))),
                at(P, new PartitionCommand.Receive(1, 30, null))));
        assertEquals(1, first.get(2).delivered().size());
        for (RaftServer server : servers.values()) {
            server.close();
        }
        wall.advance(Duration.ofDays(1));
        for (String id : List.copyOf(servers.keySet())) {
            start(id); // fresh clocks: no reference, no stamp in memory
        }
        assertEquals(0, submit(client(40), List.of(at(P, new PartitionCommand.Receive(10, 30, null)))).get(0)
                .delivered().size(), "the stamp is bound to the store's last one: the lease holds");
    }

    static List<PartitionOutcome> submitEntry(RaftClient client, byte[] entry) throws IOException {
        RaftClientReply reply = client.io().send(Message.valueOf(ByteString.copyFrom(entry)));
        if (!reply.isSuccess()) {
            throw new IOException("not committed", reply.getException());
        }
        return OutcomeCodec.decode(reply.getMessage().getContent().toByteArray());
    }

    /**
     * An entry the log holds twice is applied once. Here the same entry (same writer, same number) goes through two
     * clients, so Ratis' retry cache, which knows calls by client, cannot tell; in the field, it is a call retried to
     * a replica that restarted from a snapshot, whose retry cache knows nothing the snapshot covers. The second copy
     * is answered InternalError and stores nothing, on every replica alike; the writer's next entry applies; and
     * after every replica restarted (a cold retry cache everywhere) the first entry is still refused.
     */
    @Test
    void anEntryTheLogHoldsTwiceIsAppliedOnce() throws Exception {
        startGroup();
        RaftClient one = client(40);
        RaftClient other = client(40);
        submit(one, List.of(at(P, new PartitionCommand.Configure(PartitionConfig.STANDARD_DEFAULTS))));
        long writer = 0x5EED;
        byte[] first = CommandCodec.join(writer, 1, List.of(CommandCodec.encodeOne(
                at(P, new PartitionCommand.Send(List.of(NewMessage.of("m1", "once")))))));

        assertInstanceOf(PartitionResponse.Sent.class, submitEntry(one, first).get(0).response());
        PartitionResponse again = submitEntry(other, first).get(0).response();
        assertInstanceOf(PartitionResponse.Rejected.class, again, "the same entry applied twice: " + again);
        assertEquals(io.sluice.common.SqsError.INTERNAL_FAILURE, ((PartitionResponse.Rejected) again).failure().error());
        byte[] second = CommandCodec.join(writer, 2, List.of(CommandCodec.encodeOne(
                at(P, new PartitionCommand.Send(List.of(NewMessage.of("m2", "next")))))));
        assertInstanceOf(PartitionResponse.Sent.class, submitEntry(other, second).get(0).response());
        awaitSameState(List.of("r1", "r2", "r3"));

        for (RaftServer server : servers.values()) {
            server.close();
        }
        for (String id : List.copyOf(servers.keySet())) {
            start(id);
        }
        assertInstanceOf(PartitionResponse.Rejected.class, submitEntry(client(40), first).get(0).response(),
                "the table survives a restart of every replica");
        List<String> bodies = submit(client(40), List.of(at(P, new PartitionCommand.Receive(10, 60, null)))).get(0)
                .delivered().stream().map(d -> d.message().body()).sorted().toList();
        assertEquals(List.of("next", "once"), bodies, "each message stored once");
        awaitSameState(List.of("r1", "r2", "r3"));
    }

    /**
     * A command that throws while applied (a bug: the engine answers domain errors as values) is answered InternalError
     * on every replica alike, the rest of its entry applies, and the group goes on; a storage failure stops the
     * process instead (recorded here rather than halting the test's JVM).
     */
    @Test
    void aCommandThatCannotBeAppliedIsAnsweredAndAStorageFailureStopsTheReplica() throws Exception {
        startGroup();
        java.util.List<Throwable> halted = new java.util.concurrent.CopyOnWriteArrayList<>();
        machines.values().forEach(m -> {
            m.core().applyFault(a -> {
                if (a.command() instanceof PartitionCommand.Send s && s.messages().get(0).messageId().equals("bug")) {
                    throw new IllegalStateException("a deterministic bug");
                }
                if (a.command() instanceof PartitionCommand.Send s && s.messages().get(0).messageId().equals("disk")) {
                    throw new io.sluice.backend.storage.StorageException("disk gone", new java.io.IOException());
                }
            });
            m.onStorageFailure(halted::add);
        });
        RaftClient client = client(40);
        List<PartitionOutcome> outcomes = submit(client, List.of(
                at(P, new PartitionCommand.Configure(PartitionConfig.STANDARD_DEFAULTS)),
                at(Q, new PartitionCommand.Configure(PartitionConfig.STANDARD_DEFAULTS)),
                at(P, new PartitionCommand.Send(List.of(NewMessage.of("ok1", "before")))),
                at(P, new PartitionCommand.Send(List.of(NewMessage.of("bug", "throws")))),
                at(P, new PartitionCommand.Send(List.of(NewMessage.of("ok2", "after, same partition")))),
                at(Q, new PartitionCommand.Send(List.of(NewMessage.of("ok3", "other partition"))))));
        assertInstanceOf(PartitionResponse.Sent.class, outcomes.get(2).response());
        PartitionResponse.Rejected bug = assertInstanceOf(PartitionResponse.Rejected.class, outcomes.get(3).response());
        assertEquals(io.sluice.common.SqsError.INTERNAL_FAILURE, bug.failure().error());
        assertInstanceOf(PartitionResponse.Rejected.class, outcomes.get(4).response(), "the partition is reloaded first");
        assertInstanceOf(PartitionResponse.Sent.class, outcomes.get(5).response());

        submit(client, List.of(at(P, new PartitionCommand.Send(List.of(NewMessage.of("ok4", "next entry"))))));
        List<DeliveredMessage> got = submit(client, List.of(
                at(P, new PartitionCommand.Receive(10, 60, null)))).get(0).delivered();
        assertEquals(java.util.Set.of("before", "next entry"),
                got.stream().map(d -> d.message().body()).collect(java.util.stream.Collectors.toSet()));
        awaitSameState(List.of("r1", "r2", "r3"));
        assertEquals(List.of(), halted);

        RaftClient impatient = client(2);
        assertThrows(Exception.class, () -> submit(impatient, List.of(at(P, new PartitionCommand.Send(
                List.of(NewMessage.of("disk", "storage fails")))))));
        await().atMost(Duration.ofSeconds(30)).until(() -> !halted.isEmpty());
    }

    @Test
    void withoutAMajorityNothingIsAcknowledged() throws Exception {
        startGroup();
        RaftClient client = client(40);
        submit(client, List.of(at(P, new PartitionCommand.Configure(PartitionConfig.STANDARD_DEFAULTS))));
        String leader = Objects.requireNonNull(leader());
        String follower = servers.keySet().stream().filter(id -> !id.equals(leader)).findFirst().orElseThrow();
        servers.remove(follower).close();
        machines.remove(follower);
        submit(client, List.of(at(P, new PartitionCommand.Send(List.of(NewMessage.of("ok", "one secondary down"))))));

        String other = servers.keySet().stream().filter(id -> !id.equals(leader)).findFirst().orElseThrow();
        servers.remove(other).close();
        machines.remove(other);
        RaftClient impatient = client(3);
        assertThrows(Exception.class, () -> submit(impatient, List.of(at(P, new PartitionCommand.Send(
                List.of(NewMessage.of("no", "both secondaries down")))))), "no majority: never acknowledged");
    }

    @Test
    void concurrentCommandsShareEntriesAndAllAreAcknowledged() throws Exception {
        startGroup();
        try (ShardClient shard = new ShardClient(group, 512, 2, replies)) {
            shard.submit(P, new PartitionCommand.Configure(PartitionConfig.STANDARD_DEFAULTS)).get(30, TimeUnit.SECONDS);
            List<java.util.concurrent.CompletableFuture<PartitionOutcome>> sends = new ArrayList<>();
            for (int i = 0; i < 2_000; i++) {
                sends.add(shard.submit(P, new PartitionCommand.Send(List.of(NewMessage.of("c" + i, "body " + i)))));
            }
            java.util.concurrent.CompletableFuture.allOf(sends.toArray(java.util.concurrent.CompletableFuture[]::new))
                    .get(60, TimeUnit.SECONDS);
            long[] stats = shard.stats();
            System.out.printf("group commit: %d commands in %d Raft entries%n", stats[1], stats[0]);
            org.junit.jupiter.api.Assertions.assertTrue(stats[0] * 4 < stats[1], "commands were batched: " + stats[0]
                    + " entries for " + stats[1] + " commands");
            int received = 0;
            for (int round = 0; round < 400 && received < 2_000; round++) {
                received += shard.submit(P, new PartitionCommand.Receive(10, 600, null)).get(30, TimeUnit.SECONDS)
                        .delivered().size();
            }
            assertEquals(2_000, received, "every acknowledged send is there");
        }
    }

    /**
     * Ratis refuses a log entry over its appender buffer limit, and with it every command batched in it; the client
     * therefore closes a batch before it would pass the limit. Twelve 1 MiB sends queued behind one in flight: all
     * are stored intact, several to an entry; the same with the cap lifted fails (proof that the cap is needed).
     */
    @Test
    void concurrentOneMebibyteSendsShareEntriesUnderRatisLimit() throws Exception {
        startGroup();
        String mebibyte = "x".repeat(1024 * 1024 - 16);
        try (ShardClient shard = new ShardClient(group, 512, 1, replies)) {
            shard.submit(P, new PartitionCommand.Configure(PartitionConfig.STANDARD_DEFAULTS))
                    .get(30, TimeUnit.SECONDS);
            List<java.util.concurrent.CompletableFuture<PartitionOutcome>> sends = new ArrayList<>();
            for (int i = 0; i < 12; i++) {
                sends.add(shard.submit(P, new PartitionCommand.Send(List.of(NewMessage.of("big" + i,
                        String.format("%02d", i) + mebibyte)))));
            }
            for (var f : sends) {
                assertInstanceOf(PartitionResponse.Sent.class, f.get(60, TimeUnit.SECONDS).response());
            }
            long[] stats = shard.stats();
            assertTrue(stats[0] < stats[1], "several sends shared an entry: " + stats[0] + " entries for " + stats[1]);
            java.util.Set<String> bodies = new java.util.TreeSet<>();
            for (int round = 0; round < 20 && bodies.size() < 12; round++) {
                for (DeliveredMessage d : shard.submit(P, new PartitionCommand.Receive(2, 600, null))
                        .get(30, TimeUnit.SECONDS).delivered()) {
                    assertEquals(mebibyte, d.message().body().substring(2), "intact");
                    bodies.add(d.message().body().substring(0, 2));
                }
            }
            assertEquals(12, bodies.size(), "every send came back");
            // a receive's reply carries the body (read from the leader's store as the reply is sent)
            shard.submit(P, new PartitionCommand.Send(List.of(NewMessage.of("last", mebibyte)))).get(30, TimeUnit.SECONDS);
            List<PartitionOutcome> raw = submit(client(3), List.of(at(P, new PartitionCommand.Receive(10, 600, null))));
            assertEquals(List.of(mebibyte), raw.get(0).delivered().stream().map(d -> d.message().body()).toList());
            // one entry with three receives of 3 MiB each: the reply reads bodies until its 4 MiB budget is spent
            // (the first two receives), the third carries leases only and its bodies are read separately
            for (int i = 0; i < 9; i++) {
                shard.submit(P, new PartitionCommand.Send(List.of(NewMessage.of("nine" + i, mebibyte))))
                        .get(30, TimeUnit.SECONDS);
            }
            RaftClientReply three = client(3).io().send(Message.valueOf(ByteString.copyFrom(CommandCodec.encode(List.of(
                    at(P, new PartitionCommand.Receive(3, 600, null)), at(P, new PartitionCommand.Receive(3, 600, null)),
                    at(P, new PartitionCommand.Receive(3, 600, null)))))));
            assertTrue(three.isSuccess());
            List<PartitionOutcome> outcomes = OutcomeCodec.decode(three.getMessage().getContent().toByteArray());
            assertEquals(List.of(true, true, false), outcomes.stream().map(OutcomeCodec::hasBodies).toList());
            assertEquals(3, ((PartitionResponse.Received) outcomes.get(2).response()).deliveries().size());
            assertTrue(three.getMessage().getContent().size() < 7 * 1024 * 1024, "about the budget, not 9 MiB: "
                    + three.getMessage().getContent().size());
        }
        // what the cap prevents: five 1 MiB sends in one entry pass Ratis' limit and are refused (an uncapped client
        // only batches them so when they queue behind an entry in flight, a race: the entry is built here directly)
        List<CommandCodec.Addressed> five = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            five.add(at(P, new PartitionCommand.Send(List.of(NewMessage.of("over" + i, mebibyte)))));
        }
        assertThrows(Exception.class, () -> {
            RaftClientReply reply = client(3).io().send(Message.valueOf(ByteString.copyFrom(CommandCodec.encode(five))));
            if (!reply.isSuccess()) {
                throw reply.getException();
            }
        });
    }

    /**
     * In a cluster the shard's leader sweeps retention: it finds the partitions an Expire would change (here after
     * the retention period passed on the leader's clock), and the sweep, a logged command, expires them on every
     * replica.
     */
    @Test
    void theLeaderFindsThePartitionsDueForASweepAndTheSweepExpiresThemEverywhere() throws Exception {
        io.sluice.common.ManualClock manual = new io.sluice.common.ManualClock(1_000_000);
        // time passes (the manual clock's) on the wall and monotonic clocks alike: a sound clock, not a jump
        leaderClocks = id -> new LeaderClock(manual, () -> manual.nowMillis() * 1_000_000, 1_000);
        startGroup();
        RaftClient client = client(40);
        submit(client, List.of(at(P, new PartitionCommand.Configure(PartitionConfig.STANDARD_DEFAULTS
                .withRetentionSeconds(60))), at(Q, new PartitionCommand.Configure(PartitionConfig.STANDARD_DEFAULTS))));
        submit(client, List.of(at(P, new PartitionCommand.Send(List.of(NewMessage.of("old", "expires")))),
                at(Q, new PartitionCommand.Send(List.of(NewMessage.of("kept", "retention of 4 days"))))));
        String leader = await().atMost(Duration.ofSeconds(120)).until(this::leader, Objects::nonNull);
        assertEquals(List.of(), machines.get(leader).core().partitionsToSweep(manual.nowMillis()), "nothing due yet");
        manual.advanceMillis(61_000);
        assertEquals(List.of(P), machines.get(leader).core().partitionsToSweep(manual.nowMillis()));
        submit(client, List.of(at(P, new PartitionCommand.Expire(1000))));
        awaitSameState(List.copyOf(servers.keySet()));
        assertEquals(List.of(), machines.get(leader).core().partitionsToSweep(manual.nowMillis()), "swept");
        assertEquals(0, submit(client, List.of(at(P, new PartitionCommand.Receive(10, 30, null)))).get(0)
                .delivered().size(), "the expired message is gone");
        assertEquals(1, submit(client, List.of(at(Q, new PartitionCommand.Receive(10, 30, null)))).get(0)
                .delivered().size(), "the other partition kept its message");
    }

    /**
     * Snapshots are RocksDB checkpoints and the log is purged up to them: a replica that was down while the log moved
     * past it catches up from the leader's snapshot (installed, then the log), and every replica restarts from its
     * snapshot plus log with nothing lost.
     */
    @Test
    void aReplicaBehindThePurgedLogCatchesUpFromASnapshot() throws Exception {
        snapshotEvery = 20;
        startGroup();
        RaftClient client = client(40);
        submit(client, List.of(at(P, new PartitionCommand.Configure(PartitionConfig.STANDARD_DEFAULTS))));
        String leader = await().atMost(Duration.ofSeconds(120)).until(this::leader, Objects::nonNull);
        String down = servers.keySet().stream().filter(id -> !id.equals(leader)).findFirst().orElseThrow();
        servers.remove(down).close();
        machines.remove(down);
        for (int i = 0; i < 150; i++) {
            submit(client, List.of(at(P, new PartitionCommand.Send(List.of(NewMessage.of("s" + i,
                    i + "x".repeat(1_000)))))));
        }
        assertNotNull(machines.get(leader).getLatestSnapshot(), "the leader took snapshots");
        long firstIndex = await().atMost(Duration.ofSeconds(120)).until(() -> servers.get(leader)
                .getDivision(group.getGroupId()).getRaftLog().getStartIndex(), i -> i > 100);

        start(down);
        awaitSameState(List.copyOf(servers.keySet()));
        assertNotNull(machines.get(down).getLatestSnapshot(), "the lagging replica received the leader's snapshot");
        System.out.printf("replica %s caught up from a snapshot (leader's log starts at %d)%n", down, firstIndex);

        // Its store lost (as after a crash in the middle of an install): its log starts after the snapshot, so the
        // store must be rebuilt from the snapshot on start, or the messages before it would be gone on this replica.
        servers.remove(down).close();
        machines.remove(down);
        ShardSnapshots.deleteRecursively(dir.resolve(down).resolve("store"));
        start(down);
        awaitSameState(List.copyOf(servers.keySet()));

        client.close();
        clients.remove(client);
        for (String id : List.copyOf(servers.keySet())) {
            servers.remove(id).close();
            machines.remove(id);
        }
        for (RaftPeer p : group.getPeers()) {
            start(p.getId().toString());
        }
        RaftClient after = client(40);
        int received = 0;
        for (int round = 0; round < 100 && received < 150; round++) {
            received += submit(after, List.of(at(P, new PartitionCommand.Receive(10, 600, null)))).get(0)
                    .delivered().size();
        }
        assertEquals(150, received, "every acknowledged send is there after a full restart from snapshots");
    }

    /**
     * Ratis completes its futures under the client's sliding-window lock; a continuation that wrote to another shard
     * from there deadlocked two frontends' shard clients under load. Outcomes must arrive on the given executor.
     */
    @Test
    void outcomesAreCompletedOnTheGivenExecutorNeverOnARatisThread() throws Exception {
        startGroup();
        try (ShardClient shard = new ShardClient(group, 512, 2, replies)) {
            List<java.util.concurrent.CompletableFuture<String>> threads = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                threads.add(shard.submit(P, new PartitionCommand.Configure(PartitionConfig.STANDARD_DEFAULTS))
                        .thenApply(o -> Thread.currentThread().getName()));
            }
            for (java.util.concurrent.CompletableFuture<String> t : threads) {
                String name = t.get(30, TimeUnit.SECONDS);
                org.junit.jupiter.api.Assertions.assertTrue(name.startsWith("test-replies"), "completed on " + name);
            }
        }
    }
}
