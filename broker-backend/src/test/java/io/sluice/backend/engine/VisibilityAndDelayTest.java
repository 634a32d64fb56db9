package io.sluice.backend.engine;

import io.sluice.partition.Effect;
import io.sluice.partition.NewMessage;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionConfig;
import io.sluice.partition.PartitionResponse;
import io.sluice.partition.QueueCounts;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.common.MessageAttributeValue;
import io.sluice.common.SqsError;
import io.sluice.partition.DeliveredMessage;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Standard queue: leases, visibility timeouts, heartbeats and delays. */
class VisibilityAndDelayTest {
    @TempDir
    Path dir;
    EngineFixture q;

    @BeforeEach
    void open() {
        q = new EngineFixture(dir, PartitionConfig.STANDARD_DEFAULTS);
    }

    @AfterEach
    void close() {
        q.close();
    }

    @Test
    void receivedMessageCarriesBodyAttributesAndSystemAttributes() {
        Map<String, MessageAttributeValue> attributes = Map.of(
                "color", MessageAttributeValue.ofString("String", "blue"),
                "blob", MessageAttributeValue.ofBinary("Binary", new byte[] {1, 2, 3}));
        Map<String, MessageAttributeValue> system = Map.of("AWSTraceHeader",
                MessageAttributeValue.ofString("String", "Root=1-abc"));
        String id = q.send(new NewMessage("m-1", "hello\r\nworld", attributes, system, -1, null, null, "AIDEXAMPLE", null))
                .messageId();
        long sentAt = q.clock.nowMillis();
        q.advanceSeconds(2);

        DeliveredMessage got = q.receiveOne(30);
        assertEquals(id, got.message().messageId());
        assertEquals("hello\r\nworld", got.message().body());
        assertEquals(attributes, got.message().attributes());
        assertEquals(system, got.message().systemAttributes());
        assertEquals(sentAt, got.message().sentTimestampMillis());
        assertEquals("AIDEXAMPLE", got.message().senderId());
        assertEquals(1, got.delivery().receiveCount());
        assertEquals(sentAt + 2000, got.delivery().firstReceiveTimestampMillis());
    }

    @Test
    void leasedMessageIsInvisibleUntilItsTimeoutThenComesBackWithAHigherCount() {
        q.send("a");
        DeliveredMessage first = q.receiveOne(30);
        long firstReceive = first.delivery().firstReceiveTimestampMillis();
        q.advanceSeconds(29.999);
        assertTrue(q.receive(10, 30).isEmpty(), "invisible before the timeout");
        assertEquals(new QueueCounts(0, 1, 0, 0, EngineFixture.START), q.counts());

        q.advanceSeconds(0.001);
        DeliveredMessage second = q.receiveOne(30);
        assertEquals(2, second.delivery().receiveCount());
        assertEquals(firstReceive, second.delivery().firstReceiveTimestampMillis(), "first receive is set once");
        assertTrue(!first.delivery().receiptHandle().equals(second.delivery().receiptHandle()), "fresh handle");
    }

    @Test
    void visibilityTimeoutZeroLeavesTheMessageVisible() {
        q.send("a");
        DeliveredMessage first = q.receiveOne(0);
        assertEquals(new QueueCounts(1, 0, 0, 0, EngineFixture.START), q.counts());
        DeliveredMessage again = q.receiveOne(0);
        assertEquals(first.message().messageId(), again.message().messageId());
        assertEquals(2, again.delivery().receiveCount());
    }

    @Test
    void oneReceiveNeverReturnsTheSameMessageTwice() {
        q.send("a");
        q.send("b");
        List<DeliveredMessage> got = q.receive(10, 0);
        assertEquals(List.of("a", "b"), q.bodies(got));
    }

    @Test
    void receiveUsesTheQueueDefaultTimeoutWhenNoneIsGiven() {
        q.send("a");
        q.receiveOne(-1);
        q.advanceSeconds(PartitionConfig.STANDARD_DEFAULTS.visibilityTimeoutSeconds() - 1);
        assertTrue(q.receive(1, -1).isEmpty());
        q.advanceSeconds(1);
        q.receiveOne(-1);
    }

    @Test
    void heartbeatExtendsFromNowAndZeroReleases() {
        q.send("a");
        DeliveredMessage got = q.receiveOne(10);
        q.advanceSeconds(8);
        assertNull(q.changeVisibility(got.delivery().receiptHandle(), 10));
        q.advanceSeconds(9);
        assertTrue(q.receive(1, 10).isEmpty(), "extended to 18 s after the receive");
        assertNull(q.changeVisibility(got.delivery().receiptHandle(), 0));
        assertEquals(2, q.receiveOne(10).delivery().receiveCount(), "visible at once after a change to 0");
    }

    @Test
    void extensionBeyondTwelveHoursInFlightIsRejected() {
        q.send("a");
        DeliveredMessage got = q.receiveOne(43_200);
        q.advanceSeconds(3600);
        var tooLong = q.changeVisibility(got.delivery().receiptHandle(), 43_200 - 3600 + 1);
        assertEquals(SqsError.INVALID_PARAMETER_VALUE, tooLong.error());
        assertTrue(tooLong.message().contains("Total VisibilityTimeout"), tooLong.message());
        assertNull(q.changeVisibility(got.delivery().receiptHandle(), 43_200 - 3600), "exactly 12 h is allowed");
    }

    @Test
    void perMessageDelayHidesTheMessageAndCountsItAsDelayed() {
        q.send(NewMessage.of("m-1", "late").withDelaySeconds(5));
        q.send("now");
        assertEquals(new QueueCounts(1, 0, 1, 0, EngineFixture.START), q.counts());
        assertEquals(List.of("now"), q.bodies(q.receive(10, 60)));
        q.advanceSeconds(4.999);
        assertTrue(q.receive(10, 60).isEmpty());
        q.advanceSeconds(0.001);
        assertEquals(List.of("late"), q.bodies(q.receive(10, 60)));
    }

    @Test
    void queueDelayAppliesUnlessTheMessageSetsItsOwnAndIsNotRetroactive() {
        q.apply(new PartitionCommand.Configure(PartitionConfig.STANDARD_DEFAULTS.withDelaySeconds(10)));
        q.send("queue-delay");
        q.send(NewMessage.of("m-2", "no-delay").withDelaySeconds(0));
        q.apply(new PartitionCommand.Configure(PartitionConfig.STANDARD_DEFAULTS.withDelaySeconds(0)));
        assertEquals(List.of("no-delay"), q.bodies(q.receive(10, 60)), "standard queues: not retroactive");
        q.advanceSeconds(10);
        assertEquals(List.of("queue-delay"), q.bodies(q.receive(10, 60)));
    }

    @Test
    void delayThenVisibilityTimeoutCountFromTheirOwnStarts() {
        q.send(NewMessage.of("m-1", "a").withDelaySeconds(5));
        q.advanceSeconds(7);
        DeliveredMessage got = q.receiveOne(10);
        assertEquals(EngineFixture.START + 7000, got.delivery().firstReceiveTimestampMillis());
        q.advanceSeconds(9.999);
        assertTrue(q.receive(1, 10).isEmpty(), "lease counts from the receive, not from the send");
        q.advanceSeconds(0.001);
        assertEquals(2, q.receiveOne(10).delivery().receiveCount());
    }

    @Test
    void sendSignalsWaitingPollsWhenSomethingIsVisibleAndWhenTheNextDeadlineMovesEarlier() {
        q.send(NewMessage.of("m-1", "later").withDelaySeconds(5));
        assertEquals(List.of(new Effect.VisibleAt(EngineFixture.PARTITION, EngineFixture.START + 5000)), q.effects,
                "a delayed message wakes nobody now: parked polls learn when to wake");
        assertEquals(EngineFixture.START + 5000, q.engine.state().nextDeadlineMillis());
        q.send(NewMessage.of("m-2", "later still").withDelaySeconds(9));
        assertEquals(1, q.effects.size(), "a later deadline than the next one is nothing new");
        q.send(NewMessage.of("m-3", "sooner").withDelaySeconds(2));
        assertEquals(new Effect.VisibleAt(EngineFixture.PARTITION, EngineFixture.START + 2000), q.effects.get(1));
        q.send("now");
        assertInstanceOf(Effect.MessagesAvailable.class, q.effects.get(q.effects.size() - 1));
        q.effects.clear();
        q.receiveOne(30); // a lease is a deadline too: visible again when it lapses
        assertEquals(List.of(), q.effects, "the lease ends after the delayed ones: nothing new");
    }

    @Test
    void leaderTimeGoingBackwardsIsClampedSoDeadlinesHold() {
        q.send("a");
        q.receiveOne(30);
        q.clock.set(EngineFixture.START - 60_000);
        q.advanceSeconds(31);
        assertTrue(q.receive(1, 30).isEmpty(), "the engine's time never goes back, so the lease still holds");
    }

    @Test
    void inflightLimitAnswersOverLimitOnStandardQueues() {
        q.apply(new PartitionCommand.Configure(PartitionConfig.STANDARD_DEFAULTS.withMaxInflight(2)));
        for (int i = 0; i < 3; i++) {
            q.send("m" + i);
        }
        assertEquals(2, q.receive(10, 60).size(), "a receive is capped by the room left");
        var rejected = assertInstanceOf(PartitionResponse.Rejected.class,
                q.apply(new PartitionCommand.Receive(1, 60, null)).response());
        assertEquals(SqsError.OVER_LIMIT, rejected.failure().error());
    }
}
