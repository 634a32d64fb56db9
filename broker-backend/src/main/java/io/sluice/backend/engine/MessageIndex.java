package io.sluice.backend.engine;

import io.sluice.backend.engine.MessageEntry.Status;
import io.sluice.partition.DeadLetterReason;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Consumer;

/**
 * The in-memory index of one partition's messages: who is visible, in flight, delayed or waiting for a
 * dead-letter hand-off, ordered so that every question the engine asks is answered without a scan:
 *
 * <ul>
 *   <li>{@code byVisibleAt} (visibleAt, seq): visible messages are its prefix up to {@code now}; messages whose
 *       deadline passed since the last command are the sub-range (lastNow, now];</li>
 *   <li>{@code byRetention} (retention base, seq): the next message to expire is first;</li>
 *   <li>{@code byBackoffFrom} (backoff start, seq): leases that lapse into a redelivery backoff, the next first (an
 *       in-flight message turns delayed there);</li>
 *   <li>FIFO: one {@link FifoGroup} per message group, and {@code readyGroups} (head seq → group) holding exactly
 *       the groups a receive may take from, oldest head first.</li>
 * </ul>
 *
 * <p>Every change to an entry's deadline goes through {@link #detach} / {@link #attach}, which keep the sorted
 * sets and the counters exact. This class does no I/O; {@link PartitionQueueState} records the mutations.
 */
final class MessageIndex {
    private final Map<Long, MessageEntry> bySeq = new HashMap<>();
    private final TreeSet<MessageEntry> byVisibleAt = new TreeSet<>(MessageEntry.BY_VISIBLE_AT);
    private final TreeSet<MessageEntry> byRetention = new TreeSet<>(MessageEntry.BY_RETENTION);
    /** Leases that lapse into a redelivery backoff, by (backoffFrom, seq): in flight until then, delayed after. */
    private final TreeSet<MessageEntry> byBackoffFrom = new TreeSet<>(MessageEntry.BY_BACKOFF_FROM);
    private final TreeMap<Long, MessageEntry> deadLetterPending = new TreeMap<>();
    /** Pending hand-offs by (handed off at, seq): the oldest first, dropped a retention period after. */
    private final TreeSet<MessageEntry> pendingBySince = new TreeSet<>(MessageEntry.BY_VISIBLE_AT);
    private final Map<String, FifoGroup> groups = new HashMap<>();
    private final TreeMap<Long, FifoGroup> readyGroups = new TreeMap<>();
    /** Groups with cold messages whose last message in memory left since {@link #drainEmptiedWithCold}. */
    private final List<FifoGroup> emptiedWithCold = new ArrayList<>();
    private int visible;
    private int inflight;
    private int delayed;
    /** The time the counters and ready set are exact for. Never decreases. */
    private long nowMillis;

    MessageEntry get(long seq) {
        return bySeq.get(seq);
    }

    int size() {
        return bySeq.size();
    }

    int visibleCount() {
        return visible;
    }

    int inflightCount() {
        return inflight;
    }

    int delayedCount() {
        return delayed;
    }

    long nowMillis() {
        return nowMillis;
    }

    /**
     * Moves time forward: messages whose deadline is in (previous now, now] become visible. Cost is the number
     * of such messages, whatever the size of the queue.
     *
     * @return how many messages became visible
     */
    int advanceTo(long now) {
        if (now <= nowMillis) {
            return 0;
        }
        List<FifoGroup> touched = new ArrayList<>();
        // leases lapsing into a backoff in (previous now, now] that are still not visible at now: in flight -> delayed
        for (MessageEntry e : byBackoffFrom.subSet(MessageEntry.probeBackoff(nowMillis + 1, Long.MIN_VALUE), true,
                MessageEntry.probeBackoff(now, Long.MAX_VALUE), true)) {
            if (e.visibleAtMillis > now && e.receivedAtMillis > 0) {
                inflight--;
                delayed++;
                if (e.group != null) {
                    e.group.inflight--;
                    touched.add(e.group);
                }
            }
        }
        NavigableSet<MessageEntry> crossing = byVisibleAt.subSet(
                MessageEntry.probe(nowMillis + 1, Long.MIN_VALUE), true, MessageEntry.probe(now, Long.MAX_VALUE), true);
        int n = 0;
        for (MessageEntry e : crossing) {
            if (e.isLeasedAt(nowMillis)) { // its status before this advance
                inflight--;
                if (e.group != null) {
                    e.group.inflight--;
                }
            } else {
                delayed--;
            }
            visible++;
            n++;
            if (e.group != null) {
                touched.add(e.group);
            }
        }
        nowMillis = now;
        for (FifoGroup g : touched) {
            refreshReady(g);
        }
        return n;
    }

    /** Adds a new message; for FIFO it joins its group at its place in producer order. */
    void add(MessageEntry e, String fifoGroupId) {
        bySeq.put(e.seq, e);
        e.fifoGroupId = fifoGroupId;
        if (fifoGroupId != null && e.deadLetterReason == null) {
            joinGroup(e);
        }
        attach(e);
        if (e.group != null) {
            refreshReady(e.group);
        }
    }

    /**
     * Joins its group in producer order ({@link MessageEntry#BY_PRODUCER_ORDER}; arrival order without a reorder
     * window): the tail for a message produced after the others; its place for a straggler or a returning hand-off.
     */
    private void joinGroup(MessageEntry e) {
        FifoGroup g = groups.computeIfAbsent(e.fifoGroupId, FifoGroup::new);
        // from the tail: a message joins after those before it in order, at a cost of the ones it goes before
        ArrayDeque<MessageEntry> after = new ArrayDeque<>();
        while (!g.messages.isEmpty() && MessageEntry.BY_PRODUCER_ORDER.compare(g.messages.peekLast(), e) > 0) {
            after.push(g.messages.pollLast());
        }
        g.messages.addLast(e);
        while (!after.isEmpty()) {
            g.messages.addLast(after.pop());
        }
        e.group = g;
    }

    /**
     * A pending hand-off goes back to the queue, visible at {@code now}; FIFO: in its group at its place by send
     * order (as a restart reads it back), so it is next once nothing of the group is in flight.
     */
    void returnFromDeadLetter(MessageEntry e, long now) {
        detach(e);
        e.deadLetterReason = null;
        e.visibleAtMillis = now;
        e.backoffFromMillis = 0;
        if (e.fifoGroupId != null) {
            joinGroup(e);
        }
        attach(e);
        if (e.group != null) {
            refreshReady(e.group);
        }
    }

    /** A FIFO group's messages, or null when it has none. */
    FifoGroup group(String groupId) {
        return groups.get(groupId);
    }

    /** The pending hand-off handed off longest ago, or null. */
    MessageEntry oldestPending() {
        return pendingBySince.isEmpty() ? null : pendingBySince.first();
    }

    /** Takes an entry out of the sorted sets and counters; call before changing its deadline or status. */
    void detach(MessageEntry e) {
        Status s = e.status(nowMillis);
        switch (s) {
            case VISIBLE -> visible--;
            case INFLIGHT -> {
                inflight--;
                if (e.group != null) {
                    e.group.inflight--;
                }
            }
            case DELAYED -> delayed--;
            case DEAD_LETTER_PENDING -> {
                deadLetterPending.remove(e.seq);
                pendingBySince.remove(e);
            }
        }
        if (s != Status.DEAD_LETTER_PENDING) {
            byVisibleAt.remove(e);
            byRetention.remove(e);
            if (e.backsOff()) {
                byBackoffFrom.remove(e);
            }
        }
    }

    /** Puts an entry back after a change; the inverse of {@link #detach}. */
    void attach(MessageEntry e) {
        Status s = e.status(nowMillis);
        switch (s) {
            case VISIBLE -> visible++;
            case INFLIGHT -> {
                inflight++;
                if (e.group != null) {
                    e.group.inflight++;
                }
            }
            case DELAYED -> delayed++;
            case DEAD_LETTER_PENDING -> {
                deadLetterPending.put(e.seq, e);
                pendingBySince.add(e);
            }
        }
        if (s != Status.DEAD_LETTER_PENDING) {
            byVisibleAt.add(e);
            byRetention.add(e);
            if (e.backsOff()) {
                byBackoffFrom.add(e);
            }
        }
    }

    /** Changes an entry's deadline or counters through {@code change}, keeping every index and counter exact. */
    void update(MessageEntry e, Consumer<MessageEntry> change) {
        detach(e);
        change.accept(e);
        attach(e);
        if (e.group != null) {
            refreshReady(e.group);
        }
    }

    /** Removes a message for good (deleted, expired, purged or handed off and acknowledged). */
    void remove(MessageEntry e) {
        detach(e);
        bySeq.remove(e.seq);
        leaveGroup(e);
    }

    /** Marks a message as waiting for its dead-letter copy; it is no longer deliverable. */
    void markDeadLetter(MessageEntry e, DeadLetterReason reason) {
        detach(e);
        leaveGroup(e);
        e.deadLetterReason = reason;
        e.visibleAtMillis = nowMillis; // not deliverable: from now on, when it was handed off
        e.backoffFromMillis = 0;
        attach(e);
    }

    private void leaveGroup(MessageEntry e) {
        FifoGroup g = e.group;
        if (g != null) {
            g.messages.remove(e);
            e.group = null;
            refreshReady(g);
        }
    }

    /** Re-evaluates whether a FIFO group may be offered to a receive, and drops empty groups. */
    void refreshReady(FifoGroup g) {
        if (g.readyKey >= 0) {
            readyGroups.remove(g.readyKey);
            g.readyKey = -1;
        }
        if (g.messages.isEmpty()) {
            groups.remove(g.id);
            if (g.hasCold) {
                emptiedWithCold.add(g); // its head is cold now: the caller records it (see FifoColdGroups)
            }
            return;
        }
        if (g.isReady(nowMillis)) {
            g.readyKey = g.messages.peekFirst().seq;
            readyGroups.put(g.readyKey, g);
        }
    }

    /** Up to {@code max} messages visible at {@code at} (or now, if later), in delivery order; changes nothing. */
    List<MessageEntry> peekVisible(long at, int max) {
        List<MessageEntry> out = new ArrayList<>(Math.min(max, 16));
        for (MessageEntry e : byVisibleAt.headSet(MessageEntry.probe(Math.max(at, nowMillis), Long.MAX_VALUE), true)) {
            if (out.size() >= max) {
                break;
            }
            out.add(e);
        }
        return out;
    }

    /** Visible messages in delivery order (oldest deadline first). Do not modify the index while iterating. */
    Iterable<MessageEntry> visibleInOrder() {
        return byVisibleAt.headSet(MessageEntry.probe(nowMillis, Long.MAX_VALUE), true);
    }

    /**
     * The first visible message after {@code last} in delivery order (the first one when {@code last} is null), or
     * null: a walk that survives entries being added ahead of it.
     */
    MessageEntry nextVisibleAfter(MessageEntry last) {
        MessageEntry next = last == null ? (byVisibleAt.isEmpty() ? null : byVisibleAt.first()) : byVisibleAt.higher(last);
        return next == null || next.visibleAtMillis > nowMillis ? null : next;
    }

    /** The last visible message in delivery order (the one a receive reaches last), or null. */
    MessageEntry lastVisible() {
        return byVisibleAt.floor(MessageEntry.probe(nowMillis, Long.MAX_VALUE));
    }

    /** FIFO groups a receive may take from, oldest head first. Do not modify the index while iterating. */
    Iterable<FifoGroup> readyGroups() {
        return readyGroups.values();
    }

    /** The ready group with the oldest head after {@code seq}, or null. */
    Map.Entry<Long, FifoGroup> readyAfter(long seq) {
        return readyGroups.higherEntry(seq);
    }

    /** The FIFO groups with messages in memory. */
    Iterable<FifoGroup> groups() {
        return groups.values();
    }

    /** The groups with cold messages that had none left in memory since the last call. */
    List<FifoGroup> drainEmptiedWithCold() {
        if (emptiedWithCold.isEmpty()) {
            return List.of();
        }
        List<FifoGroup> out = List.copyOf(emptiedWithCold);
        emptiedWithCold.clear();
        return out;
    }

    boolean hasReadyGroup() {
        return !readyGroups.isEmpty();
    }

    /** The live message that expires first, or null. */
    MessageEntry oldestByRetention() {
        return byRetention.isEmpty() ? null : byRetention.first();
    }

    /** The earliest deadline after now (a delayed or in-flight message becoming visible), or -1. */
    long nextDeadlineMillis() {
        MessageEntry next = byVisibleAt.higher(MessageEntry.probe(nowMillis, Long.MAX_VALUE));
        return next == null ? -1 : next.visibleAtMillis;
    }

    /** The earliest deadline after {@code t} (at or after now), or -1. */
    long nextDeadlineAfter(long t) {
        MessageEntry next = byVisibleAt.higher(MessageEntry.probe(Math.max(t, nowMillis), Long.MAX_VALUE));
        return next == null ? -1 : next.visibleAtMillis;
    }

    /**
     * Visible, in-flight and delayed counts as they will be at {@code at} (at or after the last command), read-only:
     * the deadlines passed since the last command are counted as {@link #advanceTo} would.
     */
    int[] countsAt(long at) {
        int v = visible;
        int i = inflight;
        int d = delayed;
        if (at > nowMillis) {
            for (MessageEntry e : byBackoffFrom.subSet(MessageEntry.probeBackoff(nowMillis + 1, Long.MIN_VALUE), true,
                    MessageEntry.probeBackoff(at, Long.MAX_VALUE), true)) {
                if (e.visibleAtMillis > at && e.receivedAtMillis > 0) {
                    i--;
                    d++;
                }
            }
            for (MessageEntry e : byVisibleAt.subSet(MessageEntry.probe(nowMillis + 1, Long.MIN_VALUE), true,
                    MessageEntry.probe(at, Long.MAX_VALUE), true)) {
                if (e.isLeasedAt(nowMillis)) {
                    i--;
                } else {
                    d--;
                }
                v++;
            }
        }
        return new int[] {v, i, d};
    }

    /** Number of messages that would be visible at {@code at} (at or after now), without changing anything. */
    int visibleAt(long at) {
        if (at <= nowMillis) {
            return visible;
        }
        return visible + byVisibleAt.subSet(MessageEntry.probe(nowMillis + 1, Long.MIN_VALUE), true,
                MessageEntry.probe(at, Long.MAX_VALUE), true).size();
    }

    Map<Long, MessageEntry> deadLetterPending() {
        return deadLetterPending;
    }

    /** All live and pending entries in seq order. A copy: safe to modify the index while iterating it. */
    List<MessageEntry> entriesInSeqOrder() {
        List<MessageEntry> all = new ArrayList<>(bySeq.values());
        all.sort((a, b) -> Long.compare(a.seq, b.seq));
        return all;
    }

    /** Drops everything (purge, retire). */
    void clear() {
        bySeq.clear();
        byVisibleAt.clear();
        byRetention.clear();
        byBackoffFrom.clear();
        deadLetterPending.clear();
        pendingBySince.clear();
        groups.clear();
        readyGroups.clear();
        emptiedWithCold.clear();
        visible = 0;
        inflight = 0;
        delayed = 0;
    }

    /** Sets the time before recovery re-adds entries from storage. */
    void resetClock(long now) {
        nowMillis = now;
    }

    /** Canonical description of everything derived, for state comparison in tests. */
    String describe() {
        StringBuilder sb = new StringBuilder();
        sb.append("now=").append(nowMillis).append(" visible=").append(visible).append(" inflight=").append(inflight)
                .append(" delayed=").append(delayed).append(" pending=").append(deadLetterPending.keySet()).append('\n');
        for (MessageEntry e : entriesInSeqOrder()) {
            sb.append(e).append('\n');
        }
        new TreeMap<>(groups).forEach((id, g) -> sb.append("group ").append(id).append(" inflight=").append(g.inflight)
                .append(g.hasCold ? " cold" : "")
                .append(" seqs=").append(g.messages.stream().map(m -> m.seq).toList()).append('\n'));
        sb.append("ready=").append(readyGroups.keySet()).append('\n');
        return sb.toString();
    }
}
