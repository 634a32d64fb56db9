package io.sluice.backend.engine;

import io.sluice.partition.PartitionConfig;
import io.sluice.partition.QueueCounts;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.common.ReceiptHandle;
import io.sluice.common.SqsError;
import io.sluice.common.SqsFailure;
import io.sluice.partition.DeliveredMessage;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Delete and ChangeMessageVisibility with current, stale, foreign and forged receipt handles. */
class ReceiptHandleRulesTest {
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
    void deleteRemovesForGoodAndRepeatingItSucceeds() {
        q.send("a");
        ReceiptHandle h = q.receiveOne(0).delivery().receiptHandle();
        assertNull(q.delete(h));
        assertNull(q.delete(h), "deleting an already-deleted message succeeds");
        q.advanceSeconds(3600);
        assertTrue(q.receive(10, 30).isEmpty());
        assertEquals(new QueueCounts(0, 0, 0, 0, -1), q.counts());
    }

    @Test
    void staleHandleAfterVisibilityExpiredStillDeletes() {
        q.send("a");
        ReceiptHandle h = q.receiveOne(5).delivery().receiptHandle();
        q.advanceSeconds(6);
        assertNull(q.delete(h));
        assertTrue(q.receive(10, 30).isEmpty());
    }

    @Test
    void handleFromAnEarlierReceiveStillDeletesOnStandardQueues() {
        q.send("a");
        ReceiptHandle old = q.receiveOne(5).delivery().receiptHandle();
        q.advanceSeconds(6);
        q.receiveOne(5);
        assertNull(q.delete(old));
        q.advanceSeconds(6);
        assertTrue(q.receive(10, 30).isEmpty());
    }

    @Test
    void foreignOrForgedHandlesAreInvalid() {
        q.send("a");
        ReceiptHandle real = q.receiveOne(30).delivery().receiptHandle();
        ReceiptHandle otherQueue = new ReceiptHandle(real.queueId() + 1, real.partition(), real.seq(), 1);
        ReceiptHandle otherPartition = new ReceiptHandle(real.queueId(), real.partition() + 1, real.seq(), 1);
        ReceiptHandle neverIssuedSeq = new ReceiptHandle(real.queueId(), real.partition(), real.seq() + 100, 1);
        ReceiptHandle futureReceive = new ReceiptHandle(real.queueId(), real.partition(), real.seq(), 2);
        for (ReceiptHandle bad : new ReceiptHandle[] {otherQueue, otherPartition, neverIssuedSeq, futureReceive}) {
            SqsFailure f = q.delete(bad);
            assertEquals(SqsError.RECEIPT_HANDLE_IS_INVALID, f.error(), bad.toString());
            assertEquals("The input receipt handle \"" + bad.encode() + "\" is not a valid receipt handle.", f.message());
            assertEquals(SqsError.RECEIPT_HANDLE_IS_INVALID, q.changeVisibility(bad, 10).error());
        }
        assertEquals(new QueueCounts(0, 1, 0, 0, EngineFixture.START), q.counts(), "nothing changed");
    }

    @Test
    void changeVisibilityOfADeletedMessageIsRejected() {
        q.send("a");
        ReceiptHandle h = q.receiveOne(30).delivery().receiptHandle();
        q.delete(h);
        SqsFailure f = q.changeVisibility(h, 10);
        assertEquals(SqsError.INVALID_PARAMETER_VALUE, f.error());
        assertTrue(f.message().endsWith("Message does not exist or is not available for visibility timeout change."));
    }

    @Test
    void changeVisibilityWithAHandleFromAnEarlierReceiveIsRejected() {
        q.send("a");
        ReceiptHandle old = q.receiveOne(5).delivery().receiptHandle();
        q.advanceSeconds(6);
        DeliveredMessage current = q.receiveOne(30);
        assertEquals(SqsError.INVALID_PARAMETER_VALUE, q.changeVisibility(old, 0).error());
        assertTrue(q.receive(1, 30).isEmpty(), "the current lease is untouched");
        assertNull(q.changeVisibility(current.delivery().receiptHandle(), 0));
    }

    @Test
    void changeVisibilityAfterExpiryButBeforeAnotherReceiveLeasesAgain() {
        q.send("a");
        ReceiptHandle h = q.receiveOne(5).delivery().receiptHandle();
        q.advanceSeconds(6);
        assertNull(q.changeVisibility(h, 30), "standard queues accept the expired handle");
        assertTrue(q.receive(1, 30).isEmpty());
        assertEquals(1, q.counts().inflight());
    }
}
