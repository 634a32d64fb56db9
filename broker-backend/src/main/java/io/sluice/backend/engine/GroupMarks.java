package io.sluice.backend.engine;

/**
 * FIFO queues with a reorder window: per message group, the latest producer order delivered (its high-water mark).
 * A message that arrives ordered before its group's mark is a straggler: something produced after it has already been
 * delivered, so it is delivered at once and flagged {@code Sluice.Late}. A mark is remembered for
 * {@link #REMEMBER_MILLIS} after the group's last delivery, like a deduplication id: a straggler later than that is
 * no longer recognised as late (docs/architecture.md, "Producer order").
 */
final class GroupMarks {
    /** How long a group's mark outlives its last delivery. */
    static final long REMEMBER_MILLIS = 5 * 60_000L;

    /** The producer order (order time, producer id) of the latest message delivered from a group. */
    record Mark(String groupId, long orderMillis, String producerId, long expiresAtMillis) {
        /** Whether {@code e} comes before this mark in producer order (it is late). */
        boolean isAfter(MessageEntry e) {
            int c = Long.compare(e.orderMillis, orderMillis);
            return c < 0 || (c == 0 && e.producerIdOrEmpty().compareTo(producerId == null ? "" : producerId) < 0);
        }

        String describe() {
            return orderMillis + "/" + producerId + " until " + expiresAtMillis;
        }
    }

    private GroupMarks() {
    }

    static ExpiringRegistry<Mark> create() {
        return new ExpiringRegistry<>(Mark::groupId, Mark::expiresAtMillis);
    }
}
