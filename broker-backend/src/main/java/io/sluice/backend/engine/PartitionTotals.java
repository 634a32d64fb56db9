package io.sluice.backend.engine;

import io.sluice.partition.DeadLetterReason;

/**
 * Running totals of what happened to a partition's messages since it was created: messages stored by sends,
 * deliveries, deletes, drops at retention, purges, dead-letter hand-offs by reason, and FIFO stragglers that arrived
 * after a message later in producer order was delivered ({@code late}, flagged {@code Sluice.Late}). They are kept in the
 * partition's meta record, written with every command, so every replica holds the same figures and they survive
 * restarts and fail-overs: a shard's primary exports them as counters that never double count or reset.
 */
public record PartitionTotals(long sent, long received, long deleted, long expired, long purged,
                              long deadLetteredMaxReceives, long deadLetteredRetention, long deadLetteredSourceDeleted,
                              long late) {

    public static final PartitionTotals ZERO = new PartitionTotals(0, 0, 0, 0, 0, 0, 0, 0, 0);

    /** Without late messages (a queue without a reorder window). */
    public PartitionTotals(long sent, long received, long deleted, long expired, long purged,
                           long deadLetteredMaxReceives, long deadLetteredRetention, long deadLetteredSourceDeleted) {
        this(sent, received, deleted, expired, purged, deadLetteredMaxReceives, deadLetteredRetention,
                deadLetteredSourceDeleted, 0);
    }

    PartitionTotals withLate(long n) {
        return new PartitionTotals(sent, received, deleted, expired, purged, deadLetteredMaxReceives,
                deadLetteredRetention, deadLetteredSourceDeleted, n);
    }

    public long deadLettered(DeadLetterReason reason) {
        return switch (reason) {
            case MAX_RECEIVES_EXCEEDED -> deadLetteredMaxReceives;
            case RETENTION_EXPIRED -> deadLetteredRetention;
            case SOURCE_QUEUE_DELETED -> deadLetteredSourceDeleted;
        };
    }

    /** The mutable form the engine counts in (applier thread only). */
    static final class Counter {
        long sent;
        long received;
        long deleted;
        long expired;
        long purged;
        long late;
        final long[] deadLettered = new long[DeadLetterReason.values().length];

        void deadLettered(DeadLetterReason reason) {
            deadLettered[reason.ordinal()]++;
        }

        PartitionTotals snapshot() {
            return new PartitionTotals(sent, received, deleted, expired, purged,
                    deadLettered[DeadLetterReason.MAX_RECEIVES_EXCEEDED.ordinal()],
                    deadLettered[DeadLetterReason.RETENTION_EXPIRED.ordinal()],
                    deadLettered[DeadLetterReason.SOURCE_QUEUE_DELETED.ordinal()], late);
        }

        void restore(PartitionTotals t) {
            sent = t.sent();
            received = t.received();
            deleted = t.deleted();
            expired = t.expired();
            purged = t.purged();
            late = t.late();
            deadLettered[DeadLetterReason.MAX_RECEIVES_EXCEEDED.ordinal()] = t.deadLetteredMaxReceives();
            deadLettered[DeadLetterReason.RETENTION_EXPIRED.ordinal()] = t.deadLetteredRetention();
            deadLettered[DeadLetterReason.SOURCE_QUEUE_DELETED.ordinal()] = t.deadLetteredSourceDeleted();
        }
    }
}
