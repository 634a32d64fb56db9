package io.sluice.backend.engine;

import io.sluice.common.MessageAttributeValue;
import io.sluice.common.ProducerOrder;
import io.sluice.partition.NewMessage;

/**
 * FIFO producer order, a part of {@link PartitionQueueState}: where a send with a producer time goes in its group
 * (the reorder window), when it may be delivered, whether it is late, and each group's mark (the latest producer order
 * a consumer received). Also records how late producer-timed sends arrive ({@link ArrivalSkew}).
 */
final class ProducerOrdering {
    private final PartitionQueueState s;
    /** FIFO with a reorder window: each group's latest producer order delivered (see {@link GroupMarks}). */
    final ExpiringRegistry<GroupMarks.Mark> marks = GroupMarks.create();
    /** FIFO: how late producer-timed messages arrive (in memory, per replica). */
    final ArrivalSkew skew = new ArrivalSkew();

    ProducerOrdering(PartitionQueueState s) {
        this.s = s;
    }

    /**
     * Places a FIFO send in its group's producer order and sets when it may be delivered (its {@code visibleAt} is the
     * queue delay's on entry). Records the arrival skew of producer-timed messages on every FIFO queue. With a reorder
     * window, the message is ordered by its producer time (never after its arrival: a producer clock ahead of the
     * partition's counts as the arrival) and producer id, and is deliverable once the partition's time passes that
     * order time plus the window, or its delay, whichever is later; without a producer time it is ordered by its
     * arrival and waits the window from then. A message ordered before its group's mark (something after it in
     * producer order was delivered) is late: it is not held back.
     *
     * @return whether the message is late
     */
    boolean placeInProducerOrder(NewMessage m, MessageEntry e, long now) {
        long producerTime = producerTime(m);
        if (producerTime >= 0) {
            skew.record(now - producerTime, now);
        }
        int window = s.config.reorderWindowMillis();
        if (window == 0) {
            return false;
        }
        if (producerTime >= 0) {
            e.orderMillis = Math.min(producerTime, now);
            MessageAttributeValue id = m.attributes().get(ProducerOrder.PRODUCER_ID);
            e.producerId = id == null || id.stringValue() == null ? null : id.stringValue();
        }
        GroupMarks.Mark mark = marks.find(m.groupId(), now);
        if (mark != null ? mark.isAfter(e) : inFlightAfter(m.groupId(), e)) {
            s.totals.late++;
            return true;
        }
        e.releaseMillis = e.orderMillis + window;
        e.visibleAtMillis = Math.max(e.visibleAtMillis, e.releaseMillis);
        return false;
    }

    /**
     * Whether a message of the group after {@code e} in producer order is in flight: delivered, so {@code e} is late,
     * though the group's mark has expired (a lease longer than the mark is kept). Scans the group only then.
     */
    private boolean inFlightAfter(String groupId, MessageEntry e) {
        FifoGroup g = s.index.group(groupId);
        if (g == null || g.inflight == 0) {
            return false;
        }
        for (MessageEntry other : g.messages) {
            if (other.status(s.index.nowMillis()) == MessageEntry.Status.INFLIGHT
                    && MessageEntry.BY_PRODUCER_ORDER.compare(other, e) > 0) {
                return true;
            }
        }
        return false;
    }

    /** A message's {@code Sluice.ProducerTime}, or -1 when it has none (or not a non-negative whole number). */
    private static long producerTime(NewMessage m) {
        MessageAttributeValue v = m.attributes().get(ProducerOrder.PRODUCER_TIME);
        return v == null || !v.dataType().startsWith("Number") ? -1 : ProducerOrder.parseProducerTime(v.stringValue());
    }

    /** A consumer received {@code e}: with a reorder window, its group's mark moves up to it. */
    void delivered(MessageEntry e, long now) {
        if (s.config.reorderWindowMillis() == 0 || e.fifoGroupId == null) {
            return;
        }
        GroupMarks.Mark mark = marks.find(e.fifoGroupId, now);
        GroupMarks.Mark next = mark == null || !mark.isAfter(e) // e is at or after the mark: the mark moves up
                ? new GroupMarks.Mark(e.fifoGroupId, e.orderMillis, e.producerId, now + GroupMarks.REMEMBER_MILLIS)
                : new GroupMarks.Mark(e.fifoGroupId, mark.orderMillis(), mark.producerId(),
                        now + GroupMarks.REMEMBER_MILLIS);
        marks.remember(next);
        s.mutations.add(new Mutation.Put(s.keys.groupMark(e.fifoGroupId), RecordCodec.encodeMark(next)));
    }
}
