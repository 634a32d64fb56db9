package io.sluice.backend.engine;

import java.util.ArrayDeque;

/**
 * One FIFO message group: its undelivered messages in producer order (send order on queues without a reorder
 * window), and how many of them are in flight. In-flight messages are a prefix of {@link #messages}, because a group
 * is only offered to a receive when nothing in it is in flight, and a receive leases from the head; with two
 * exceptions: a dead-letter hand-off that returns (its redrive policy was removed) and a late straggler take their
 * place by that order, possibly before messages in flight, and are next once those are done.
 */
final class FifoGroup {
    final String id;
    final ArrayDeque<MessageEntry> messages = new ArrayDeque<>();
    int inflight;
    /** Whether more of the group's messages wait on disk, after these in its order ({@link FifoColdGroups}). */
    boolean hasCold;
    /** The head seq under which this group sits in the ready set, or -1 when it is not there. */
    long readyKey = -1;

    FifoGroup(String id) {
        this.id = id;
    }

    /** A receive may take from this group: nothing in flight and the head message is visible. */
    boolean isReady(long nowMillis) {
        MessageEntry head = messages.peekFirst();
        return inflight == 0 && head != null && head.visibleAtMillis <= nowMillis;
    }
}
