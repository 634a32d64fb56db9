package io.sluice.backend.engine;

import io.sluice.partition.NewMessage;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionConfig;
import io.sluice.partition.PartitionResponse;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.common.MessageDigests;
import io.sluice.common.ReceiptHandle;
import io.sluice.common.SqsError;
import io.sluice.partition.DeliveredMessage;
import io.sluice.partition.PartitionResponse.SentMessage;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** FIFO: order within a group, group blocking, deduplication, receive attempts, expired handles. */
class FifoRulesTest {
    @TempDir
    Path dir;
    EngineFixture q;

    @BeforeEach
    void open() {
        q = new EngineFixture(dir, PartitionConfig.FIFO_DEFAULTS);
    }

    @AfterEach
    void close() {
        q.close();
    }

    @Test
    void deliversAGroupInSendOrderAndBlocksItWhileAnythingIsInFlight() {
        q.sendFifo("g", "1");
        q.sendFifo("g", "2");
        q.sendFifo("g", "3");
        assertEquals(List.of("1"), q.bodies(q.receive(1, 30)));
        assertTrue(q.receive(10, 30).isEmpty(), "group blocked while 1 is in flight");
        q.advanceSeconds(30);
        List<DeliveredMessage> again = q.receive(2, 30);
        assertEquals(List.of("1", "2"), q.bodies(again), "the expired message comes back first");
        assertNull(q.delete(again.get(0).delivery().receiptHandle()));
        assertTrue(q.receive(10, 30).isEmpty(), "2 is still in flight: the group stays blocked");
        assertNull(q.delete(again.get(1).delivery().receiptHandle()));
        assertEquals(List.of("3"), q.bodies(q.receive(10, 30)));
    }

    @Test
    void releasingTheHeadWhileALaterMessageIsInFlightKeepsTheGroupBlocked() {
        q.sendFifo("g", "1");
        q.sendFifo("g", "2");
        List<DeliveredMessage> both = q.receive(2, 30);
        assertNull(q.changeVisibility(both.get(0).delivery().receiptHandle(), 0));
        assertTrue(q.receive(10, 30).isEmpty(), "2 is still in flight");
        assertNull(q.changeVisibility(both.get(1).delivery().receiptHandle(), 0));
        assertEquals(List.of("1", "2"), q.bodies(q.receive(10, 30)));
    }

    @Test
    void aBlockedGroupDoesNotHoldUpOtherGroups() {
        q.sendFifo("a", "a1");
        q.sendFifo("a", "a2");
        q.sendFifo("b", "b1");
        assertEquals(List.of("a1"), q.bodies(q.receive(1, 30)));
        assertEquals(List.of("b1"), q.bodies(q.receive(10, 30)));
    }

    @Test
    void aReceiveFillsFromOneGroupBeforeMovingOn() {
        q.sendFifo("a", "a1");
        q.sendFifo("b", "b1");
        q.sendFifo("a", "a2");
        q.sendFifo("b", "b2");
        assertEquals(List.of("a1", "a2", "b1", "b2"), q.bodies(q.receive(10, 30)));
    }

    @Test
    void visibilityZeroKeepsTheGroupOpenAndRedeliversTheHead() {
        q.sendFifo("g", "1");
        q.sendFifo("g", "2");
        assertEquals(List.of("1"), q.bodies(q.receive(1, 0)));
        assertEquals(List.of("1", "2"), q.bodies(q.receive(10, 30)));
    }

    @Test
    void expiredHandleCannotDeleteOrChangeVisibility() {
        q.sendFifo("g", "1");
        ReceiptHandle h = q.receiveOne(5).delivery().receiptHandle();
        q.advanceSeconds(5);
        var f = q.delete(h);
        assertEquals(SqsError.INVALID_PARAMETER_VALUE, f.error());
        assertEquals("Value " + h.encode() + " for parameter ReceiptHandle is invalid. Reason: The receipt handle"
                + " has expired.", f.message());
        assertEquals(SqsError.INVALID_PARAMETER_VALUE, q.changeVisibility(h, 30).error());
        assertEquals(List.of("1"), q.bodies(q.receive(10, 30)), "the message was not deleted");
    }

    @Test
    void duplicateWithinFiveMinutesReturnsTheOriginalAndEnqueuesNothing() {
        SentMessage original = q.send(NewMessage.fifo("id-1", "body", "g", "dedup-1"));
        SentMessage duplicate = q.send(NewMessage.fifo("id-2", "other body", "other-group", "dedup-1"));
        assertTrue(duplicate.duplicate());
        assertEquals("id-1", duplicate.messageId());
        assertEquals(original.sequenceNumber(), duplicate.sequenceNumber());
        assertEquals(1, q.counts().visible(), "queue-wide scope: another group does not escape the window");

        q.receive(10, 30).forEach(d -> q.delete(d.delivery().receiptHandle()));
        q.advanceSeconds(299.999);
        assertTrue(q.send(NewMessage.fifo("id-3", "body", "g", "dedup-1")).duplicate(),
                "remembered after the original was deleted");
        q.advanceSeconds(0.001);
        SentMessage after = q.send(NewMessage.fifo("id-4", "body", "g", "dedup-1"));
        assertFalse(after.duplicate(), "the window is five minutes from the first send");
        assertEquals(1, q.counts().visible());
    }

    @Test
    void contentBasedDeduplicationHashesTheBody() {
        q.apply(new PartitionCommand.Configure(PartitionConfig.FIFO_DEFAULTS.withContentBasedDeduplication(true)));
        q.send(NewMessage.fifo("id-1", "same", "g", null));
        assertTrue(q.send(NewMessage.fifo("id-2", "same", "g", null)).duplicate());
        assertFalse(q.send(NewMessage.fifo("id-3", "different", "g", null)).duplicate());
        assertFalse(q.send(NewMessage.fifo("id-4", "same", "g", "explicit")).duplicate(), "explicit id overrides");
        DeliveredMessage first = q.receiveOne(30);
        assertEquals(MessageDigests.contentDeduplicationId("same"), first.message().deduplicationId());
    }

    @Test
    void messageGroupScopeDeduplicatesPerGroup() {
        q.apply(new PartitionCommand.Configure(PartitionConfig.FIFO_DEFAULTS.withDeduplicationPerGroup(true)));
        q.send(NewMessage.fifo("id-1", "x", "a", "d"));
        assertFalse(q.send(NewMessage.fifo("id-2", "x", "b", "d")).duplicate());
        assertTrue(q.send(NewMessage.fifo("id-3", "x", "a", "d")).duplicate());
    }

    @Test
    void sequenceNumbersIncreaseWithinAGroup() {
        SentMessage a = q.send(NewMessage.fifo("1", "x", "g", "d1"));
        SentMessage b = q.send(NewMessage.fifo("2", "x", "g", "d2"));
        assertTrue(a.sequenceNumber().compareTo(b.sequenceNumber()) < 0);
        assertEquals(20, a.sequenceNumber().length());
    }

    /** Applied on every replica: the number must not depend on the JVM's default locale (Thai digits here). */
    @Test
    void sequenceNumbersAreAsciiDigitsWhateverTheDefaultLocale() {
        java.util.Locale saved = java.util.Locale.getDefault();
        try {
            java.util.Locale.setDefault(java.util.Locale.forLanguageTag("th-TH-u-nu-thai"));
            SentMessage a = q.send(NewMessage.fifo("1", "x", "g", "d1"));
            assertTrue(a.sequenceNumber().matches("[0-9]{20}"), a.sequenceNumber());
        } finally {
            java.util.Locale.setDefault(saved);
        }
    }

    @Test
    void sendWithoutGroupOrDeduplicationIdIsRejectedWhole() {
        var noGroup = assertInstanceOf(PartitionResponse.Rejected.class, q.apply(new PartitionCommand.Send(List.of(
                NewMessage.fifo("1", "x", "g", "d"), NewMessage.of("2", "y")))).response());
        assertEquals(SqsError.MISSING_PARAMETER, noGroup.failure().error());
        var noDedup = assertInstanceOf(PartitionResponse.Rejected.class, q.apply(new PartitionCommand.Send(List.of(
                NewMessage.fifo("1", "x", "g", null)))).response());
        assertEquals(SqsError.INVALID_PARAMETER_VALUE, noDedup.failure().error());
        assertEquals(0, q.counts().visible(), "nothing stored");
    }

    @Test
    void retriedReceiveAttemptGetsTheSameMessagesAndHandles() {
        q.sendFifo("g", "1");
        q.sendFifo("g", "2");
        var first = q.apply(new PartitionCommand.Receive(1, 30, "attempt-1")).delivered();
        q.advanceSeconds(20);
        var retry = q.apply(new PartitionCommand.Receive(1, 30, "attempt-1")).delivered();
        assertEquals(first.get(0).delivery().receiptHandle(), retry.get(0).delivery().receiptHandle());
        assertEquals(1, retry.get(0).delivery().receiveCount());
        q.advanceSeconds(29);
        assertTrue(q.receive(10, 30).isEmpty(), "the retry restarted the visibility timeout");

        assertNull(q.delete(retry.get(0).delivery().receiptHandle()));
        var afterDelete = q.apply(new PartitionCommand.Receive(1, 30, "attempt-1")).delivered();
        assertEquals(List.of("2"), q.bodies(afterDelete), "a modified attempt is a new receive");
    }

    @Test
    void queueDelayIsRetroactiveOnFifoQueues() {
        q.apply(new PartitionCommand.Configure(PartitionConfig.FIFO_DEFAULTS.withDelaySeconds(60)));
        q.sendFifo("g", "1");
        assertTrue(q.receive(1, 30).isEmpty());
        q.advanceSeconds(10);
        q.apply(new PartitionCommand.Configure(PartitionConfig.FIFO_DEFAULTS.withDelaySeconds(5)));
        assertEquals(List.of("1"), q.bodies(q.receive(1, 30)), "now 10 s after a send with a 5 s delay");
    }

    @Test
    void inflightLimitOnFifoReturnsNothingInsteadOfAnError() {
        q.apply(new PartitionCommand.Configure(PartitionConfig.FIFO_DEFAULTS.withMaxInflight(1)));
        q.sendFifo("a", "a1");
        q.sendFifo("b", "b1");
        assertEquals(1, q.receive(10, 30).size());
        assertTrue(q.receive(10, 30).isEmpty());
    }
}
