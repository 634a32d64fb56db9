package io.sluice.partition;

import io.sluice.common.ReceiptHandle;
import java.util.List;
import java.util.Objects;

/**
 * The commands a partition's log carries. Each has a stable {@link #typeId()} used by the log codec:
 * add new commands with new ids, never renumber or reuse one.
 *
 * <table>
 *   <caption>Command versions</caption>
 *   <tr><th>id</th><th>command</th><th>since</th></tr>
 *   <tr><td>1</td><td>Configure</td><td>0.1</td></tr>
 *   <tr><td>2</td><td>Send</td><td>0.1</td></tr>
 *   <tr><td>3</td><td>Receive</td><td>0.1</td></tr>
 *   <tr><td>4</td><td>Delete</td><td>0.1</td></tr>
 *   <tr><td>5</td><td>ChangeVisibility</td><td>0.1</td></tr>
 *   <tr><td>6</td><td>Purge</td><td>0.1</td></tr>
 *   <tr><td>7</td><td>Expire</td><td>0.1</td></tr>
 *   <tr><td>8</td><td>AcknowledgeDeadLetters</td><td>0.1</td></tr>
 *   <tr><td>9</td><td>Retire</td><td>0.1</td></tr>
 *   <tr><td>10</td><td>StartMoveTask</td><td>0.2</td></tr>
 *   <tr><td>11</td><td>CancelMoveTask</td><td>0.2</td></tr>
 *   <tr><td>12</td><td>LeaseMoveBatch</td><td>0.2</td></tr>
 *   <tr><td>13</td><td>FinishMoveBatch</td><td>0.2</td></tr>
 * </table>
 */
public sealed interface PartitionCommand {
    int typeId();

    /** Sets the queue attributes the engine applies. */
    record Configure(PartitionConfig config) implements PartitionCommand {
        public Configure {
            Objects.requireNonNull(config, "config");
        }

        @Override
        public int typeId() {
            return 1;
        }
    }

    /** Enqueues messages in order (a batch keeps entry order within a FIFO group). */
    record Send(List<NewMessage> messages) implements PartitionCommand {
        public Send {
            messages = List.copyOf(messages);
        }

        @Override
        public int typeId() {
            return 2;
        }
    }

    /**
     * Leases up to {@code maxMessages} visible messages.
     *
     * @param visibilityTimeoutSeconds the lease, or {@code -1} for the queue's default
     * @param receiveRequestAttemptId  FIFO only: a retried receive with the same id gets the same messages
     */
    record Receive(int maxMessages, int visibilityTimeoutSeconds, String receiveRequestAttemptId)
            implements PartitionCommand {
        @Override
        public int typeId() {
            return 3;
        }
    }

    record Delete(List<ReceiptHandle> handles) implements PartitionCommand {
        public Delete {
            handles = List.copyOf(handles);
        }

        @Override
        public int typeId() {
            return 4;
        }
    }

    record ChangeVisibility(List<VisibilityChange> changes) implements PartitionCommand {
        public ChangeVisibility {
            changes = List.copyOf(changes);
        }

        @Override
        public int typeId() {
            return 5;
        }
    }

    record VisibilityChange(ReceiptHandle handle, int visibilityTimeoutSeconds) {
    }

    /** Deletes every message, in flight and delayed ones too. At most once per 60 s. */
    record Purge() implements PartitionCommand {
        @Override
        public int typeId() {
            return 6;
        }
    }

    /**
     * The leader's periodic sweep: expires up to {@code limit} messages past retention and forgets expired
     * deduplication ids and receive attempts.
     */
    record Expire(int limit) implements PartitionCommand {
        @Override
        public int typeId() {
            return 7;
        }
    }

    /** The dead-letter copies of these messages are stored: remove the source copies. */
    record AcknowledgeDeadLetters(List<Long> seqs) implements PartitionCommand {
        public AcknowledgeDeadLetters {
            seqs = List.copyOf(seqs);
        }

        @Override
        public int typeId() {
            return 8;
        }
    }

    /**
     * The queue is being deleted. With {@code handOff} and a redrive policy, every message is handed off to the
     * dead-letter queue (reason SOURCE_QUEUE_DELETED); otherwise all data is dropped. Afterwards the partition
     * accepts only acknowledgements.
     */
    record Retire(boolean handOff) implements PartitionCommand {
        @Override
        public int typeId() {
            return 9;
        }
    }

    /**
     * Starts this partition's share of a message move task (see {@link MoveTask}): answers {@code Count(toMove)}, the
     * messages visible now, or {@code Rejected} when a task is already running here.
     *
     * @param ratePerSecond the task's rate over all partitions, or 0 for no limit
     */
    record StartMoveTask(String taskId, String destinationArn, int ratePerSecond, long startedMillis)
            implements PartitionCommand {
        public StartMoveTask {
            Objects.requireNonNull(taskId, "taskId");
        }

        @Override
        public int typeId() {
            return 10;
        }
    }

    /** Cancels a running task: answers {@code Count(moved)}, or {@code Rejected} for an unknown or finished task. */
    record CancelMoveTask(String taskId) implements PartitionCommand {
        public CancelMoveTask {
            Objects.requireNonNull(taskId, "taskId");
        }

        @Override
        public int typeId() {
            return 11;
        }
    }

    /**
     * The next batch of a task: leases up to {@code maxMessages} visible messages to it (no receive counted) and
     * answers them as {@code Received}; a batch leased before and not finished is answered again instead. An empty
     * answer means there is nothing left to do: the task completed here (or is no longer running).
     */
    record LeaseMoveBatch(String taskId, int maxMessages) implements PartitionCommand {
        public LeaseMoveBatch {
            Objects.requireNonNull(taskId, "taskId");
        }

        @Override
        public int typeId() {
            return 12;
        }
    }

    /**
     * The messages {@code movedSeqs} of the task's leased {@code batch} (as {@link LeaseMoveBatch} answered it) are
     * stored at their destination: remove them here and count them; the rest of the batch becomes visible again. With a
     * {@code failureReason} (a destination refused a copy) the task fails. A finish for another batch than the one
     * leased now (a driver that lost its primacy, late) changes nothing. Answers {@code Count} of the messages moved.
     */
    record FinishMoveBatch(String taskId, List<Long> batch, List<Long> movedSeqs, String failureReason)
            implements PartitionCommand {
        public FinishMoveBatch {
            Objects.requireNonNull(taskId, "taskId");
            batch = List.copyOf(batch);
            movedSeqs = List.copyOf(movedSeqs);
        }

        @Override
        public int typeId() {
            return 13;
        }
    }
}
