package io.sluice.backend.engine;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.BiConsumer;

/**
 * The part of a partition's backlog that is on disk only: its messages have no {@link MessageEntry} in memory, so a
 * backlog costs disk, not heap. What the index holds is bounded by {@link PartitionQueueState#hotLimit}; once it is
 * full, a new message that is visible at once is written to the cold range ({@code q seq}, same record as a state)
 * and only counted. Standard queues page cold messages back into the index oldest first; FIFO queues a group's at a
 * time ({@link FifoColdGroups} keeps each group's cold messages and the heads of groups that are cold entirely).
 *
 * <p>Which messages are cold is replicated state like any other: it follows from the command log alone (the same
 * limit on every replica, page-ins triggered by commands, reads that see exactly the previous entries' writes), and
 * the count, the first seq that may still be cold and the oldest cold message's time are kept in the partition's
 * meta record. Cold messages are visible since their send and their seqs are in retention order, so the oldest one
 * (the lowest seq) is the next to expire.
 *
 * <p>A shard writes an entry's commands in one batch after applying all of them, so the store does not yet have what
 * earlier commands of the same entry wrote: every cold-range write goes through this class, which keeps it
 * ({@code pending}: a put, or {@link #DELETED}) and lays it over what it reads from the store until {@link #written()}.
 */
final class ColdTail {
    /** Reads up to {@code limit} records in {@code [from, to)}, in key order. */
    @FunctionalInterface
    interface Reader {
        void read(byte[] from, byte[] to, int limit, BiConsumer<byte[], byte[]> visitor);
    }

    private static final byte[] DELETED = new byte[0];

    private final PartitionKeys keys;
    private final Reader reader;
    private long count;
    /** Counts every change to the cold range (and the tail's counters): what was read before is stale once it moves. */
    private long version;
    /** The oldest cold message's seq while there is one (no message with a lower seq is cold). */
    private long from;
    /** The retention base (send time) of the oldest cold message; meaningful while {@code count > 0}. */
    private long oldestMillis = -1;
    /** Cold-range writes of the entry being applied, not in the store yet; {@link #DELETED} marks a deletion. */
    private final TreeMap<byte[], byte[]> pending = new TreeMap<>(Arrays::compareUnsigned);
    /** Ranges the entry being applied deletes ({@code [from, to)}; purge, retire): the store's records there are gone. */
    private final List<byte[][]> deletedRanges = new ArrayList<>();

    ColdTail(PartitionKeys keys, Reader reader) {
        this.keys = keys;
        this.reader = reader;
    }

    long count() {
        return count;
    }

    /** See {@link #version}. */
    long version() {
        return version;
    }

    boolean isEmpty() {
        return count == 0;
    }

    /** The send time of the oldest cold message, or -1 when there is none. */
    long oldestMillis() {
        return count == 0 ? -1 : oldestMillis;
    }

    /**
     * Whether the oldest cold message comes before {@code e} in delivery order ({@code visibleAt, seq}); a cold
     * message is visible since its send, so its send time is both its deadline and its retention base.
     */
    boolean headBefore(MessageEntry e) {
        return headBefore(e.visibleAtMillis, e.seq);
    }

    /** Whether the oldest cold message comes before {@code (visibleAt, seq)} in delivery order. */
    boolean headBefore(long visibleAt, long seq) {
        return count > 0 && (oldestMillis < visibleAt || oldestMillis == visibleAt && from < seq);
    }

    /** Whether the oldest cold message comes before {@code e} in retention order ({@code retentionBase, seq}). */
    boolean headExpiresBefore(MessageEntry e) {
        return headExpiresBefore(e.retentionBaseMillis, e.seq);
    }

    /** Whether the oldest cold message comes before {@code (retentionBase, seq)} in retention order. */
    boolean headExpiresBefore(long retentionBase, long seq) {
        return count > 0 && (oldestMillis < retentionBase || oldestMillis == retentionBase && from < seq);
    }

    /** Whether the oldest cold message is past the retention period at {@code now}. */
    boolean oldestExpired(long now, long retentionMillis) {
        return count > 0 && now - oldestMillis >= retentionMillis;
    }

    /** Keeps a new message on disk only; {@code mutations} gets its record. */
    void add(MessageEntry e, List<Mutation> mutations) {
        if (count == 0) {
            from = e.seq;
            oldestMillis = e.retentionBaseMillis;
        }
        count++;
        put(keys.cold(e.seq), RecordCodec.encodeState(e), mutations);
    }

    /**
     * Takes up to {@code max} of the oldest cold messages out of the cold range ({@code mutations} gets the
     * deletions); the caller indexes them.
     */
    List<RecordCodec.DecodedState> take(int max, List<Mutation> mutations) {
        List<RecordCodec.DecodedState> out = new ArrayList<>();
        if (count == 0 || max <= 0) {
            return out;
        }
        read(keys.cold(from), keys.typeEnd(PartitionKeys.COLD), max, (k, v) ->
                out.add(RecordCodec.decodeState(PartitionKeys.seqOf(k), v)));
        for (RecordCodec.DecodedState s : out) {
            delete(keys.cold(s.entry().seq), mutations);
        }
        count -= out.size();
        if (!out.isEmpty()) {
            from = out.get(out.size() - 1).entry().seq + 1;
        }
        refreshOldest();
        return out;
    }

    /**
     * Takes the given cold messages out of the cold range, wherever they are in it (a FIFO group's, in seq order);
     * a seq that is not cold is skipped.
     */
    List<RecordCodec.DecodedState> take(List<Long> seqs, List<Mutation> mutations) {
        List<RecordCodec.DecodedState> out = new ArrayList<>(seqs.size());
        for (long seq : seqs) {
            byte[] state = get(keys.cold(seq));
            if (state != null) {
                out.add(RecordCodec.decodeState(seq, state));
                delete(keys.cold(seq), mutations);
                count--;
            }
        }
        if (!out.isEmpty() && out.get(0).entry().seq == from) {
            refreshOldest();
        }
        return out;
    }

    /** Up to {@code max} of the oldest cold messages, left where they are (a peek). */
    List<RecordCodec.DecodedState> peek(int max) {
        List<RecordCodec.DecodedState> out = new ArrayList<>();
        if (count > 0 && max > 0) {
            read(keys.cold(from), keys.typeEnd(PartitionKeys.COLD), max, (k, v) ->
                    out.add(RecordCodec.decodeState(PartitionKeys.seqOf(k), v)));
        }
        return out;
    }

    /** The oldest cold message's state, or null when there is none. */
    RecordCodec.DecodedState oldest() {
        List<RecordCodec.DecodedState> out = peek(1);
        return out.isEmpty() ? null : out.get(0);
    }

    /** Moves {@code from} and the oldest time to the first cold record at or after {@code from}. */
    private void refreshOldest() {
        RecordCodec.DecodedState next = oldest();
        if (count > 0 && next == null) {
            // the count says more but the range has no more: nothing can be delivered from it; every replica
            // reads the same range and comes to the same conclusion
            count = 0;
        } else if (next != null) {
            from = next.entry().seq;
            oldestMillis = next.entry().retentionBaseMillis;
        }
    }

    /** Forgets every cold message (purge, retire); the caller deletes the ranges ({@link #deleteRange}). */
    void clear() {
        version++;
        count = 0;
        oldestMillis = -1;
    }

    /** The entry being applied is in the store: its cold writes are read from there from now on. */
    void written() {
        pending.clear();
        deletedRanges.clear();
    }

    void recover(long count, long from, long oldestMillis) {
        version++;
        this.count = count;
        this.from = from;
        this.oldestMillis = oldestMillis;
    }

    /** The first seq that may still be cold (stored in the meta record): no cold message has a lower one. */
    long from() {
        return from;
    }

    // ---- the store as the entry being applied leaves it: cold range, FIFO group members and heads --------------

    void put(byte[] key, byte[] value, List<Mutation> mutations) {
        version++;
        pending.put(key, value);
        mutations.add(new Mutation.Put(key, value));
    }

    void delete(byte[] key, List<Mutation> mutations) {
        version++;
        pending.put(key, DELETED);
        mutations.add(new Mutation.Delete(key));
    }

    /** Deletes every record in {@code [from, to)}. */
    void deleteRange(byte[] fromKey, byte[] toKey, List<Mutation> mutations) {
        version++;
        pending.subMap(fromKey, true, toKey, false).clear();
        deletedRanges.add(new byte[][] {fromKey, toKey});
        mutations.add(new Mutation.DeleteRange(fromKey, toKey));
    }

    /** A record as the entry being applied leaves it, or null. */
    byte[] get(byte[] key) {
        byte[] mine = pending.get(key);
        if (mine != null) {
            return mine == DELETED ? null : mine;
        }
        byte[][] found = new byte[1][];
        readStore(key, PartitionKeys.after(key), 1, (k, v) -> found[0] = v);
        return found[0];
    }

    /**
     * Up to {@code limit} records in {@code [from, to)} in key order, as the entry being applied leaves them. The
     * store is read in chunks and merged with the pending writes as it goes, so a read costs what it returns plus
     * the deletions it passes, not every pending write in the range.
     */
    void read(byte[] fromKey, byte[] toKey, int limit, BiConsumer<byte[], byte[]> visitor) {
        Iterator<Map.Entry<byte[], byte[]>> mine = pending.subMap(fromKey, true, toKey, false)
                .entrySet().iterator();
        Map.Entry<byte[], byte[]> nextMine = mine.hasNext() ? mine.next() : null;
        ArrayDeque<byte[][]> chunk = new ArrayDeque<>();
        byte[] cursor = fromKey;
        boolean storeDone = false;
        int n = 0;
        while (n < limit) {
            if (chunk.isEmpty() && !storeDone) {
                int want = Math.max(16, Math.min(limit - n, 1024) + 1);
                readStore(cursor, toKey, want, (k, v) -> chunk.add(new byte[][] {k, v}));
                storeDone = chunk.size() < want;
                if (!chunk.isEmpty()) {
                    cursor = PartitionKeys.after(chunk.peekLast()[0]);
                }
            }
            byte[][] stored = chunk.peekFirst();
            if (stored == null && nextMine == null) {
                break;
            }
            int c = stored == null ? 1 : nextMine == null ? -1 : Arrays.compareUnsigned(stored[0], nextMine.getKey());
            if (c < 0) {
                chunk.pollFirst();
                visitor.accept(stored[0], stored[1]);
                n++;
            } else {
                if (c == 0) {
                    chunk.pollFirst(); // rewritten or deleted by the entry being applied
                }
                if (nextMine.getValue() != DELETED) {
                    visitor.accept(nextMine.getKey(), nextMine.getValue());
                    n++;
                }
                nextMine = mine.hasNext() ? mine.next() : null;
            }
        }
    }

    /** The store's records in {@code [from, to)} less those in a range deleted by the entry being applied. */
    private void readStore(byte[] fromKey, byte[] toKey, int limit, BiConsumer<byte[], byte[]> visitor) {
        boolean overlaps = false;
        for (byte[][] r : deletedRanges) {
            if (Arrays.compareUnsigned(r[0], fromKey) <= 0 && Arrays.compareUnsigned(toKey, r[1]) <= 0) {
                return; // all deleted
            }
            overlaps |= Arrays.compareUnsigned(r[0], toKey) < 0 && Arrays.compareUnsigned(fromKey, r[1]) < 0;
        }
        if (!overlaps) {
            reader.read(fromKey, toKey, limit, visitor);
            return;
        }
        int[] n = {0}; // a partial overlap (not a range this engine deletes): filter, reading as far as it takes
        reader.read(fromKey, toKey, Integer.MAX_VALUE, (k, v) -> {
            if (n[0] < limit && !inDeletedRange(k)) {
                visitor.accept(k, v);
                n[0]++;
            }
        });
    }

    private boolean inDeletedRange(byte[] key) {
        for (byte[][] r : deletedRanges) {
            if (Arrays.compareUnsigned(r[0], key) <= 0 && Arrays.compareUnsigned(key, r[1]) < 0) {
                return true;
            }
        }
        return false;
    }

    String describe() {
        return "cold=" + count + " from=" + from + " oldest=" + oldestMillis();
    }
}
