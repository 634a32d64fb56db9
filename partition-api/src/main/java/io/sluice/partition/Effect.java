package io.sluice.partition;

/**
 * Side effects of a command, returned as data. Only the partition's primary executes them; replicas discard
 * them. A restarted or new primary re-derives pending hand-offs from state (broker-backend's {@code DeadLetterHandOffs}
 * scans them).
 */
public sealed interface Effect {

    /** Messages became visible: wake parked long polls. */
    record MessagesAvailable(PartitionId partition, int visibleCount) implements Effect {
    }

    /**
     * The partition's next deadline (a delayed or held message, a lease that lapses) moved earlier, to
     * {@code atMillis}: a long poll parked before it does not know it and must be woken then (nothing arrives then).
     */
    record VisibleAt(PartitionId partition, long atMillis) implements Effect {
    }

    /**
     * Copy message {@code seq} to the dead-letter queue, then acknowledge with
     * {@link PartitionCommand.AcknowledgeDeadLetters}. At least once: the copy is written before the source is
     * removed.
     */
    record DeadLetter(PartitionId partition, long seq, DeadLetterReason reason, int receiveCount,
                      long firstReceiveTimestampMillis) implements Effect {
    }
}
