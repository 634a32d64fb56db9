package io.sluice.partition;

import io.sluice.common.ReceiptHandle;
import io.sluice.common.SqsFailure;
import java.util.List;

/** What a command answers. Domain errors are values ({@link Rejected}, per-entry failures), never exceptions. */
public sealed interface PartitionResponse {

    /** The whole command was refused (OverLimit, PurgeQueueInProgress, a retired partition, ...). */
    record Rejected(SqsFailure failure) implements PartitionResponse {
    }

    /** A command that answers nothing in particular. */
    record Done() implements PartitionResponse {
    }

    record Sent(List<SentMessage> messages) implements PartitionResponse {
        public Sent {
            messages = List.copyOf(messages);
        }
    }

    /**
     * @param duplicate true when a FIFO deduplication id matched: nothing was enqueued and the ids are the
     *                  original message's
     */
    record SentMessage(String messageId, long seq, String sequenceNumber, boolean duplicate) {
    }

    record Received(List<Delivery> deliveries) implements PartitionResponse {
        public Received {
            deliveries = List.copyOf(deliveries);
        }
    }

    /** One leased message; the body and attributes are read from storage by the caller. */
    record Delivery(long seq, ReceiptHandle receiptHandle, int receiveCount, long firstReceiveTimestampMillis) {
    }

    /** Per-entry outcomes of a batch, in request order; a null failure is success. */
    record EntryOutcomes(List<SqsFailure> failures) implements PartitionResponse {
        public boolean allSucceeded() {
            return failures.stream().allMatch(f -> f == null);
        }
    }

    record Count(int count) implements PartitionResponse {
    }
}
