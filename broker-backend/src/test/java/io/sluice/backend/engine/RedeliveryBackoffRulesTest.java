package io.sluice.backend.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.common.validation.RedeliveryBackoff;
import io.sluice.common.validation.RedeliveryBackoff.Jitter;
import io.sluice.partition.DeadLetterReason;
import io.sluice.partition.DeliveredMessage;
import io.sluice.partition.NewMessage;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionConfig;
import io.sluice.partition.PayloadCodec;
import io.sluice.partition.QueueCounts;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code SluiceRedeliveryBackoff}: a consumer's lapsed lease keeps the message invisible for a growing, jittered wait;
 * the wait counts as delayed; the consumer's own ChangeMessageVisibility wins; redrive still takes the message.
 */
class RedeliveryBackoffRulesTest {
    @TempDir
    Path dir;

    private static PartitionConfig standard(RedeliveryBackoff backoff) {
        return PartitionConfig.STANDARD_DEFAULTS.withRedeliveryBackoff(backoff);
    }

    private static QueueCounts counts(int visible, int inflight, int delayed) {
        return new QueueCounts(visible, inflight, delayed, 0, EngineFixture.START);
    }

    /** Counts at a time, without the totals they carry (PartitionTotalsTest checks those). */
    private static QueueCounts at(PartitionQueueState s, long t) {
        QueueCounts c = s.countsAt(t);
        return new QueueCounts(c.visible(), c.inflight(), c.delayed(), c.deadLetterPending(),
                c.oldestRetentionBaseMillis(), c.oldestHandOffMillis(), c.arrivalSkewP99Millis());
    }

    @Test
    void aLapsedLeaseWaitsTheBackoffWhichGrowsByTheMultiplierUpToTheCap() {
        try (EngineFixture q = new EngineFixture(dir, standard(new RedeliveryBackoff(10, 2, 35, Jitter.NONE)))) {
            q.send("job");
            assertEquals(1, q.receiveOne(30).delivery().receiveCount());
            q.advanceSeconds(30); // the lease lapsed: 10 s of backoff (1st receive)
            assertTrue(q.receive(10, 30).isEmpty(), "waiting out the backoff");
            assertEquals(counts(0, 0, 1), q.counts(), "a backoff counts as delayed, not in flight");
            q.advanceSeconds(9.999);
            assertTrue(q.receive(10, 30).isEmpty());
            q.advanceSeconds(0.001);
            assertEquals(2, q.receiveOne(30).delivery().receiveCount());

            q.advanceSeconds(30 + 19.999); // 2nd receive: 20 s
            assertTrue(q.receive(10, 30).isEmpty());
            q.advanceSeconds(0.001);
            assertEquals(3, q.receiveOne(30).delivery().receiveCount());

            q.advanceSeconds(30 + 34.999); // 3rd receive: 40 s, capped at 35
            assertTrue(q.receive(10, 30).isEmpty());
            q.advanceSeconds(0.001);
            assertEquals(4, q.receiveOne(30).delivery().receiveCount());
        }
    }

    @Test
    void countsMoveFromInFlightToDelayedToVisibleWithoutACommand() {
        try (EngineFixture q = new EngineFixture(dir, standard(new RedeliveryBackoff(10, 2, 900, Jitter.NONE)))) {
            q.send("job");
            q.receiveOne(30);
            long t = q.clock.nowMillis();
            PartitionQueueState s = q.engine.state();
            assertEquals(counts(0, 1, 0), at(s, t + 29_999));
            assertEquals(counts(0, 0, 1), at(s, t + 30_000));
            assertEquals(counts(0, 0, 1), at(s, t + 39_999));
            assertEquals(counts(1, 0, 0), at(s, t + 40_000));
            assertEquals(0, s.visibleCountAt(t + 39_999));
            assertEquals(1, s.visibleCountAt(t + 40_000));
            assertEquals(t + 40_000, s.nextDeadlineMillis(), "parked long polls re-check when the backoff ends");
            // the same counts once commands move the partition's time across each boundary
            q.advanceSeconds(30);
            q.apply(new PartitionCommand.Expire(10));
            assertEquals(counts(0, 0, 1), q.counts());
            q.advanceSeconds(10);
            q.apply(new PartitionCommand.Expire(10));
            assertEquals(counts(1, 0, 0), q.counts());
        }
    }

    @Test
    void fullJitterSpreadsTheWaitsOverZeroToDAndEqualJitterOverHalfDToD() {
        assertEquals(List.of(), outOf(spread(Jitter.FULL), 0, 100_000));
        assertEquals(List.of(), outOf(spread(Jitter.EQUAL), 50_000, 100_000));
    }

    /** 200 messages leased with a 0 s timeout under a 100 s backoff: when each is visible again, in ms after the lease. */
    private List<Long> spread(Jitter jitter) {
        Path sub = dir.resolve(jitter.name());
        try (EngineFixture q = new EngineFixture(sub, standard(new RedeliveryBackoff(100, 1, 100, jitter)))) {
            for (int i = 0; i < 200; i++) {
                q.send("m" + i);
            }
            long leasedAt = q.clock.nowMillis();
            for (int i = 0; i < 20; i++) {
                assertEquals(10, q.receive(10, 0).size());
            }
            assertEquals(counts(0, 0, 200), q.counts());
            List<Long> waits = new ArrayList<>();
            // walk the clock a second at a time and note when messages come back
            for (long at = leasedAt; at <= leasedAt + 100_000 && waits.size() < 200; at += 1_000) {
                q.clock.set(at);
                List<DeliveredMessage> back;
                while (!(back = q.receive(10, 3600)).isEmpty()) {
                    for (DeliveredMessage d : back) {
                        waits.add(at - leasedAt);
                    }
                }
            }
            assertEquals(200, waits.size(), "every message is back by the end of its backoff");
            long min = waits.stream().mapToLong(Long::longValue).min().orElseThrow();
            long max = waits.stream().mapToLong(Long::longValue).max().orElseThrow();
            long distinct = waits.stream().distinct().count();
            assertTrue(distinct >= 30, "spread over many seconds, not in lockstep: " + distinct + " distinct");
            long width = jitter == Jitter.FULL ? 100_000 : 50_000;
            assertTrue(max - min >= width * 8 / 10, "spread " + min + ".." + max + " covers most of the range");
            return waits;
        }
    }

    private static List<Long> outOf(List<Long> waits, long from, long to) {
        return waits.stream().filter(w -> w < from || w > to).toList();
    }

    @Test
    void theSameMessageAndReceiveCountGetTheSameWaitOnEveryReplica() {
        RedeliveryBackoff backoff = new RedeliveryBackoff(60, 2, 3600, Jitter.FULL);
        try (EngineFixture a = new EngineFixture(dir.resolve("a"), standard(backoff));
             EngineFixture b = new EngineFixture(dir.resolve("b"), standard(backoff))) {
            for (EngineFixture q : List.of(a, b)) {
                for (int i = 0; i < 20; i++) {
                    q.send(NewMessage.of("id-" + i, "m" + i));
                }
                q.receive(10, 5);
                q.receive(10, 5);
                q.advanceSeconds(4000);
                q.receive(10, 5);
            }
            assertEquals(a.dump(), b.dump(), "stored state byte for byte");
            assertEquals(a.engine.state().describe(), b.engine.state().describe());
        }
    }

    @Test
    void theConsumersOwnVisibilityChangeWinsOverTheBackoff() {
        try (EngineFixture q = new EngineFixture(dir, standard(new RedeliveryBackoff(600, 2, 900, Jitter.NONE)))) {
            q.send("a");
            q.send("b");
            DeliveredMessage a = q.receiveOne(30);
            DeliveredMessage b = q.receiveOne(30);
            assertNull(q.changeVisibility(a.delivery().receiptHandle(), 0), "released: visible at once");
            assertEquals("a", q.receiveOne(30).message().body());
            assertNull(q.changeVisibility(b.delivery().receiptHandle(), 5), "visible exactly 5 s from now");
            q.advanceSeconds(4.999);
            assertTrue(q.receive(10, 30).stream().noneMatch(d -> d.message().body().equals("b")));
            q.advanceSeconds(0.001);
            assertEquals(List.of("b"), q.bodies(q.receive(10, 30)));
        }
    }

    @Test
    void aVisibilityChangeDuringTheBackoffEndsItThen() {
        try (EngineFixture q = new EngineFixture(dir, standard(new RedeliveryBackoff(600, 2, 900, Jitter.NONE)))) {
            q.send("a");
            DeliveredMessage a = q.receiveOne(30);
            q.advanceSeconds(60); // lapsed 30 s ago, 570 s of backoff left
            assertEquals(counts(0, 0, 1), at(q.engine.state(), q.clock.nowMillis()));
            assertNull(q.changeVisibility(a.delivery().receiptHandle(), 10), "its handle is still the latest");
            assertEquals(counts(0, 1, 0), q.counts(), "leased again by the consumer's word");
            q.advanceSeconds(10);
            assertEquals(List.of("a"), q.bodies(q.receive(10, 30)));
        }
    }

    @Test
    void aDelayedSendWaitsItsDelayOnlyAndTheBackoffStartsAtTheFirstLapse() {
        try (EngineFixture q = new EngineFixture(dir, standard(new RedeliveryBackoff(20, 2, 900, Jitter.NONE)))) {
            q.send(new NewMessage(UUID.randomUUID().toString(), "later", Map.of(), Map.of(), 5, null, null, null,
                    null));
            q.advanceSeconds(5);
            q.receiveOne(10);
            q.advanceSeconds(10 + 19.999);
            assertTrue(q.receive(10, 10).isEmpty());
            q.advanceSeconds(0.001);
            assertEquals(2, q.receiveOne(10).delivery().receiveCount());
        }
    }

    @Test
    void theReceiveThatHandsOffToTheDeadLetterQueueIsNotWaitedFor() {
        PartitionConfig config = standard(new RedeliveryBackoff(60, 2, 900, Jitter.NONE)).withMaxReceiveCount(2);
        try (EngineFixture q = new EngineFixture(dir, config)) {
            q.send("poison");
            q.receiveOne(10);
            q.advanceSeconds(10 + 60); // 1st lapse: 60 s of backoff
            assertEquals(2, q.receiveOne(10).delivery().receiveCount());
            q.advanceSeconds(10); // 2nd lapse: the next receive would exceed maxReceiveCount, so no backoff
            assertTrue(q.receive(10, 10).isEmpty(), "handed off instead of delivered");
            assertEquals(1, q.deadLetterEffects().size());
            assertEquals(DeadLetterReason.MAX_RECEIVES_EXCEEDED, q.deadLetterEffects().get(0).reason());
            assertEquals(2, q.deadLetterEffects().get(0).receiveCount());
        }
    }

    @Test
    void aBackoffSurvivesARestart() {
        try (EngineFixture q = new EngineFixture(dir, standard(new RedeliveryBackoff(10, 2, 900, Jitter.NONE)))) {
            q.send("job");
            q.receiveOne(30);
            q.advanceSeconds(35);
            q.apply(new PartitionCommand.Expire(10));
            q.reopen();
            assertEquals(counts(0, 0, 1), q.counts(), "still waiting out its backoff after the restart");
            assertEquals(10, PayloadCodec.decodeConfig(PayloadCodec.encodeConfig(q.engine.state().config()))
                    .redeliveryBackoff().initialSeconds(), "the policy is stored with the config");
            q.advanceSeconds(4.999);
            assertTrue(q.receive(10, 30).isEmpty());
            q.advanceSeconds(0.001);
            assertEquals(2, q.receiveOne(30).delivery().receiveCount());
        }
    }

    @Test
    void aFifoGroupStaysBlockedWhileItsHeadWaitsOutTheBackoff() {
        PartitionConfig config = PartitionConfig.FIFO_DEFAULTS
                .withRedeliveryBackoff(new RedeliveryBackoff(30, 2, 900, Jitter.NONE));
        try (EngineFixture q = new EngineFixture(dir, config)) {
            q.sendFifo("g", "first");
            q.sendFifo("g", "second");
            q.sendFifo("h", "other");
            Map<String, Integer> got = new HashMap<>();
            q.receive(10, 10).forEach(d -> got.put(d.message().body(), d.delivery().receiveCount()));
            assertEquals(Map.of("first", 1, "second", 1, "other", 1), got, "a receive takes each group's run");
            q.advanceSeconds(10); // both groups' leases lapse: 30 s of backoff
            assertTrue(q.receive(10, 10).isEmpty(), "no group is ready while its head backs off");
            assertEquals(new QueueCounts(0, 0, 3, 0, EngineFixture.START), q.counts());
            q.advanceSeconds(30);
            List<String> order = q.bodies(q.receive(10, 10));
            assertEquals(List.of("first", "second", "other"), order, "group order kept after the backoff");
        }
    }

    @Test
    void aMoveTasksLapsedLeaseDoesNotBackOff() {
        try (EngineFixture q = new EngineFixture(dir, standard(new RedeliveryBackoff(600, 2, 900, Jitter.NONE)))) {
            q.send("a");
            q.apply(new PartitionCommand.StartMoveTask("t1", null, 0, 42));
            assertEquals(1, ((io.sluice.partition.PartitionResponse.Received)
                    q.apply(new PartitionCommand.LeaseMoveBatch("t1", 10)).response()).deliveries().size());
            q.advanceSeconds(MoveTasks.LEASE_SECONDS); // the driver stalled: its lease ran out, not a consumer's
            assertEquals(List.of("a"), q.bodies(q.receive(10, 30)), "visible again at once");
        }
    }
}
