package io.sluice.backend.engine;

import io.sluice.partition.DeadLetterReason;
import java.util.Comparator;

/**
 * The in-memory index entry of one message: ids, deadlines and counters only; the body stays on disk.
 * Mutable, owned by {@link PartitionQueueState}; its durable copy is the {@code s} record.
 *
 * <p>Classification at time {@code now} (derived, never stored):
 * <ul>
 *   <li>dead-letter pending: {@code deadLetterReason != null} (in the pending indexes only;
 *       {@code visibleAtMillis} is then when it was handed off);</li>
 *   <li>visible: {@code visibleAtMillis <= now};</li>
 *   <li>in flight: not visible and leased in this queue ({@code receivedAtMillis > 0});</li>
 *   <li>delayed: not visible and never leased here.</li>
 * </ul>
 */
final class MessageEntry {
    /** Orders by (visibleAt, seq): visible messages are a prefix of an index sorted this way. */
    static final Comparator<MessageEntry> BY_VISIBLE_AT =
            Comparator.<MessageEntry>comparingLong(e -> e.visibleAtMillis).thenComparingLong(e -> e.seq);
    /** Orders by (retentionBase, seq): the next to expire first. */
    static final Comparator<MessageEntry> BY_RETENTION =
            Comparator.<MessageEntry>comparingLong(e -> e.retentionBaseMillis).thenComparingLong(e -> e.seq);

    final long seq;
    long visibleAtMillis;
    long retentionBaseMillis;
    /** Start of the current (or last) lease in this queue, 0 if never leased here. Bounds the 12 h limit. */
    long receivedAtMillis;
    long firstReceiveMillis;
    int receiveCount;
    DeadLetterReason deadLetterReason;
    /** FIFO only: the message group this message belongs to (null while a dead-letter hand-off is pending). */
    FifoGroup group;
    /** FIFO only: its group's id, kept while a hand-off is pending (the message left the group) and stored. */
    String fifoGroupId;

    MessageEntry(long seq) {
        this.seq = seq;
    }

    static MessageEntry probe(long visibleAtOrRetention, long seq) {
        MessageEntry e = new MessageEntry(seq);
        e.visibleAtMillis = visibleAtOrRetention;
        e.retentionBaseMillis = visibleAtOrRetention;
        return e;
    }

    String groupId() {
        return fifoGroupId;
    }

    boolean isDeadLetterPending() {
        return deadLetterReason != null;
    }

    Status status(long nowMillis) {
        if (deadLetterReason != null) {
            return Status.DEAD_LETTER_PENDING;
        }
        if (visibleAtMillis <= nowMillis) {
            return Status.VISIBLE;
        }
        return receivedAtMillis > 0 ? Status.INFLIGHT : Status.DELAYED;
    }

    enum Status {
        VISIBLE, INFLIGHT, DELAYED, DEAD_LETTER_PENDING
    }

    @Override
    public String toString() {
        return "seq=" + seq + " visibleAt=" + visibleAtMillis + " retentionBase=" + retentionBaseMillis
                + " receivedAt=" + receivedAtMillis + " firstReceive=" + firstReceiveMillis + " receives=" + receiveCount
                + (deadLetterReason != null ? " deadLetter=" + deadLetterReason : "")
                + (group != null ? " group=" + group.id : "");
    }
}
