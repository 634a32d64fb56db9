package io.sluice.backend.engine;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The part of a standard partition's backlog that is on disk only and is not a plain fresh send ({@link ColdTail}
 * keeps those, in send order): delayed sends, dead-letter and move copies (whose retention counts from their original
 * send), and visible messages paged out of a full index (a lapsed lease, a message paged in and not taken). Their
 * order is their delivery order, so each is kept under {@code w visibleAt seq} with its state record, and paged back
 * into the index as it comes due and a receive reaches it. Three small companions keep every question the engine asks
 * answered without reading the backlog:
 *
 * <ul>
 *   <li>{@code x retentionBase seq → visibleAt}: retention order, so the next to expire is the first key;</li>
 *   <li>{@code y visibleAt → count}: how many are not due yet, by deadline (in memory too, {@link #notDue}): the
 *       visible and delayed counts are exact, and the next deadline is the first key; the engine's time passing a
 *       deadline drops its record;</li>
 *   <li>{@code z seq → visibleAt} for a message leased here before (a receipt handle may name it): a delete or a
 *       visibility change finds it by its seq.</li>
 * </ul>
 *
 * <p>Replicated state like the rest: every change follows from commands and from reads of what earlier entries wrote
 * (through the {@link ColdTail}'s view of the entry being applied), so every replica keeps the same messages here. The
 * count is in the partition's meta record; the heads and the not-due counts are read back at open (a seek each, and
 * the {@code y} records, at most one per distinct pending deadline).
 */
final class DeferredTail {
    private final PartitionKeys keys;
    private final ColdTail store;
    private long count;
    /** The first message in delivery order while there is one. */
    private long headVisibleAt;
    private long headSeq;
    /** The first message in retention order while there is one. */
    private long oldestRetention;
    private long oldestRetentionSeq;
    /** Messages not due yet by deadline (the {@code y} records), and their sum. */
    private final TreeMap<Long, Integer> notDue = new TreeMap<>();
    private long notDueTotal;

    DeferredTail(PartitionKeys keys, ColdTail store) {
        this.keys = keys;
        this.store = store;
    }

    long count() {
        return count;
    }

    boolean isEmpty() {
        return count == 0;
    }

    /** Messages here visible at the engine's time (their deadline passed). */
    long dueCount() {
        return count - notDueTotal;
    }

    /** Messages here not visible yet (delayed). */
    long notDueCount() {
        return notDueTotal;
    }

    /** Messages here visible at {@code at} (at or after the engine's time), read-only. */
    long dueAt(long at) {
        long stillNotDue = 0;
        for (int c : notDue.tailMap(at, false).values()) {
            stillNotDue += c;
        }
        return count - stillNotDue;
    }

    /** The earliest deadline here after {@code t}, or -1. */
    long nextDeadlineAfter(long t) {
        Long k = notDue.higherKey(t);
        return k == null ? -1 : k;
    }

    /** The send time (retention base) of the message here that expires first, or -1. */
    long oldestRetentionMillis() {
        return count == 0 ? -1 : oldestRetention;
    }

    /** Whether the first message here in delivery order is visible at {@code now}. */
    boolean hasDueHead(long now) {
        return count > 0 && headVisibleAt <= now;
    }

    /** Whether the first message here comes before {@code (visibleAt, seq)} in delivery order. */
    boolean headBefore(long visibleAt, long seq) {
        return count > 0 && (headVisibleAt < visibleAt || headVisibleAt == visibleAt && headSeq < seq);
    }

    long headVisibleAt() {
        return headVisibleAt;
    }

    long headSeq() {
        return headSeq;
    }

    /** The seq of the message here that expires first (meaningful while there is one). */
    long oldestSeq() {
        return oldestRetentionSeq;
    }

    /** Whether the message here that expires first comes before {@code e} in retention order. */
    boolean oldestExpiresBefore(MessageEntry e) {
        return count > 0 && (oldestRetention < e.retentionBaseMillis
                || oldestRetention == e.retentionBaseMillis && oldestRetentionSeq < e.seq);
    }

    /** Whether the message here that expires first is past the retention period at {@code now}. */
    boolean oldestExpired(long now, long retentionMillis) {
        return count > 0 && now - oldestRetention >= retentionMillis;
    }

    /** Keeps a message on disk only ({@code now}: the engine's time, which decides whether it counts as due). */
    void add(MessageEntry e, long now, List<Mutation> mutations) {
        store.put(keys.deferred(e.visibleAtMillis, e.seq), RecordCodec.encodeState(e), mutations);
        store.put(keys.deferredByRetention(e.retentionBaseMillis, e.seq), longBytes(e.visibleAtMillis), mutations);
        if (e.receivedAtMillis > 0) {
            store.put(keys.deferredSeq(e.seq), longBytes(e.visibleAtMillis), mutations);
        }
        if (e.visibleAtMillis > now) {
            changeNotDue(e.visibleAtMillis, 1, mutations);
        }
        if (count == 0 || e.visibleAtMillis < headVisibleAt
                || e.visibleAtMillis == headVisibleAt && e.seq < headSeq) {
            headVisibleAt = e.visibleAtMillis;
            headSeq = e.seq;
        }
        if (count == 0 || e.retentionBaseMillis < oldestRetention
                || e.retentionBaseMillis == oldestRetention && e.seq < oldestRetentionSeq) {
            oldestRetention = e.retentionBaseMillis;
            oldestRetentionSeq = e.seq;
        }
        count++;
    }

    /**
     * The engine's time moved to {@code now}: deadlines up to it are passed (their records go).
     *
     * @return how many messages here became visible
     */
    int advanceTo(long now, List<Mutation> mutations) {
        int became = 0;
        Map<Long, Integer> passed = notDue.headMap(now, true);
        for (Map.Entry<Long, Integer> d : passed.entrySet()) {
            became += d.getValue();
            notDueTotal -= d.getValue();
            store.delete(keys.deferredDue(d.getKey()), mutations);
        }
        passed.clear();
        return became;
    }

    /** Takes up to {@code max} of the first messages in delivery order that are visible at {@code now}. */
    List<RecordCodec.DecodedState> takeDue(int max, long now, List<Mutation> mutations) {
        List<RecordCodec.DecodedState> out = new ArrayList<>();
        if (count == 0 || headVisibleAt > now) {
            return out;
        }
        store.read(keys.deferred(headVisibleAt, headSeq), keys.deferred(now + 1, 0), max,
                (k, v) -> out.add(RecordCodec.decodeState(PartitionKeys.deferredSeqOf(k), v)));
        boolean oldestTaken = false;
        for (RecordCodec.DecodedState d : out) {
            forget(d.entry(), now, mutations);
            oldestTaken |= d.entry().seq == oldestRetentionSeq;
        }
        refreshHeads(true, oldestTaken || out.isEmpty()); // nothing read: the heads were stale, read them again
        return out;
    }

    /** Takes up to {@code max} messages, due or not, in delivery order (a deleted queue's, to hand off). */
    List<RecordCodec.DecodedState> takeAny(int max, long now, List<Mutation> mutations) {
        List<RecordCodec.DecodedState> out = new ArrayList<>();
        if (count == 0) {
            return out;
        }
        store.read(keys.deferred(headVisibleAt, headSeq), keys.typeEnd(PartitionKeys.DEFERRED), max,
                (k, v) -> out.add(RecordCodec.decodeState(PartitionKeys.deferredSeqOf(k), v)));
        for (RecordCodec.DecodedState d : out) {
            forget(d.entry(), now, mutations);
        }
        refreshHeads(true, true);
        return out;
    }

    /** Takes the message that expires first, or null. */
    RecordCodec.DecodedState takeOldestByRetention(long now, List<Mutation> mutations) {
        if (count == 0) {
            return null;
        }
        byte[] at = store.get(keys.deferredByRetention(oldestRetention, oldestRetentionSeq));
        RecordCodec.DecodedState d = at == null ? null : read(ByteBuffer.wrap(at).getLong(), oldestRetentionSeq);
        if (d == null) {
            count = 0; // the records say otherwise than the count: nothing here can be delivered (every replica alike)
            return null;
        }
        forget(d.entry(), now, mutations);
        refreshHeads(d.entry().seq == headSeq, true);
        return d;
    }

    /** Takes the message {@code seq} if it is here and was leased here before (a receipt handle may name it), or null. */
    RecordCodec.DecodedState takeLeased(long seq, long now, List<Mutation> mutations) {
        if (count == 0) {
            return null;
        }
        byte[] at = store.get(keys.deferredSeq(seq));
        RecordCodec.DecodedState d = at == null ? null : read(ByteBuffer.wrap(at).getLong(), seq);
        if (d == null) {
            return null;
        }
        forget(d.entry(), now, mutations);
        refreshHeads(seq == headSeq, seq == oldestRetentionSeq);
        return d;
    }

    /** Up to {@code max} of the first messages visible at {@code at}, left where they are (a peek). */
    List<RecordCodec.DecodedState> peekDue(long at, int max) {
        List<RecordCodec.DecodedState> out = new ArrayList<>();
        if (count > 0 && headVisibleAt <= at && max > 0) {
            store.read(keys.deferred(headVisibleAt, headSeq), keys.deferred(at + 1, 0), max,
                    (k, v) -> out.add(RecordCodec.decodeState(PartitionKeys.deferredSeqOf(k), v)));
        }
        return out;
    }

    private RecordCodec.DecodedState read(long visibleAt, long seq) {
        byte[] state = store.get(keys.deferred(visibleAt, seq));
        return state == null ? null : RecordCodec.decodeState(seq, state);
    }

    /** Removes a message's records (the caller takes it into the index, or drops it). */
    private void forget(MessageEntry e, long now, List<Mutation> mutations) {
        store.delete(keys.deferred(e.visibleAtMillis, e.seq), mutations);
        store.delete(keys.deferredByRetention(e.retentionBaseMillis, e.seq), mutations);
        if (e.receivedAtMillis > 0) {
            store.delete(keys.deferredSeq(e.seq), mutations);
        }
        if (e.visibleAtMillis > now) {
            changeNotDue(e.visibleAtMillis, -1, mutations);
        }
        count--;
    }

    private void changeNotDue(long visibleAt, int delta, List<Mutation> mutations) {
        int n = notDue.getOrDefault(visibleAt, 0) + delta;
        notDueTotal += delta;
        if (n <= 0) {
            notDue.remove(visibleAt);
            store.delete(keys.deferredDue(visibleAt), mutations);
        } else {
            notDue.put(visibleAt, n);
            store.put(keys.deferredDue(visibleAt), ByteBuffer.allocate(4).putInt(n).array(), mutations);
        }
    }

    /** Re-reads the delivery head and/or the retention head after messages left. */
    private void refreshHeads(boolean delivery, boolean retention) {
        if (count <= 0) {
            count = 0;
            return;
        }
        if (delivery) {
            long[] first = firstKey(PartitionKeys.DEFERRED);
            if (first == null) {
                count = 0; // as in takeOldestByRetention: the records are the truth, every replica reads the same
                return;
            }
            headVisibleAt = first[0];
            headSeq = first[1];
        }
        if (retention) {
            long[] first = firstKey(PartitionKeys.DEFERRED_BY_RETENTION);
            if (first != null) {
                oldestRetention = first[0];
                oldestRetentionSeq = first[1];
            }
        }
    }

    /** The (time, seq) of the first key of a {@code type time seq} range, or null. */
    private long[] firstKey(byte type) {
        long[][] found = new long[1][];
        store.read(keys.typePrefix(type), keys.typeEnd(type), 1, (k, v) -> {
            ByteBuffer b = ByteBuffer.wrap(k, PartitionKeys.PREFIX_LENGTH + 1, 16);
            found[0] = new long[] {b.getLong(), b.getLong()};
        });
        return found[0];
    }

    /** Forgets every message (purge, retire); the caller deletes the ranges. */
    void clear(List<Mutation> mutations) {
        for (byte type : PartitionKeys.DEFERRED_TYPES) {
            store.deleteRange(keys.typePrefix(type), keys.typeEnd(type), mutations);
        }
        count = 0;
        notDue.clear();
        notDueTotal = 0;
    }

    /** Restores the count from the meta record and reads the heads and the not-due records back. */
    void recover(long storedCount) {
        count = storedCount;
        if (count == 0) {
            return;
        }
        store.read(keys.typePrefix(PartitionKeys.DEFERRED_DUE), keys.typeEnd(PartitionKeys.DEFERRED_DUE),
                Integer.MAX_VALUE, (k, v) -> {
                    int n = ByteBuffer.wrap(v).getInt();
                    notDue.put(ByteBuffer.wrap(k, PartitionKeys.PREFIX_LENGTH + 1, 8).getLong(), n);
                    notDueTotal += n;
                });
        refreshHeads(true, true);
    }

    private static byte[] longBytes(long v) {
        return ByteBuffer.allocate(8).putLong(v).array();
    }

    String describe() {
        return "deferred=" + count + (count == 0 ? "" : " head=" + headVisibleAt + "/" + headSeq + " oldest="
                + oldestRetention + "/" + oldestRetentionSeq + " notDue=" + notDue);
    }
}
