package io.sluice.backend.engine;

import io.sluice.partition.DeadLetterReason;
import io.sluice.partition.Effect;
import io.sluice.partition.NewMessage;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionConfig;
import io.sluice.partition.PartitionId;
import io.sluice.partition.PartitionResponse;
import io.sluice.partition.QueueCounts;
import io.sluice.partition.StoredMessage;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.common.SqsError;
import io.sluice.partition.DeliveredMessage;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Dead-letter hand-off, retention, purge and retirement. */
class DeadLetterAndLifecycleTest {
    @TempDir
    Path dir;

    @Test
    void theReceiveThatWouldExceedMaxReceiveCountHandsOffInsteadOfDelivering() {
        try (EngineFixture q = new EngineFixture(dir, PartitionConfig.STANDARD_DEFAULTS.withMaxReceiveCount(2))) {
            q.send("poison");
            q.send("fine");
            assertEquals(2, q.receive(10, 10).size());
            q.advanceSeconds(10);
            List<DeliveredMessage> second = q.receive(10, 10);
            assertEquals(2, second.size());
            q.delete(second.stream().filter(d -> d.message().body().equals("fine")).findFirst().orElseThrow()
                    .delivery().receiptHandle());
            q.advanceSeconds(10);
            q.send("newer");
            assertEquals(List.of("newer"), q.bodies(q.receive(10, 10)), "the receive goes on past the hand-off");

            List<Effect.DeadLetter> handOffs = q.deadLetterEffects();
            assertEquals(1, handOffs.size());
            assertEquals(DeadLetterReason.MAX_RECEIVES_EXCEEDED, handOffs.get(0).reason());
            StoredMessage moved = q.engine.readMessage(handOffs.get(0).seq());
            assertEquals("poison", moved.body());
            assertEquals(1, q.counts().deadLetterPending());
            assertEquals(handOffs, q.engine.state().pendingDeadLetters());

            q.advanceSeconds(3600);
            assertTrue(q.receive(10, 10).stream().noneMatch(d -> d.message().body().equals("poison")),
                    "never delivered while the hand-off is pending");
            var acked = q.apply(new PartitionCommand.AcknowledgeDeadLetters(List.of(handOffs.get(0).seq())));
            assertEquals(new PartitionResponse.Count(1), acked.response());
            assertEquals(0, q.counts().deadLetterPending());
            assertTrue(q.engine.state().pendingDeadLetters().isEmpty());
        }
    }

    /**
     * Pending hand-offs are bounded: at the bound, a message that would need one stays where it is (neither delivered
     * nor handed off), the receive goes on past it, and it is handed off once acknowledgements make room.
     */
    @Test
    void atTheBoundOfPendingHandOffsExhaustedMessagesWaitWhereTheyAre() {
        try (EngineFixture q = new EngineFixture(dir, PartitionConfig.STANDARD_DEFAULTS.withMaxReceiveCount(1))) {
            q.engine.state().maxPendingHandOffs = 3;
            for (int i = 0; i < 8; i++) {
                q.send("poison-" + i);
            }
            assertEquals(8, q.receive(10, 0).size());
            q.send("fine");
            assertEquals(List.of("fine"), q.bodies(q.receive(10, 30)), "delivered past the held ones");
            assertEquals(3, q.counts().deadLetterPending(), "no more than the bound pending");
            assertEquals(5, q.counts().visible(), "the others wait where they are");
            assertEquals(3, q.deadLetterEffects().size());

            assertTrue(q.receive(10, 30).isEmpty(), "held messages are not delivered");
            assertEquals(3, q.counts().deadLetterPending());
            var expireSweep = q.apply(new PartitionCommand.Expire(100));
            assertEquals(new PartitionResponse.Count(0), expireSweep.response());

            List<Long> first = q.deadLetterEffects().stream().map(Effect.DeadLetter::seq).toList();
            q.apply(new PartitionCommand.AcknowledgeDeadLetters(first.subList(0, 2)));
            assertTrue(q.receive(10, 30).isEmpty());
            assertEquals(3, q.counts().deadLetterPending(), "two more handed off as two were acknowledged");
            assertEquals(3, q.counts().visible());
            String live = q.engine.state().describe();
            q.reopen();
            q.engine.state().maxPendingHandOffs = 3;
            assertEquals(live, q.engine.state().describe(), "stored as it is in memory");
        }
    }

    /** The redrive policy removed while hand-offs are pending: they return to the queue (FIFO: their group's tail). */
    @Test
    void removingTheRedrivePolicyReturnsPendingHandOffsToTheQueue() {
        PartitionConfig withDlq = PartitionConfig.FIFO_DEFAULTS.withMaxReceiveCount(1);
        try (EngineFixture q = new EngineFixture(dir, withDlq)) {
            q.sendFifo("g", "poison");
            q.receiveOne(0);
            assertTrue(q.receive(10, 30).isEmpty(), "handed off");
            q.sendFifo("g", "next");
            assertEquals(1, q.counts().deadLetterPending());

            q.apply(new PartitionCommand.Configure(withDlq.withMaxReceiveCount(0)));
            assertEquals(0, q.counts().deadLetterPending());
            assertEquals(List.of(), q.engine.state().pendingDeadLetters());
            String live = q.engine.state().describe();
            q.reopen();
            assertEquals(live, q.engine.state().describe(), "stored as it is in memory");
            List<DeliveredMessage> again = q.receive(10, 30);
            assertEquals(List.of("poison", "next"), q.bodies(again), "back in its group, at its place by send order");
            assertEquals(2, again.get(0).delivery().receiveCount(), "its receive count carries on");
        }
    }

    /**
     * A hand-off whose dead-letter queue is gone (no one acknowledges it) is dropped one retention period after it
     * was made, counted as expired: it cannot stay on disk for ever.
     */
    @Test
    void aHandOffNeverAcknowledgedIsDroppedARetentionPeriodLater() {
        PartitionConfig config = PartitionConfig.STANDARD_DEFAULTS.withMaxReceiveCount(1).withRetentionSeconds(600);
        try (EngineFixture q = new EngineFixture(dir, config)) {
            q.send("poison");
            q.advanceSeconds(590); // close to its own retention: the hand-off still gets a full period
            q.receiveOne(0);
            assertTrue(q.receive(10, 30).isEmpty());
            assertEquals(1, q.counts().deadLetterPending());
            q.advanceSeconds(599);
            assertFalse(q.engine.state().needsSweep(q.clock.nowMillis()));
            q.apply(new PartitionCommand.Expire(100));
            assertEquals(1, q.counts().deadLetterPending(), "still waiting for its dead-letter queue");
            q.advanceSeconds(1);
            assertTrue(q.engine.state().needsSweep(q.clock.nowMillis()));
            assertEquals(new PartitionResponse.Count(1), q.apply(new PartitionCommand.Expire(100)).response());
            assertEquals(0, q.counts().deadLetterPending());
            assertEquals(List.of(), q.engine.state().pendingDeadLetters());
            assertEquals(1, q.engine.state().totals().expired());
        }
    }

    /** Two movers executing one hand-off (two frontends, or a retry after an outage) store one copy. */
    @Test
    void aDeadLetterQueueStoresOneCopyPerHandOff() {
        for (PartitionConfig dlq : List.of(PartitionConfig.STANDARD_DEFAULTS, PartitionConfig.FIFO_DEFAULTS)) {
            try (EngineFixture q = new EngineFixture(dir.resolve(dlq.fifo() ? "fifo" : "standard"), dlq)) {
                String key = NewMessage.Provenance.handOffKey(new PartitionId(3, 1), 42);
                NewMessage copy = new NewMessage("m1", "poison", null, null, 0, dlq.fifo() ? "g" : null, null, null,
                        new NewMessage.Provenance(EngineFixture.START, 4, EngineFixture.START, "arn:src", key));
                PartitionResponse.SentMessage first = q.send(copy);
                PartitionResponse.SentMessage second = q.send(copy);
                assertTrue(second.duplicate(), "the second copy of one hand-off is a duplicate");
                assertEquals(first.seq(), second.seq());
                q.send(new NewMessage("m2", "other", null, null, 0, dlq.fifo() ? "g" : null, null, null,
                        new NewMessage.Provenance(EngineFixture.START, 4, EngineFixture.START, "arn:src",
                                NewMessage.Provenance.handOffKey(new PartitionId(3, 1), 43))));
                assertEquals(2, q.counts().visible(), "one per hand-off: " + q.engine.state().describe());
            }
        }
    }

    /**
     * A dead-letter copy keeps why it was handed off (the console shows it), across a restart; a copy from a leader
     * that kept no reason (a key without one) and a message that is no copy have none.
     */
    @Test
    void aDeadLetterCopyKeepsItsReason() {
        try (EngineFixture q = new EngineFixture(dir, PartitionConfig.STANDARD_DEFAULTS)) {
            PartitionId source = new PartitionId(3, 1);
            long withReason = q.send(new NewMessage("m1", "poison", null, null, 0, null, null, null,
                    new NewMessage.Provenance(EngineFixture.START, 6, EngineFixture.START, "arn:src",
                            NewMessage.Provenance.handOffKey(source, 42, DeadLetterReason.SOURCE_QUEUE_DELETED))))
                    .seq();
            long olderLeader = q.send(new NewMessage("m2", "poison", null, null, 0, null, null, null,
                    new NewMessage.Provenance(EngineFixture.START, 6, EngineFixture.START, "arn:src",
                            NewMessage.Provenance.handOffKey(source, 43)))).seq();
            long plain = q.send(NewMessage.of("m3", "plain")).seq();
            q.reopen();
            assertEquals(DeadLetterReason.SOURCE_QUEUE_DELETED, q.engine.readMessage(withReason).deadLetterReason());
            assertEquals("arn:src", q.engine.readMessage(withReason).deadLetterSourceArn());
            assertEquals(null, q.engine.readMessage(olderLeader).deadLetterReason());
            assertEquals(null, q.engine.readMessage(plain).deadLetterReason());
        }
    }

    @Test
    void maxReceiveCountOneDeliversOnceAndMovesOnTheSecondReceive() {
        try (EngineFixture q = new EngineFixture(dir, PartitionConfig.STANDARD_DEFAULTS.withMaxReceiveCount(1))) {
            q.send("m");
            q.receiveOne(0);
            assertTrue(q.receive(10, 30).isEmpty());
            assertEquals(1, q.deadLetterEffects().size());
        }
    }

    @Test
    void movedMessageKeepsItsHistory() {
        try (EngineFixture q = new EngineFixture(dir, PartitionConfig.STANDARD_DEFAULTS)) {
            q.advanceSeconds(100);
            q.send(new NewMessage("orig-id", "b", null, null, -1, null, null, null,
                    new NewMessage.Provenance(EngineFixture.START, 1, EngineFixture.START + 5, "arn:aws:sqs:us-east-1:0:src")));
            DeliveredMessage got = q.receiveOne(30);
            assertEquals(2, got.delivery().receiveCount(), "the receive count carries on");
            assertEquals(EngineFixture.START + 5, got.delivery().firstReceiveTimestampMillis());
            assertEquals(EngineFixture.START, got.message().sentTimestampMillis());
            assertEquals("arn:aws:sqs:us-east-1:0:src", got.message().deadLetterSourceArn());
        }
    }

    @Test
    void fifoHandOffUnblocksTheGroup() {
        try (EngineFixture q = new EngineFixture(dir, PartitionConfig.FIFO_DEFAULTS.withMaxReceiveCount(1))) {
            q.sendFifo("g", "1");
            q.sendFifo("g", "2");
            q.receiveOne(0);
            assertEquals(List.of("2"), q.bodies(q.receive(10, 30)));
            assertEquals(1, q.deadLetterEffects().size());
        }
    }

    @Test
    void retentionExpiresMessagesAndLoweringItAppliesToQueuedOnes() {
        try (EngineFixture q = new EngineFixture(dir, PartitionConfig.STANDARD_DEFAULTS.withRetentionSeconds(120))) {
            q.send("old");
            q.advanceSeconds(60);
            q.send("young");
            q.advanceSeconds(60);
            assertEquals(List.of("young"), q.bodies(q.receive(10, 0)), "old expired at 120 s, even without a sweep");
            q.apply(new PartitionCommand.Configure(PartitionConfig.STANDARD_DEFAULTS.withRetentionSeconds(60)));
            var swept = q.apply(new PartitionCommand.Expire(100));
            assertEquals(new PartitionResponse.Count(1), swept.response());
            assertEquals(new QueueCounts(0, 0, 0, 0, -1), q.counts());
            assertTrue(q.deadLetterEffects().isEmpty(), "dropped, not dead-lettered, by default");
        }
    }

    @Test
    void aMessagePastRetentionIsGoneForHeartbeatsEvenBeforeTheSweep() {
        try (EngineFixture q = new EngineFixture(dir, PartitionConfig.FIFO_DEFAULTS.withRetentionSeconds(60))) {
            q.sendFifo("g", "old");
            var leased = q.receiveOne(600);
            q.advanceSeconds(60);
            var f = q.changeVisibility(leased.delivery().receiptHandle(), 30);
            assertEquals(SqsError.INVALID_PARAMETER_VALUE, f.error());
            assertTrue(f.message().endsWith("Message does not exist or is not available for visibility timeout change."));
            assertEquals(new QueueCounts(0, 0, 0, 0, -1), q.counts(), "expired on the spot");
        }
    }

    @Test
    void expiryCanDeadLetterWhenTheQueueAsksForIt() {
        PartitionConfig config = PartitionConfig.STANDARD_DEFAULTS.withRetentionSeconds(60).withMaxReceiveCount(5)
                .withDeadLetterOnExpiry(true);
        try (EngineFixture q = new EngineFixture(dir, config)) {
            q.send("m");
            q.receiveOne(120);
            q.advanceSeconds(60);
            q.apply(new PartitionCommand.Expire(100));
            assertEquals(DeadLetterReason.RETENTION_EXPIRED, q.deadLetterEffects().get(0).reason(),
                    "in-flight messages expire too");
        }
    }

    @Test
    void purgeRemovesEverythingOnceAMinute() {
        try (EngineFixture q = new EngineFixture(dir, PartitionConfig.STANDARD_DEFAULTS)) {
            q.send("visible");
            q.send(NewMessage.of("d", "delayed").withDelaySeconds(60));
            q.send("inflight");
            q.receive(1, 600);
            assertEquals(new PartitionResponse.Count(3), q.apply(new PartitionCommand.Purge()).response());
            assertEquals(new QueueCounts(0, 0, 0, 0, -1), q.counts());
            q.advanceSeconds(59.999);
            var again = assertInstanceOf(PartitionResponse.Rejected.class, q.apply(new PartitionCommand.Purge()).response());
            assertEquals(SqsError.PURGE_QUEUE_IN_PROGRESS, again.failure().error());
            q.advanceSeconds(0.001);
            assertEquals(new PartitionResponse.Count(0), q.apply(new PartitionCommand.Purge()).response());
            q.reopen();
            assertEquals(new QueueCounts(0, 0, 0, 0, -1), q.counts(), "purged data stays purged after reopen");
        }
    }

    @Test
    void retiringAQueueHandsEverythingOffAndRefusesNewWork() {
        try (EngineFixture q = new EngineFixture(dir, PartitionConfig.STANDARD_DEFAULTS.withMaxReceiveCount(3))) {
            q.send("a");
            q.send("b");
            q.receive(1, 30);
            assertEquals(new PartitionResponse.Count(2), q.apply(new PartitionCommand.Retire(true)).response());
            assertTrue(q.deadLetterEffects().stream().allMatch(d -> d.reason() == DeadLetterReason.SOURCE_QUEUE_DELETED));
            assertEquals(2, q.deadLetterEffects().size());
            var rejected = assertInstanceOf(PartitionResponse.Rejected.class,
                    q.apply(new PartitionCommand.Send(List.of(NewMessage.of("x", "y")))).response());
            assertEquals(SqsError.QUEUE_DOES_NOT_EXIST, rejected.failure().error());
            assertTrue(PartitionEngine.stored(q.store, EngineFixture.PARTITION).isPresent(), "kept while handing off");
            q.apply(new PartitionCommand.AcknowledgeDeadLetters(
                    q.deadLetterEffects().stream().map(Effect.DeadLetter::seq).toList()));
            assertEquals(new QueueCounts(0, 0, 0, 0, -1), q.counts());
            assertTrue(q.engine.state().finished());
            assertTrue(PartitionEngine.stored(q.store, EngineFixture.PARTITION).isEmpty(),
                    "all handed off: its records are gone");
        }
    }

    @Test
    void retiringWithoutHandOffDropsAllData() {
        try (EngineFixture q = new EngineFixture(dir, PartitionConfig.STANDARD_DEFAULTS)) {
            q.send("a");
            q.apply(new PartitionCommand.Retire(false));
            assertTrue(q.dump().keySet().stream().noneMatch(k -> k.startsWith("000000000000000700000000")),
                    "no record of the partition remains, config and meta included");
            assertTrue(PartitionEngine.open(q.store, EngineFixture.PARTITION).isEmpty());
            assertTrue(PartitionEngine.storedPartitions(q.store).isEmpty(), "a reconcile finds nothing of it");
        }
    }
}
