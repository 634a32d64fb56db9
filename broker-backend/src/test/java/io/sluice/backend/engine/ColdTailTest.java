package io.sluice.backend.engine;

import io.sluice.partition.DeadLetterReason;
import io.sluice.partition.DeliveredMessage;
import io.sluice.partition.Effect;
import io.sluice.partition.NewMessage;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionConfig;
import io.sluice.partition.PartitionResponse;
import io.sluice.partition.QueueCounts;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A backlog beyond the index's limit waits on disk only (the cold tail, {@link ColdTail}) and comes back in send
 * order; counts, retention, purge, reopen and hand-offs see it as if it were indexed.
 */
class ColdTailTest {
    private static final int HOT = 4;

    @TempDir
    Path dir;

    @Test
    void aBacklogPastTheLimitIsCountedButNotIndexedAndIsDeliveredInSendOrder() {
        try (EngineFixture q = new EngineFixture(dir, PartitionConfig.STANDARD_DEFAULTS, HOT)) {
            for (int i = 0; i < 20; i++) {
                q.send("m" + i);
            }
            assertEquals(20, q.counts().visible());
            assertEquals(HOT, q.engine.state().index.size(), "only the limit is indexed");
            assertEquals(16, coldKeys(q), "the rest is in the cold range");

            List<String> bodies = new ArrayList<>();
            for (int round = 0; round < 10 && bodies.size() < 20; round++) {
                for (DeliveredMessage d : q.receive(3, 60)) {
                    bodies.add(d.message().body());
                    q.delete(d.delivery().receiptHandle());
                }
                assertTrue(q.engine.state().index.size() <= HOT + 2, "paged a page (2) at a time");
            }
            assertEquals(IntStream.range(0, 20).mapToObj(i -> "m" + i).toList(), bodies);
            assertEquals(new QueueCounts(0, 0, 0, 0, -1), q.counts());
            assertEquals(0, coldKeys(q));
        }
    }

    @Test
    void aPeekShowsVisibleMessagesOnDiskInDeliveryOrder() {
        try (EngineFixture q = new EngineFixture(dir, PartitionConfig.STANDARD_DEFAULTS, HOT)) {
            List<Long> seqs = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                seqs.add(q.send(NewMessage.of("id" + i, "m" + i)).seq());
                q.advanceSeconds(0.001);
            }
            assertEquals(seqs.subList(0, 6), peekedSeqs(q, 6), "the index's four, then the oldest on disk");
            q.receive(HOT, 60); // the index's messages are in flight: every visible one is on disk
            assertEquals(HOT, q.engine.state().index.size());
            assertEquals(seqs.subList(HOT, 10), peekedSeqs(q, 10));
            q.clock.advanceMillis(60_000); // back, visible since their leases ended: after the ones on disk
            List<Long> order = new ArrayList<>(seqs.subList(HOT, 10));
            order.addAll(seqs.subList(0, HOT));
            assertEquals(order, peekedSeqs(q, 10));
            assertEquals(seqs.subList(HOT, HOT + 3), peekedSeqs(q, 3));
            assertEquals(order.subList(0, 3), q.receive(3, 60).stream().map(d -> d.delivery().receiptHandle().seq())
                    .toList(), "a receive takes what the peek showed first");
        }
    }

    private static List<Long> peekedSeqs(EngineFixture q, int max) {
        return q.engine.state().peek(q.clock.nowMillis(), max).stream().map(m -> m[0]).toList();
    }

    @Test
    void reopeningRestoresTheColdTailWithoutReadingIt() {
        try (EngineFixture q = new EngineFixture(dir, PartitionConfig.STANDARD_DEFAULTS, HOT)) {
            for (int i = 0; i < 12; i++) {
                q.send("m" + i);
            }
            q.receive(5, 60); // four indexed ones and, paged in, the first cold one
            String before = q.engine.state().describe();
            q.reopen();
            assertEquals(before, q.engine.state().describe());
            assertEquals(new QueueCounts(7, 5, 0, 0, EngineFixture.START), q.counts());
            assertEquals(List.of("m5", "m6", "m7"), q.bodies(q.receive(3, 60)));
        }
    }

    @Test
    void aDelayedSendPastTheLimitWaitsOnDiskAndComesInDeliveryOrder() {
        try (EngineFixture q = new EngineFixture(dir, PartitionConfig.STANDARD_DEFAULTS, HOT)) {
            for (int i = 0; i < 6; i++) {
                q.send("m" + i);
            }
            q.send(NewMessage.of("late", "late").withDelaySeconds(5));
            assertEquals(HOT, q.engine.state().index.size(), "the delayed message waits on disk too");
            assertEquals(3, q.engine.state().coldCount());
            assertEquals(new QueueCounts(6, 0, 1, 0, EngineFixture.START), q.counts());
            assertEquals(EngineFixture.START + 5_000, q.engine.state().nextDeadlineMillis(), "its deadline is known");
            q.clock.advanceMillis(5_000);
            List<String> bodies = new ArrayList<>();
            for (int round = 0; round < 5; round++) {
                q.receive(10, 60).forEach(d -> bodies.add(d.message().body()));
            }
            assertEquals(List.of("m0", "m1", "m2", "m3", "m4", "m5", "late"), bodies, "every message once, in order");
        }
    }

    @Test
    void sendsAndAReceiveInOneEntrySeeTheColdMessagesNotYetWritten() {
        try (EngineFixture q = new EngineFixture(dir, PartitionConfig.STANDARD_DEFAULTS, HOT)) {
            List<Mutation> batch = new ArrayList<>();
            long now = q.clock.nowMillis();
            for (int i = 0; i < 16; i++) { // one entry, as a shard applies it: written once, at the end
                q.engine.applyBuffered(new PartitionCommand.Send(List.of(NewMessage.of("m" + i, "m" + i))), now, batch);
            }
            PartitionResponse r = q.engine.applyBuffered(new PartitionCommand.Receive(10, 60, null), now, batch)
                    .response();
            assertEquals(10, ((PartitionResponse.Received) r).deliveries().size(),
                    "the four indexed and six cold ones not yet in the store");
            q.store.write(batch, ++q.logIndex);
            q.engine.written();
            assertEquals(6, q.counts().visible());
            assertEquals(6, coldKeys(q), "taken ones left the cold range, the others are there");
            assertEquals(IntStream.range(10, 16).mapToObj(i -> "m" + i).toList(), q.bodies(q.receive(10, 60)));
        }
    }

    @Test
    void olderColdMessagesComeBeforeNewerIndexedOnes() {
        try (EngineFixture q = new EngineFixture(dir, PartitionConfig.STANDARD_DEFAULTS, HOT)) {
            for (int i = 0; i < 4; i++) {
                q.send("early" + i);
            }
            q.receive(4, 5); // leased for 5 s: when they come back they are newer than the cold ones
            q.clock.advanceMillis(1_000);
            for (int i = 0; i < 4; i++) {
                q.send("cold" + i);
            }
            q.clock.advanceMillis(10_000);
            assertEquals(List.of("cold0", "cold1", "cold2", "cold3", "early0", "early1"), q.bodies(q.receive(6, 60)),
                    "visible-since order across the index and the cold tail, as if all were indexed");
        }
    }

    @Test
    void purgeDropsTheColdTail() {
        try (EngineFixture q = new EngineFixture(dir, PartitionConfig.STANDARD_DEFAULTS, HOT)) {
            for (int i = 0; i < 10; i++) {
                q.send("m" + i);
            }
            assertEquals(new PartitionResponse.Count(10), q.apply(new PartitionCommand.Purge()).response());
            assertEquals(10, q.engine.state().totals().purged());
            assertEquals(0, coldKeys(q));
            q.reopen();
            assertEquals(new QueueCounts(0, 0, 0, 0, -1), q.counts());
            q.send("after");
            assertEquals(List.of("after"), q.bodies(q.receive(10, 60)));
        }
    }

    @Test
    void coldMessagesExpireAtTheEndOfRetentionAndCountInTheOldestAge() {
        PartitionConfig config = PartitionConfig.STANDARD_DEFAULTS.withRetentionSeconds(60);
        try (EngineFixture q = new EngineFixture(dir, config, HOT)) {
            for (int i = 0; i < 4; i++) {
                q.send("old" + i);
            }
            q.receive(4, 600); // the indexed ones in flight: what is visible is cold
            q.clock.advanceMillis(10_000);
            for (int i = 0; i < 6; i++) {
                q.send("m" + i);
            }
            assertEquals(EngineFixture.START, q.counts().oldestRetentionBaseMillis());
            q.clock.advanceMillis(55_000); // the in-flight ones are past retention, the cold ones not yet
            assertTrue(q.engine.state().needsSweep(q.clock.nowMillis()));
            q.apply(new PartitionCommand.Expire(1000));
            assertEquals(EngineFixture.START + 10_000, q.counts().oldestRetentionBaseMillis(), "the cold tail's oldest");
            assertEquals(6, q.counts().visible());
            q.clock.advanceMillis(10_000);
            assertTrue(q.engine.state().needsSweep(q.clock.nowMillis()), "an expired cold message needs a sweep");
            for (int i = 0; i < 5 && q.engine.state().needsSweep(q.clock.nowMillis()); i++) {
                q.apply(new PartitionCommand.Expire(1000));
            }
            assertEquals(new QueueCounts(0, 0, 0, 0, -1), q.counts());
            assertEquals(10, q.engine.state().totals().expired());
            assertEquals(0, coldKeys(q));
        }
    }

    @Test
    void aReceiveOverABacklogPastRetentionExpiresAPageOfItAtATime() {
        for (PartitionConfig base : List.of(PartitionConfig.STANDARD_DEFAULTS, FIFO)) {
            try (EngineFixture q = new EngineFixture(dir.resolve(base.fifo() ? "fifo" : "standard"),
                    base.withRetentionSeconds(60), HOT)) {
                int n = ReceiveCommands.MAX_SET_ASIDE * 2 + 500;
                for (int i = 0; i < n; i++) {
                    if (base.fifo()) {
                        q.sendFifo("g" + i % 7, "m" + i);
                    } else {
                        q.send("m" + i);
                    }
                }
                q.clock.advanceMillis(61_000);
                for (int round = 1; round <= 3; round++) {
                    assertEquals(List.of(), q.receive(10, 60));
                    assertEquals(Math.min(n, round * ReceiveCommands.MAX_SET_ASIDE), q.engine.state().totals().expired(),
                            "a receive expires at most what it may set aside");
                    assertTrue(q.engine.state().index.size() <= HOT + 10, "the rest stays on disk");
                }
                q.send(base.fifo() ? NewMessage.fifo("x", "fresh", "g", "x") : NewMessage.of("x", "fresh"));
                assertEquals(List.of("fresh"), q.bodies(q.receive(10, 60)));
            }
        }
    }

    @Test
    void aSweepOverManyFifoGroupsBringsInOnlyWhatItExpires() {
        try (EngineFixture q = new EngineFixture(dir, FIFO.withRetentionSeconds(60), HOT)) {
            for (int i = 0; i < HOT; i++) {
                q.sendFifo("x", "x" + i); // fills the index
            }
            q.clock.advanceMillis(1_000);
            for (int g = 0; g < 20; g++) {
                q.sendFifo("g" + g, "first"); // each group cold entirely
            }
            for (DeliveredMessage d : q.receive(HOT, 60)) {
                q.delete(d.delivery().receiptHandle());
            }
            assertEquals(0, q.engine.state().index.size());
            q.clock.advanceMillis(29_000);
            for (int i = 0; i < 5; i++) {
                for (int g = 0; g < 20; g++) {
                    q.sendFifo("g" + g, "later"); // behind each group's first, on disk
                }
            }
            q.clock.advanceMillis(31_000); // every group's first message is past retention, the rest not
            assertEquals(new PartitionResponse.Count(20), q.apply(new PartitionCommand.Expire(1000)).response());
            assertEquals(0, q.engine.state().index.size(), "a sweep keeps in memory nothing it did not expire");
            assertEquals(100, q.counts().visible());
            assertEquals(20, keys(q, PartitionKeys.COLD_HEAD), "every group cold entirely again, from its second");
            List<String> bodies = new ArrayList<>();
            for (int round = 0; round < 30 && bodies.size() < 100; round++) {
                for (DeliveredMessage d : q.receive(10, 60)) {
                    bodies.add(d.message().body());
                    q.delete(d.delivery().receiptHandle());
                }
            }
            assertEquals(java.util.Collections.nCopies(100, "later"), bodies);
        }
    }

    @Test
    void theBacklogLimitCountsColdMessages() {
        try (EngineFixture q = new EngineFixture(dir, PartitionConfig.STANDARD_DEFAULTS.withMaxBacklog(6), HOT)) {
            for (int i = 0; i < 6; i++) {
                q.send("m" + i);
            }
            PartitionResponse refused = q.apply(new PartitionCommand.Send(List.of(NewMessage.of("x", "x")))).response();
            assertTrue(refused instanceof PartitionResponse.Rejected, "refused: " + refused);
        }
    }

    @Test
    void retiringWithAHandOffHandsOffTheColdMessagesToo() {
        try (EngineFixture q = new EngineFixture(dir, PartitionConfig.STANDARD_DEFAULTS.withMaxReceiveCount(3), HOT)) {
            for (int i = 0; i < 9; i++) {
                q.send("m" + i);
            }
            assertEquals(new PartitionResponse.Count(9), q.apply(new PartitionCommand.Retire(true)).response());
            assertEquals(HOT, q.deadLetterEffects().size(), "the indexed ones at once");
            assertTrue(q.engine.state().needsSweep(q.clock.nowMillis()), "the cold ones are swept");
            for (int i = 0; i < 5 && q.engine.state().needsSweep(q.clock.nowMillis()); i++) {
                q.apply(new PartitionCommand.Expire(1000)); // a page (2) per sweep
            }
            assertEquals(9, q.deadLetterEffects().size());
            assertEquals(9, q.deadLetterEffects().stream().map(Effect.DeadLetter::seq).distinct().count());
            assertEquals(new QueueCounts(0, 0, 0, 9, -1, EngineFixture.START), q.counts(), "all pending hand-offs");
            assertTrue(q.deadLetterEffects().stream().allMatch(d -> d.reason() == DeadLetterReason.SOURCE_QUEUE_DELETED));
            assertEquals(0, coldKeys(q));
        }
    }

    // ---- FIFO: a group's messages in memory first, its cold ones after; groups cold entirely by their heads ----

    private static final PartitionConfig FIFO = PartitionConfig.FIFO_DEFAULTS;

    @Test
    void aFifoBacklogPastTheLimitWaitsOnDiskAndComesBackInGroupOrder() {
        try (EngineFixture q = new EngineFixture(dir, FIFO, HOT)) {
            for (int i = 0; i < 30; i++) {
                q.sendFifo("g" + i % 3, "g" + i % 3 + "-" + i / 3);
            }
            assertEquals(30, q.counts().visible());
            assertEquals(HOT, q.engine.state().index.size(), "only the limit is indexed");
            assertEquals(26, coldKeys(q));
            assertEquals(26, keys(q, PartitionKeys.COLD_MEMBER), "each cold message under its group");
            assertEquals(0, keys(q, PartitionKeys.COLD_HEAD), "every group has its head in memory");

            java.util.Map<String, List<String>> byGroup = new java.util.TreeMap<>();
            for (int round = 0; round < 20; round++) {
                List<DeliveredMessage> got = q.receive(10, 60);
                for (DeliveredMessage d : got) {
                    byGroup.computeIfAbsent(d.message().groupId(), g -> new ArrayList<>()).add(d.message().body());
                    q.delete(d.delivery().receiptHandle());
                }
                assertTrue(q.engine.state().index.size() <= HOT + 10, "paged in only what a receive takes");
            }
            for (int g = 0; g < 3; g++) {
                int group = g;
                assertEquals(IntStream.range(0, 10).mapToObj(i -> "g" + group + "-" + i).toList(), byGroup.get("g" + g),
                        "group g" + g + " in send order, every message once");
            }
            assertEquals(new QueueCounts(0, 0, 0, 0, -1), q.counts());
            assertEquals(0, coldKeys(q) + keys(q, PartitionKeys.COLD_MEMBER) + keys(q, PartitionKeys.COLD_HEAD));
        }
    }

    @Test
    void aFifoGroupWithNothingLeftInMemoryGoesOnFromDiskAfterARestart() {
        try (EngineFixture q = new EngineFixture(dir, FIFO, 2)) {
            for (int i = 0; i < 5; i++) {
                q.sendFifo("a", "a" + i);
            }
            List<DeliveredMessage> first = q.receive(2, 60); // exactly the two in memory: nothing paged in
            assertEquals(List.of("a0", "a1"), q.bodies(first));
            assertEquals(List.of(), q.receive(10, 60), "the group is blocked while they are in flight");
            first.forEach(d -> q.delete(d.delivery().receiptHandle()));
            assertEquals(0, q.engine.state().index.size());
            assertEquals(1, keys(q, PartitionKeys.COLD_HEAD), "the group is cold entirely: its head is recorded");
            q.reopen();
            assertEquals(new QueueCounts(3, 0, 0, 0, EngineFixture.START), q.counts());
            assertEquals(List.of("a2", "a3", "a4"), q.bodies(q.receive(10, 60)));
            assertEquals(0, keys(q, PartitionKeys.COLD_HEAD) + keys(q, PartitionKeys.COLD_MEMBER));
        }
    }

    @Test
    void aFifoQueuesNewDelayAppliesToItsColdMessagesToo() {
        try (EngineFixture q = new EngineFixture(dir, FIFO, 2)) {
            for (int i = 0; i < 6; i++) {
                q.sendFifo("a", "a" + i);
            }
            q.apply(new PartitionCommand.Configure(FIFO.withDelaySeconds(5)));
            assertEquals(4, q.engine.state().coldCount(), "a FIFO delay is retroactive, and the backlog stays on disk");
            QueueCounts counts = q.counts(); // the messages on disk count as visible until they are read
            assertEquals(6, counts.visible() + counts.delayed());
            assertEquals(List.of(), q.receive(10, 60));
            assertEquals(EngineFixture.START + 5_000, q.engine.state().nextDeadlineMillis(),
                    "parked polls are woken when the delay has passed");
            q.clock.advanceMillis(5_000);
            assertEquals(List.of("a0", "a1", "a2", "a3", "a4", "a5"), q.bodies(q.receive(10, 60)));
        }
    }

    /**
     * Parked polls on a FIFO queue whose groups wait on disk behind a delay: the partition's next deadline is when the
     * first of their heads comes due, and a receive that leaves a cold group's visible head behind says messages are
     * available (no message in memory became visible to say it).
     */
    @Test
    void coldFifoHeadsComingDueWakeParkedPolls() {
        try (EngineFixture q = new EngineFixture(dir, FIFO.withDelaySeconds(5), 1)) {
            q.sendFifo("a", "a0"); // indexed
            q.advanceSeconds(5);
            assertEquals(List.of("a0"), q.bodies(q.receive(1, 60))); // in flight for a minute
            q.sendFifo("b", "b0"); // the index is full: groups b and c on disk entirely
            q.sendFifo("c", "c0");
            assertEquals(2, q.engine.state().coldCount());
            assertEquals(List.of(), q.receive(10, 60));
            assertEquals(q.clock.nowMillis() + 5_000, q.engine.state().nextDeadlineMillis(), "when b0 comes due");
            q.advanceSeconds(5);
            q.effects.clear();
            assertEquals(List.of("b0"), q.bodies(q.receive(1, 60)));
            assertTrue(q.effects.stream().anyMatch(Effect.MessagesAvailable.class::isInstance),
                    "c0 is still there for another poll: " + q.effects);
        }
    }

    /**
     * A store from a node that keyed cold FIFO members by seq ({@code f len group seq}): the first open by this one
     * rewrites them in producer order, and the backlog comes out as it would have.
     */
    @Test
    void coldMembersKeyedBySeqAreRewrittenAtOpen() {
        try (EngineFixture q = new EngineFixture(dir, FIFO, 2)) {
            for (int i = 0; i < 6; i++) {
                q.sendFifo(i < 4 ? "a" : "b", (i < 4 ? "a" : "b") + i); // a0, a1 in memory; a2, a3, b4, b5 cold
            }
            PartitionKeys keys = q.engine.state().keys();
            List<Mutation> legacy = new java.util.ArrayList<>();
            q.store.scan(keys.typePrefix(PartitionKeys.COLD_MEMBER), keys.typeEnd(PartitionKeys.COLD_MEMBER), (k, v) -> {
                byte[] group = PartitionKeys.memberGroupOf(k).getBytes(java.nio.charset.StandardCharsets.UTF_8);
                legacy.add(new Mutation.Delete(k));
                legacy.add(new Mutation.Put(java.nio.ByteBuffer.allocate(PartitionKeys.PREFIX_LENGTH + 1 + 2 + group.length
                        + 8).put(keys.typePrefix(PartitionKeys.COLD_MEMBER)).putShort((short) group.length).put(group)
                        .putLong(PartitionKeys.memberSeqOf(k)).array(), new byte[0]));
            });
            assertEquals(8, legacy.size());
            RecordCodec.Meta m = RecordCodec.decodeMeta(q.store.get(keys.meta()));
            legacy.add(new Mutation.Put(keys.meta(), RecordCodec.encodeMeta(new RecordCodec.Meta(m.nextSeq(),
                    m.lastNowMillis(), m.lastPurgeMillis(), m.retired(), m.totals(), m.coldCount(), m.coldFrom(),
                    m.coldOldestMillis(), m.deferredCount()))));
            q.store.write(legacy, q.logIndex);
            q.reopen();
            int[] seqOrdered = {0};
            q.store.scan(keys.typePrefix(PartitionKeys.COLD_MEMBER), keys.typeEnd(PartitionKeys.COLD_MEMBER),
                    (k, v) -> seqOrdered[0] += PartitionKeys.isSeqOrderedMember(k) ? 1 : 0);
            assertEquals(0, seqOrdered[0], "rewritten");
            assertEquals(4, keys(q, PartitionKeys.COLD_MEMBER));
            List<String> got = new java.util.ArrayList<>();
            for (int round = 0; round < 6; round++) {
                for (DeliveredMessage d : q.receive(10, 60)) {
                    got.add(d.message().body());
                    q.delete(d.delivery().receiptHandle());
                }
            }
            assertEquals(List.of("a0", "a1", "a2", "a3"), got.stream().filter(b -> b.startsWith("a")).toList());
            assertEquals(List.of("b4", "b5"), got.stream().filter(b -> b.startsWith("b")).toList());
        }
    }

    @Test
    void aHandOffReturningToAFifoGroupOnDiskComesFirstAgain() {
        try (EngineFixture q = new EngineFixture(dir, FIFO.withMaxReceiveCount(1), 2)) {
            for (int i = 0; i < 4; i++) {
                q.sendFifo("a", "a" + i); // a0, a1 in memory; a2, a3 cold
            }
            assertEquals(List.of("a0"), q.bodies(q.receive(1, 1)));
            q.clock.advanceMillis(1_000);
            List<DeliveredMessage> next = q.receive(1, 60); // a0 would be its second receive: handed off instead
            assertEquals(List.of("a1"), q.bodies(next));
            assertEquals(1, q.deadLetterEffects().size());
            q.delete(next.get(0).delivery().receiptHandle());
            assertEquals(1, keys(q, PartitionKeys.COLD_HEAD), "nothing of the group in memory: cold entirely");
            q.apply(new PartitionCommand.Configure(FIFO)); // the redrive policy removed: a0 comes back, first
            assertEquals(0, keys(q, PartitionKeys.COLD_HEAD), "the group is in memory again");
            q.reopen();
            assertEquals(List.of("a0", "a2", "a3"), q.bodies(q.receive(10, 60)));
        }
    }

    @Test
    void aSendThatOrdersBeforeAMessageHeldByARemovedReorderWindowIsIndexedNotCold() {
        try (EngineFixture q = new EngineFixture(dir, FIFO.withReorderWindowMillis(500), 1)) {
            long now = q.clock.nowMillis();
            q.send(NewMessage.fifo("m1", "held", "a", "d1").withAttributes(java.util.Map.of(
                    io.sluice.common.ProducerOrder.PRODUCER_TIME,
                    new io.sluice.common.MessageAttributeValue("Number", Long.toString(now), null),
                    io.sluice.common.ProducerOrder.PRODUCER_ID,
                    new io.sluice.common.MessageAttributeValue("String", "p", null))));
            q.apply(new PartitionCommand.Configure(FIFO)); // no window any more; "held" stays held until its release
            q.sendFifo("a", "next"); // the same millisecond, no producer id: it orders before "held"
            assertEquals(0, q.engine.state().coldCount(), "kept in memory, before the held one");
            assertEquals(List.of("next"), q.bodies(q.receive(10, 60)));
        }
    }

    @Test
    void purgingOrRetiringAFifoQueueDropsItsGroupsOnDisk() {
        try (EngineFixture q = new EngineFixture(dir, FIFO.withMaxReceiveCount(3), HOT)) {
            for (int i = 0; i < 12; i++) {
                q.sendFifo("g" + i % 5, "m" + i);
            }
            assertTrue(keys(q, PartitionKeys.COLD_HEAD) > 0, "g4's messages are all cold");
            assertEquals(new PartitionResponse.Count(12), q.apply(new PartitionCommand.Purge()).response());
            assertEquals(0, coldKeys(q) + keys(q, PartitionKeys.COLD_MEMBER) + keys(q, PartitionKeys.COLD_HEAD));
            for (int i = 0; i < 12; i++) {
                q.sendFifo("g" + i % 5, "n" + i);
            }
            assertEquals(new PartitionResponse.Count(12), q.apply(new PartitionCommand.Retire(true)).response());
            assertEquals(0, keys(q, PartitionKeys.COLD_MEMBER) + keys(q, PartitionKeys.COLD_HEAD));
            for (int i = 0; i < 10 && q.engine.state().needsSweep(q.clock.nowMillis()); i++) {
                q.apply(new PartitionCommand.Expire(1000));
            }
            assertEquals(12, q.deadLetterEffects().size(), "every message handed off, the cold ones by sweeps");
            assertEquals(0, coldKeys(q));
        }
    }

    private static int coldKeys(EngineFixture q) {
        return keys(q, PartitionKeys.COLD);
    }

    private static int keys(EngineFixture q, byte type) {
        PartitionKeys keys = new PartitionKeys(EngineFixture.PARTITION);
        int[] n = {0};
        q.store.scan(keys.typePrefix(type), keys.typeEnd(type), (k, v) -> n[0]++);
        return n[0];
    }
}
