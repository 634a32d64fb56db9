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
 *   <li>in flight: not visible, leased in this queue ({@code receivedAtMillis > 0}) and its lease not yet lapsed
 *       into a redelivery backoff ({@code backoffFromMillis} 0 or after now);</li>
 *   <li>delayed: not visible and never leased here, or waiting out a redelivery backoff (its lease lapsed at
 *       {@code backoffFromMillis}; it is visible again at {@code visibleAtMillis}).</li>
 * </ul>
 */
final class MessageEntry {
    /** Orders by (visibleAt, seq): visible messages are a prefix of an index sorted this way. */
    static final Comparator<MessageEntry> BY_VISIBLE_AT =
            Comparator.<MessageEntry>comparingLong(e -> e.visibleAtMillis).thenComparingLong(e -> e.seq);
    /** Orders by (backoffFrom, seq): the next lapsed lease to start its redelivery backoff first. */
    static final Comparator<MessageEntry> BY_BACKOFF_FROM =
            Comparator.<MessageEntry>comparingLong(e -> e.backoffFromMillis).thenComparingLong(e -> e.seq);
    /**
     * FIFO: orders a message group by producer order, (order time, producer id, seq): arrival order on queues without
     * a reorder window, where the order time is the arrival time and there is no producer id.
     */
    static final Comparator<MessageEntry> BY_PRODUCER_ORDER = Comparator.<MessageEntry>comparingLong(e -> e.orderMillis)
            .thenComparing(MessageEntry::producerIdOrEmpty).thenComparingLong(e -> e.seq);
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
    /**
     * When the current lease lapses into a redelivery backoff ({@code SluiceRedeliveryBackoff}): from then until
     * {@code visibleAtMillis} the message counts as delayed, not in flight. 0 = no backoff (the lease ends at
     * {@code visibleAtMillis}).
     */
    long backoffFromMillis;
    /**
     * FIFO: when the message was produced, for its place in its group: its {@code Sluice.ProducerTime} (never after
     * its arrival) on a queue with a reorder window, else its arrival time; 0 in records written before it existed.
     */
    long orderMillis;
    /** FIFO: its {@code Sluice.ProducerId} (ties between equal producer times), or null. */
    String producerId;
    /**
     * FIFO with a reorder window: when the window let the message go (its order time plus the window at its send);
     * 0 without one. A retroactive change of the queue's delay keeps it.
     */
    long releaseMillis;
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

    static MessageEntry probeBackoff(long backoffFrom, long seq) {
        MessageEntry e = new MessageEntry(seq);
        e.backoffFromMillis = backoffFrom;
        return e;
    }

    String producerIdOrEmpty() {
        return producerId == null ? "" : producerId;
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
        return isLeasedAt(nowMillis) ? Status.INFLIGHT : Status.DELAYED;
    }

    /** Leased at {@code nowMillis}, given it is not visible then: received here, and not backing off yet. */
    boolean isLeasedAt(long nowMillis) {
        return receivedAtMillis > 0 && (backoffFromMillis == 0 || backoffFromMillis > nowMillis);
    }

    /** Whether the lease lapses into a backoff (in the index's backoff set). */
    boolean backsOff() {
        return backoffFromMillis > 0;
    }

    enum Status {
        VISIBLE, INFLIGHT, DELAYED, DEAD_LETTER_PENDING
    }

    @Override
    public String toString() {
        return "seq=" + seq + " visibleAt=" + visibleAtMillis + " retentionBase=" + retentionBaseMillis
                + " receivedAt=" + receivedAtMillis + " firstReceive=" + firstReceiveMillis + " receives=" + receiveCount
                + (backoffFromMillis > 0 ? " backoffFrom=" + backoffFromMillis : "")
                + (orderMillis > 0 ? " order=" + orderMillis + (producerId != null ? "/" + producerId : "") : "")
                + (deadLetterReason != null ? " deadLetter=" + deadLetterReason : "")
                + (group != null ? " group=" + group.id : "");
    }
}
