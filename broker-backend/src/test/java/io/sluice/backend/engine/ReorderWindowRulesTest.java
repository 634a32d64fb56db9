package io.sluice.backend.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.common.MessageAttributeValue;
import io.sluice.common.ProducerOrder;
import io.sluice.partition.DeliveredMessage;
import io.sluice.partition.NewMessage;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionConfig;
import io.sluice.partition.PartitionResponse;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code SluiceReorderWindowMillis}: a FIFO group delivers in producer order ({@code Sluice.ProducerTime},
 * {@code Sluice.ProducerId}, arrival), each message held until the partition's time passes its producer time plus the
 * window; stragglers are delivered at once and flagged; a clock ahead is bounded by the window after arrival.
 */
class ReorderWindowRulesTest {
    private static final long T = EngineFixture.START;

    @TempDir
    Path dir;

    private static PartitionConfig fifo(int windowMillis) {
        return PartitionConfig.FIFO_DEFAULTS.withReorderWindowMillis(windowMillis);
    }

    private static NewMessage timed(String group, String body, long producerTime, String producerId) {
        Map<String, MessageAttributeValue> attributes = new HashMap<>();
        attributes.put(ProducerOrder.PRODUCER_TIME, new MessageAttributeValue("Number", Long.toString(producerTime), null));
        if (producerId != null) {
            attributes.put(ProducerOrder.PRODUCER_ID, new MessageAttributeValue("String", producerId, null));
        }
        return NewMessage.fifo(body, body, group, UUID.randomUUID().toString()).withAttributes(attributes);
    }

    private static NewMessage untimed(String group, String body) {
        return NewMessage.fifo(body, body, group, UUID.randomUUID().toString());
    }

    private static boolean late(DeliveredMessage d) {
        MessageAttributeValue v = d.message().attributes().get(ProducerOrder.LATE);
        return v != null && "true".equals(v.stringValue());
    }

    /** Receives everything deliverable now (leases of 30 s) and deletes it, returning the bodies in order. */
    private static List<String> takeAll(EngineFixture q) {
        List<String> out = new java.util.ArrayList<>();
        List<DeliveredMessage> got;
        while (!(got = q.receive(10, 30)).isEmpty()) {
            for (DeliveredMessage d : got) {
                out.add(d.message().body());
                assertNull(q.delete(d.delivery().receiptHandle()));
            }
        }
        return out;
    }

    /**
     * A backlog past the index's limit waits on disk in each group's producer order, however its messages arrived: a
     * group with messages in memory and on disk, and one on disk entirely whose head a straggler replaces; the queue's
     * delay and the window both hold them, and the order holds across a restart.
     */
    @Test
    void aBacklogOnDiskKeepsProducerOrder() {
        try (EngineFixture q = new EngineFixture(dir, fifo(1000).withDelaySeconds(2), 3)) {
            int[] arrival = {2, 0, 1, 5, 3, 4, 8, 6, 7, 9}; // 2, 0, 1 in memory; the rest on disk, in order
            for (int k : arrival) {
                q.send(timed("u", "u" + k, T - 900 + 10 * k, "p"));
            }
            q.send(timed("v", "v2", T - 500, "p")); // the index is full: group v is on disk entirely
            q.send(timed("v", "v3", T - 400, "p"));
            q.send(timed("v", "v1", T - 600, "p")); // a straggler: the group's new head
            q.send(timed("v", "v0", T - 600, "o")); // same time, a smaller producer id: before it
            assertEquals(11, q.engine.state().coldCount(), "most of the backlog is on disk: " + q.engine.state().coldCount());
            assertEquals(List.of(), takeAll(q), "the delay holds every message");
            q.reopen();
            q.advanceSeconds(2);
            List<String> got = takeAll(q);
            assertEquals(List.of("u0", "u1", "u2", "u3", "u4", "u5", "u6", "u7", "u8", "u9"),
                    got.stream().filter(b -> b.startsWith("u")).toList());
            assertEquals(List.of("v0", "v1", "v2", "v3"), got.stream().filter(b -> b.startsWith("v")).toList());
        }
    }

    @Test
    void outOfOrderArrivalsInsideTheWindowComeOutInProducerOrder() {
        try (EngineFixture q = new EngineFixture(dir, fifo(1000))) {
            q.send(timed("user-1", "second", T - 50, "p1"));
            q.send(timed("user-1", "first", T - 80, "p2"));
            q.send(timed("user-1", "third", T - 20, "p3"));
            q.send(timed("user-1", "tie-p0", T - 50, "p0")); // same time as "second": producer id breaks the tie
            q.clock.set(T + 919);
            assertTrue(q.receive(10, 30).isEmpty(), "nothing before the first producer time plus the window");
            q.clock.set(T + 920);
            assertEquals(List.of("first"), q.bodies(q.receive(10, 30)), "only what the window has let go");
            q.advanceSeconds(31); // "first"'s lease lapses: redelivered at once, not after another window
            DeliveredMessage again = q.receiveOne(30);
            assertEquals("first", again.message().body());
            assertEquals(2, again.delivery().receiveCount());
            assertNull(q.delete(again.delivery().receiptHandle()));
            assertEquals(List.of("tie-p0", "second", "third"), takeAll(q));
        }
    }

    @Test
    void theWindowIsPaidOnceAndTheDelayIsNotAddedToIt() {
        try (EngineFixture q = new EngineFixture(dir, fifo(1000).withDelaySeconds(2))) {
            q.send(timed("g", "a", T, null));
            q.clock.set(T + 1999);
            assertTrue(q.receive(10, 0).isEmpty(), "the queue delay (2 s) is longer than the window: it decides");
            q.clock.set(T + 2000);
            DeliveredMessage first = q.receiveOne(0); // visibility 0: visible again at once
            assertEquals(1, first.delivery().receiveCount());
            assertEquals(2, q.receiveOne(0).delivery().receiveCount(), "a redelivery does not wait the window again");
        }
        try (EngineFixture q = new EngineFixture(dir.resolve("b"), fifo(3000).withDelaySeconds(1))) {
            q.send(timed("g", "a", T - 500, null));
            q.clock.set(T + 2499);
            assertTrue(q.receive(10, 0).isEmpty(), "the window (from the producer time) is longer: it decides");
            q.clock.set(T + 2500);
            assertEquals(List.of("a"), q.bodies(q.receive(10, 30)));
        }
    }

    @Test
    void aStragglerAfterALaterMessageWasDeliveredGoesAtOnceFlaggedAndCounted() {
        try (EngineFixture q = new EngineFixture(dir, fifo(500))) {
            q.send(timed("g", "on-time", T, "p1"));
            q.clock.set(T + 500);
            DeliveredMessage onTime = q.receiveOne(30);
            assertFalse(late(onTime));
            assertNull(q.delete(onTime.delivery().receiptHandle()));

            q.clock.set(T + 600);
            q.send(timed("g", "straggler", T - 100, "p2")); // produced before "on-time", arrives after its delivery
            q.send(timed("g", "next", T + 550, "p1"));
            q.send(timed("other", "other group", T - 100, "p2")); // another group's mark is not this one's
            List<DeliveredMessage> now = q.receive(10, 30);
            assertEquals(List.of("straggler", "other group"), q.bodies(now), "neither is held back any more");
            assertTrue(late(now.get(0)));
            assertFalse(late(now.get(1)), "its own group has no mark");
            assertEquals(1, q.engine.state().totals().late());
            now.forEach(d -> assertNull(q.delete(d.delivery().receiptHandle())));
            q.clock.set(T + 1049);
            assertTrue(q.receive(10, 30).isEmpty(), "on-time messages still wait their window");
            q.clock.set(T + 1050);
            DeliveredMessage next = q.receiveOne(30);
            assertEquals("next", next.message().body());
            assertFalse(late(next));
            assertEquals(1, q.engine.state().totals().late());
        }
    }

    @Test
    void theMarkIsTheLatestProducerOrderDelivered() {
        try (EngineFixture q = new EngineFixture(dir, fifo(500))) {
            q.clock.set(T + 100);
            q.send(timed("g", "a", T, null));
            q.send(timed("g", "c", T + 100, null));
            q.clock.set(T + 600);
            assertEquals(List.of("a", "c"), takeAll(q));
            q.send(timed("g", "b", T + 50, null)); // before "c", after "a": late, "c" was delivered
            assertTrue(late(q.receiveOne(30)));
            q.send(timed("g", "d", T + 101, null)); // after "c": on time
            q.clock.set(T + 601 + 30_000);
            DeliveredMessage d = q.receive(10, 30).stream().filter(m -> m.message().body().equals("d")).findFirst()
                    .orElseThrow();
            assertFalse(late(d));
        }
    }

    @Test
    void aStragglerWaitsBehindAnInFlightMessageThenGoesFirst() {
        try (EngineFixture q = new EngineFixture(dir, fifo(500))) {
            q.send(timed("g", "a", T, null));
            q.send(timed("g", "b", T + 10, null));
            q.clock.set(T + 500);
            DeliveredMessage a = q.receiveOne(30); // "b" not yet out of the window: only "a"
            q.clock.set(T + 520);
            q.send(timed("g", "late", T - 1, null));
            assertTrue(q.receive(10, 30).isEmpty(), "the group is blocked while \"a\" is in flight");
            assertNull(q.delete(a.delivery().receiptHandle()));
            List<DeliveredMessage> next = q.receive(10, 30);
            assertEquals(List.of("late", "b"), q.bodies(next), "the straggler is next; then producer order");
            assertTrue(late(next.get(0)));
            assertFalse(late(next.get(1)));
        }
    }

    @Test
    void aProducerClockAheadWaitsNoLongerThanTheWindowAfterArrivalAndIsOrderedByArrival() {
        try (EngineFixture q = new EngineFixture(dir, fifo(1000))) {
            q.send(timed("g", "ahead by an hour", T + 3_600_000, "p1"));
            q.clock.set(T + 100);
            q.send(timed("g", "honest", T + 100, "p2"));
            q.clock.set(T + 999);
            assertTrue(q.receive(10, 30).isEmpty());
            q.clock.set(T + 1000);
            assertEquals(List.of("ahead by an hour"), q.bodies(q.receive(10, 30)));
            q.advanceSeconds(31);
            // its lease lapsed; it is delivered again first, then "honest", which is not late: its order
            // (T + 100) is after the ahead message's, which counts as its arrival (T)
            List<DeliveredMessage> both = q.receive(10, 30);
            assertEquals(List.of("ahead by an hour", "honest"), q.bodies(both));
            assertFalse(late(both.get(1)));
        }
    }

    @Test
    void messagesWithoutAProducerTimeAreOrderedAtArrivalAndWaitTheWindow() {
        try (EngineFixture q = new EngineFixture(dir, fifo(1000))) {
            q.send(untimed("g", "untimed"));
            q.clock.set(T + 200);
            q.send(timed("g", "timed earlier", T - 300, null));
            q.clock.set(T + 700);
            assertEquals(List.of("timed earlier"), q.bodies(q.receive(10, 30)), "produced before the untimed one");
            q.clock.set(T + 999);
            assertTrue(q.receive(10, 30).isEmpty(), "in flight blocks the group anyway");
        }
        try (EngineFixture q = new EngineFixture(dir.resolve("b"), fifo(1000))) {
            q.send(untimed("g", "untimed"));
            q.clock.set(T + 999);
            assertTrue(q.receive(10, 30).isEmpty());
            q.clock.set(T + 1000);
            assertEquals(List.of("untimed"), q.bodies(q.receive(10, 30)));
        }
    }

    @Test
    void withoutAWindowProducerTimesDoNotReorderButTheirSkewIsMeasured() {
        try (EngineFixture q = new EngineFixture(dir, fifo(0))) {
            for (int i = 0; i < 100; i++) {
                q.send(timed("g", "m" + i, T - i, null)); // arrival order is the reverse of producer order
            }
            assertEquals(0, q.engine.state().counts().delayed(), "no window: nothing held");
            List<DeliveredMessage> first = q.receive(3, 30);
            assertEquals(List.of("m0", "m1", "m2"), q.bodies(first), "arrival order");
            long p99 = q.engine.state().counts().arrivalSkewP99Millis();
            assertTrue(p99 >= 98 && p99 <= 98 * 9 / 8 + 1, "p99 of skews 0..99 ms: " + p99);
            assertEquals(0, q.engine.state().totals().late());
        }
    }

    @Test
    void skewP99CoversTheLastFiveToTenMinutesAndIsMinusOneWithout() {
        try (EngineFixture q = new EngineFixture(dir, fifo(0))) {
            assertEquals(-1, q.engine.state().counts().arrivalSkewP99Millis());
            q.send(untimed("g", "no producer time"));
            assertEquals(-1, q.engine.state().counts().arrivalSkewP99Millis());
            q.send(timed("g", "skewed", T - 5000, null));
            q.send(timed("g", "ahead", T + 5000, null)); // a clock ahead counts as 0
            long p99 = q.engine.state().counts().arrivalSkewP99Millis();
            assertTrue(p99 >= 5000 && p99 < 5000 * 9 / 8, "p99: " + p99);
            q.advanceSeconds(11 * 60);
            q.send(untimed("g", "later"));
            assertEquals(-1, q.engine.state().counts().arrivalSkewP99Millis(), "forgotten after two windows");
        }
    }

    @Test
    void aDuplicateIsAnsweredWhateverItsProducerTime() {
        try (EngineFixture q = new EngineFixture(dir, fifo(1000))) {
            NewMessage original = timed("g", "once", T, null);
            PartitionResponse.SentMessage first = q.send(original);
            Map<String, MessageAttributeValue> other = Map.of(ProducerOrder.PRODUCER_TIME,
                    new MessageAttributeValue("Number", Long.toString(T - 60_000), null));
            NewMessage again = new NewMessage("again", "once", other, Map.of(), -1, "g", original.deduplicationId(),
                    null, null);
            PartitionResponse.SentMessage second = q.send(again);
            assertTrue(second.duplicate());
            assertEquals(first.messageId(), second.messageId());
            q.clock.set(T + 1000);
            assertEquals(List.of("once"), takeAll(q));
            assertEquals(0, q.engine.state().totals().late());
        }
    }

    @Test
    void aMessageOutOfReceivesIsHandedOffAndTheGroupGoesOnInProducerOrder() {
        PartitionConfig config = fifo(500).withMaxReceiveCount(1);
        try (EngineFixture q = new EngineFixture(dir, config)) {
            q.clock.set(T + 20); // producer times in the past (a later one would count as its arrival)
            q.send(timed("g", "b", T + 20, null));
            q.send(timed("g", "a", T, null));
            q.clock.set(T + 520);
            assertEquals(List.of("a"), q.bodies(q.receive(1, 0)), "produced first, arrived second");
            // "a" was received once with visibility 0: the next receive hands it off and delivers "b"
            List<DeliveredMessage> next = q.receive(10, 30);
            assertEquals(List.of("b"), q.bodies(next));
            assertEquals(1, q.deadLetterEffects().size());
        }
    }

    @Test
    void marksAndOrderSurviveARestartAndExpireFiveMinutesAfterTheLastDelivery() {
        try (EngineFixture q = new EngineFixture(dir, fifo(500))) {
            q.clock.set(T + 300);
            q.send(timed("g", "a", T, null));
            q.send(timed("g", "c", T + 300, null));
            q.send(timed("g", "b", T + 200, null));
            q.clock.set(T + 500);
            assertNull(q.delete(q.receiveOne(30).delivery().receiptHandle()));
            String before = q.engine.state().describe();
            q.reopen();
            assertEquals(before, q.engine.state().describe(), "order, marks and windows read back the same");
            q.send(timed("g", "straggler", T - 1, null));
            q.clock.set(T + 800);
            List<DeliveredMessage> got = q.receive(10, 30);
            assertEquals(List.of("straggler", "b", "c"), q.bodies(got));
            assertTrue(late(got.get(0)), "the mark survived the restart");
            got.forEach(d -> assertNull(q.delete(d.delivery().receiptHandle())));

            q.clock.set(T + 800 + GroupMarks.REMEMBER_MILLIS);
            q.apply(new PartitionCommand.Expire(100));
            assertFalse(q.engine.state().describe().contains("marks={g="), "the sweep forgot the mark");
            q.send(timed("g", "very late", T - 2, null));
            DeliveredMessage veryLate = q.receiveOne(30);
            assertFalse(late(veryLate), "a mark is remembered for five minutes, like a deduplication id");
        }
    }

    @Test
    void recordsWrittenBeforeProducerOrderReadAsArrivalOrderWithoutAWindow() {
        PartitionConfig config = fifo(1500);
        byte[] bytes = io.sluice.partition.PayloadCodec.encodeConfig(config);
        assertEquals(config, io.sluice.partition.PayloadCodec.decodeConfig(bytes));
        assertEquals(fifo(0), io.sluice.partition.PayloadCodec.decodeConfig(java.util.Arrays.copyOf(bytes,
                bytes.length - 4)), "a config from before the window has none");

        MessageEntry e = new MessageEntry(9);
        e.visibleAtMillis = T;
        e.orderMillis = T - 5;
        e.producerId = "p";
        byte[] state = RecordCodec.encodeState(e);
        RecordCodec.DecodedState back = RecordCodec.decodeState(9, state);
        assertEquals(T - 5, back.entry().orderMillis);
        assertEquals("p", back.entry().producerId);
        // the order fields trail: an older record ends before them and sorts before every newer message
        int orderFields = 8 + 4 + "p".length() + 8;
        RecordCodec.DecodedState old = RecordCodec.decodeState(9, java.util.Arrays.copyOf(state,
                state.length - orderFields));
        assertEquals(0, old.entry().orderMillis);
        assertNull(old.entry().producerId);
    }

    @Test
    void aStragglerIsLateWhileALaterMessageIsInFlightEvenAfterTheMarkExpired() {
        try (EngineFixture q = new EngineFixture(dir, fifo(500))) {
            q.send(timed("g", "a", T, null));
            q.clock.set(T + 500);
            q.receiveOne(3_600); // an hour's lease: longer than a mark is kept
            q.clock.set(T + 500 + GroupMarks.REMEMBER_MILLIS + 1_000);
            q.apply(new PartitionCommand.Expire(100)); // the mark is swept
            q.send(timed("g", "straggler", T - 1, null));
            assertEquals(1, q.engine.state().totals().late(), "\"a\", after it in producer order, is in flight");
        }
    }

    @Test
    void aDelayChangeKeepsEachMessagesWindow() {
        try (EngineFixture q = new EngineFixture(dir, fifo(5_000))) {
            q.send(timed("g", "held", T, null));
            q.apply(new PartitionCommand.Configure(fifo(0).withDelaySeconds(1))); // window off, delay 1 s: retroactive
            q.clock.set(T + 4_999);
            assertTrue(q.receive(10, 30).isEmpty(), "its window, set at its send, still holds it");
            q.clock.set(T + 5_000);
            DeliveredMessage held = q.receiveOne(30);
            assertEquals("held", held.message().body());
            assertNull(q.delete(held.delivery().receiptHandle()));
            q.send(timed("g", "after", T + 4_000, null)); // no window now: the 1 s delay only
            q.apply(new PartitionCommand.Configure(fifo(60_000).withDelaySeconds(2))); // a window does not reach back
            q.clock.set(T + 6_999);
            assertTrue(q.receive(10, 30).isEmpty(), "the new delay (2 s from its arrival) holds it");
            q.clock.set(T + 7_000);
            assertEquals(List.of("after"), q.bodies(q.receive(10, 30)), "and not the new 60 s window");
        }
    }
}
