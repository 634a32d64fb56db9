package io.sluice.frontend.action;

import io.sluice.catalog.QueueMetadata;
import io.sluice.common.SqsError;
import io.sluice.common.SqsException;
import io.sluice.common.validation.QueueAttributes;

/**
 * The Sluice extension attribute {@code SluicePartitions}: how many partitions a queue has (1-64, default 1), set
 * when the queue is created; SetQueueAttributes can raise it for a standard queue that runs hot (never lower it, and
 * never change a FIFO queue's). FIFO queues hash MessageGroupId to a partition (a group's order is
 * kept by one primary); standard queues spread sends and receive from whichever partition has messages. Returned by
 * GetQueueAttributes when asked for by name, or with {@code All} when it is above 1.
 */
final class Partitions {
    static final String ATTRIBUTE = "SluicePartitions";
    static final int MAX = 64;

    private Partitions() {
    }

    /** The partition count SetQueueAttributes asks for, if it is allowed for this queue (equal, or a raise). */
    static int checkRaise(QueueMetadata queue, String value) {
        int n = parse(value);
        if (n == queue.partitions()) {
            return n;
        }
        if (queue.fifo()) {
            throw new SqsException(SqsError.INVALID_ATTRIBUTE_VALUE, "Invalid value for the parameter " + ATTRIBUTE
                    + ". Reason: The partition count of a FIFO queue cannot change.");
        }
        if (n < queue.partitions()) {
            throw new SqsException(SqsError.INVALID_ATTRIBUTE_VALUE, "Invalid value for the parameter " + ATTRIBUTE
                    + ". Reason: The partition count can only be raised (it is " + queue.partitions() + ").");
        }
        return n;
    }

    /**
     * A FIFO queue's partitions each deduplicate their own messages, and a message group lives on one partition: so
     * with several partitions deduplication can only be per message group (as SQS's high-throughput FIFO queues
     * require). Queue-wide deduplication on such a queue would let one deduplication id through once per partition.
     */
    static void checkDeduplicationScope(int partitions, QueueAttributes attributes) {
        if (attributes.fifo() && partitions > 1 && attributes.deduplicationScope()
                != QueueAttributes.DeduplicationScope.MESSAGE_GROUP) {
            throw new SqsException(SqsError.INVALID_ATTRIBUTE_VALUE, "Invalid value for the parameter"
                    + " DeduplicationScope. Reason: A FIFO queue with more than one partition (" + ATTRIBUTE
                    + ") deduplicates per message group: DeduplicationScope must be messageGroup.");
        }
    }

    static int parse(String value) {
        if (value == null) {
            return 1;
        }
        try {
            int n = Integer.parseInt(value.trim());
            if (n >= 1 && n <= MAX) {
                return n;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new SqsException(SqsError.INVALID_ATTRIBUTE_VALUE, "Invalid value for the parameter " + ATTRIBUTE
                + ". Reason: Must be between 1 and " + MAX + ".");
    }
}
