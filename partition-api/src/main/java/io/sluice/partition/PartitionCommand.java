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
}
