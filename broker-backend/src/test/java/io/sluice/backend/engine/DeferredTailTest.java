package io.sluice.backend.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.partition.DeliveredMessage;
import io.sluice.partition.Effect;
import io.sluice.partition.NewMessage;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionConfig;
import io.sluice.partition.PartitionResponse;
import io.sluice.partition.QueueCounts;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A standard partition's backlog that is not a plain fresh send waits on disk past the index's limit ({@link
 * DeferredTail}): delayed sends, dead-letter copies with their own retention, and leases that lapsed; counts, deadlines,
 * receipt handles, retention, purge and reopen see it as if it were indexed.
 */
class DeferredTailTest {
    private static final int HOT = 4;
    private static final PartitionConfig DAY_RETENTION = PartitionConfig.STANDARD_DEFAULTS.withRetentionSeconds(86_400);

    @TempDir
    Path dir;

    @Test
    void delayedSendsWaitOnDiskWithExactCountsAndComeInDeliveryOrder() {
        try (EngineFixture q = new EngineFixture(dir, PartitionConfig.STANDARD_DEFAULTS, HOT)) {
            for (int i = 0; i < 20; i++) { // delays 20 s down to 1 s: send order is not delivery order
                q.send(NewMessage.of("id" + i, "m" + i).withDelaySeconds(20 - i));
            }
            assertEquals(HOT, q.engine.state().index.size(), "only the limit is indexed");
            assertEquals(16, keys(q, PartitionKeys.DEFERRED));
            assertEquals(new QueueCounts(0, 0, 20, 0, EngineFixture.START), q.counts());
            assertEquals(EngineFixture.START + 1_000, q.engine.state().nextDeadlineMillis(), "the earliest deadline");
            q.advanceSeconds(10.5);
            QueueCounts halfway = q.engine.state().countsAt(q.clock.nowMillis());
            assertEquals(10, halfway.visible(), "deadlines passed since the last command count, on disk too");
            assertEquals(10, halfway.delayed());
            String before = q.engine.state().describe();
            q.reopen();
            assertEquals(before, q.engine.state().describe(), "reopened from the meta record and the small records");
            q.advanceSeconds(10);
            List<String> bodies = new ArrayList<>();
            for (int round = 0; round < 10 && bodies.size() < 20; round++) {
                for (DeliveredMessage d : q.receive(3, 60)) {
                    bodies.add(d.message().body());
                    q.delete(d.delivery().receiptHandle());
                }
            }
            assertEquals(IntStream.range(0, 20).mapToObj(i -> "m" + (19 - i)).toList(), bodies, "by deadline");
            assertEquals(new QueueCounts(0, 0, 0, 0, -1), q.counts());
            for (byte type : PartitionKeys.DEFERRED_TYPES) {
                assertEquals(0, keys(q, type), "nothing left of type " + (char) type);
            }
        }
    }

    @Test
    void aDeadlineOnDiskWakesParkedPollsLikeAnIndexedOne() {
        try (EngineFixture q = new EngineFixture(dir, PartitionConfig.STANDARD_DEFAULTS, HOT)) {
            for (int i = 0; i < HOT; i++) {
                q.send("hot" + i);
            }
            assertEquals(HOT, q.receive(HOT, 600).size()); // the index is full of messages in flight
            q.effects.clear();
            q.send(NewMessage.of("late", "late").withDelaySeconds(3));
            assertEquals(1, keys(q, PartitionKeys.DEFERRED), "the delayed send waits on disk");
            assertTrue(q.effects.contains(new Effect.VisibleAt(EngineFixture.PARTITION, EngineFixture.START + 3_000)),
                    "its deadline is announced: " + q.effects);
            q.advanceSeconds(3);
            q.effects.clear();
            assertEquals(List.of("late"), q.bodies(q.receive(10, 60)));
        }
    }

    /**
     * A crash-looping consumer's backlog: received and never deleted, the leases lapse and the index would hold every
     * message; the latest in delivery order go to disk instead, and a receipt handle still finds them.
     */
    @Test
    void lapsedLeasesPageOutAndTheirHandlesStillDeleteAndChangeVisibility() {
        try (EngineFixture q = new EngineFixture(dir, PartitionConfig.STANDARD_DEFAULTS, HOT)) {
            for (int i = 0; i < 20; i++) {
                q.send("m" + i);
            }
            List<DeliveredMessage> leased = new ArrayList<>();
            while (leased.size() < 20) {
                leased.addAll(q.receive(10, 30));
            }
            q.advanceSeconds(30); // every lease lapses
            assertTrue(q.engine.state().needsSweep(q.clock.nowMillis()), "an idle partition is swept to page out");
            q.apply(new PartitionCommand.Expire(10)); // any command: the index pages out to its limit
            assertTrue(!q.engine.state().needsSweep(q.clock.nowMillis()), "then nothing more to do");
            assertEquals(HOT, q.engine.state().index.size());
            assertEquals(20 - HOT, keys(q, PartitionKeys.DEFERRED));
            assertEquals(20 - HOT, keys(q, PartitionKeys.DEFERRED_SEQ), "found by seq: they were leased here");
            assertEquals(20, q.counts().visible());

            DeliveredMessage last = leased.get(19); // the last in delivery order: on disk
            assertNull(q.delete(last.delivery().receiptHandle()), "a stale handle deletes (standard queues)");
            DeliveredMessage other = leased.get(18);
            assertNull(q.changeVisibility(other.delivery().receiptHandle(), 300));
            assertEquals(18, q.counts().visible());
            assertEquals(1, q.counts().delayed() + q.counts().inflight());
            String before = q.engine.state().describe();
            q.reopen();
            assertEquals(before, q.engine.state().describe());

            List<String> bodies = new ArrayList<>();
            for (int round = 0; round < 10; round++) {
                q.receive(10, 60).forEach(d -> bodies.add(d.message().body()));
            }
            assertEquals(IntStream.range(0, 18).mapToObj(i -> "m" + i).toList(), bodies,
                    "the rest once each, in delivery order; the deleted one never again");
        }
    }

    /** Dead-letter copies keep their original send time: on disk, they still expire in retention order. */
    @Test
    void copiesOnDiskExpireByTheirOriginalSendTime() {
        try (EngineFixture q = new EngineFixture(dir, DAY_RETENTION, HOT)) {
            for (int i = 0; i < 10; i++) {
                long sent = EngineFixture.START - 86_400_000L + 60_000L * (10 - i); // m0 expires last
                q.send(copy("m" + i, sent));
            }
            assertEquals(HOT, q.engine.state().index.size());
            assertEquals(6, keys(q, PartitionKeys.DEFERRED));
            assertEquals(EngineFixture.START - 86_400_000L + 60_000L, q.counts().oldestRetentionBaseMillis(),
                    "the oldest send on disk is the queue's oldest");
            q.advanceSeconds(60 * 5 + 1); // the five oldest sends (m5..m9, on disk) are past retention
            var swept = q.apply(new PartitionCommand.Expire(100));
            assertEquals(new PartitionResponse.Count(5), swept.response());
            assertEquals(5, q.counts().visible());
            assertEquals(List.of("m0", "m1", "m2", "m3", "m4"), q.bodies(q.receive(10, 60)));
        }
    }

    @Test
    void purgeClearsTheDeferredTail() {
        try (EngineFixture q = new EngineFixture(dir, PartitionConfig.STANDARD_DEFAULTS, HOT)) {
            for (int i = 0; i < 10; i++) {
                q.send(NewMessage.of("id" + i, "m" + i).withDelaySeconds(5));
            }
            assertEquals(new PartitionResponse.Count(10), q.apply(new PartitionCommand.Purge()).response());
            assertEquals(new QueueCounts(0, 0, 0, 0, -1), q.counts());
            for (byte type : PartitionKeys.DEFERRED_TYPES) {
                assertEquals(0, keys(q, type));
            }
            q.advanceSeconds(10);
            assertTrue(q.receive(10, 60).isEmpty());
        }
    }

    private static NewMessage copy(String id, long sentMillis) {
        return new NewMessage(id, id, Map.of(), Map.of(), -1, null, null, null,
                new NewMessage.Provenance(sentMillis, 1, sentMillis, "arn:aws:sqs:us-east-1:000000000000:src"));
    }

    private static int keys(EngineFixture q, byte type) {
        PartitionKeys keys = new PartitionKeys(EngineFixture.PARTITION);
        int[] n = {0};
        q.store.scan(keys.typePrefix(type), keys.typeEnd(type), (k, v) -> n[0]++);
        return n[0];
    }
}
