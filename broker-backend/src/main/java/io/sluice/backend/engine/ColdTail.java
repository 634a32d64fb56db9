package io.sluice.backend.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The part of a standard partition's backlog that is on disk only: its messages have no {@link MessageEntry} in
 * memory, so a backlog costs disk, not heap. What the index holds is bounded by {@link
 * PartitionQueueState#hotLimit}; once it is full, a new message that is visible at once (no delay, not a copy with
 * a history) is written to the cold range ({@code q seq}, same record as a state) and only counted. Receives page
 * cold messages back into the index, oldest first, when the index runs short of visible ones.
 *
 * <p>Which messages are cold is replicated state like any other: it follows from the command log alone (the same
 * limit on every replica, page-ins triggered by commands, reads that see exactly the previous entries' writes), and
 * the count, the first seq that may still be cold and the oldest cold message's time are kept in the partition's
 * meta record. Cold messages are in send order, so they are also in retention order and visible since their send.
 *
 * <p>A shard writes an entry's commands in one batch after applying all of them, so the store does not yet have
 * the cold messages sent earlier in the same entry: they are kept here ({@code unwritten}) until
 * {@link #written()}.
 */
final class ColdTail {
    /** Reads up to {@code limit} records in {@code [from, to)}, in key order. */
    @FunctionalInterface
    interface Reader {
        void read(byte[] from, byte[] to, int limit, java.util.function.BiConsumer<byte[], byte[]> visitor);
    }

    private final PartitionKeys keys;
    private final Reader reader;
    private long count;
    /** The oldest cold message's seq while there is one (no message with a lower seq is cold). */
    private long from;
    /** The retention base (send time) of the oldest cold message; meaningful while {@code count > 0}. */
    private long oldestMillis = -1;
    /** Cold messages of the entry being applied, not in the store yet. */
    private final TreeMap<Long, MessageEntry> unwritten = new TreeMap<>();

    ColdTail(PartitionKeys keys, Reader reader) {
        this.keys = keys;
        this.reader = reader;
    }

    long count() {
        return count;
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
        return count > 0 && (oldestMillis < e.visibleAtMillis || oldestMillis == e.visibleAtMillis && from < e.seq);
    }

    /** Whether the oldest cold message comes before {@code e} in retention order ({@code retentionBase, seq}). */
    boolean headExpiresBefore(MessageEntry e) {
        return count > 0 && (oldestMillis < e.retentionBaseMillis
                || oldestMillis == e.retentionBaseMillis && from < e.seq);
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
        unwritten.put(e.seq, e);
        mutations.add(new Mutation.Put(keys.cold(e.seq), RecordCodec.encodeState(e)));
    }

    /**
     * Takes up to {@code max} of the oldest cold messages out of the cold range ({@code mutations} gets the
     * deletions); the caller indexes them.
     */
    List<MessageEntry> take(int max, List<Mutation> mutations) {
        List<MessageEntry> out = new ArrayList<>();
        if (count == 0 || max <= 0) {
            return out;
        }
        TreeMap<Long, MessageEntry> candidates = new TreeMap<>();
        reader.read(keys.cold(from), keys.typeEnd(PartitionKeys.COLD), max + 1, (k, v) -> {
            long seq = PartitionKeys.seqOf(k);
            candidates.put(seq, RecordCodec.decodeState(seq, v).entry());
        });
        candidates.putAll(unwritten.tailMap(from, true));
        for (Map.Entry<Long, MessageEntry> c : candidates.entrySet()) {
            if (out.size() == max) {
                break;
            }
            out.add(c.getValue());
            unwritten.remove(c.getKey());
            mutations.add(new Mutation.Delete(keys.cold(c.getKey())));
            count--;
            from = c.getKey() + 1;
        }
        Map.Entry<Long, MessageEntry> next = candidates.higherEntry(from - 1);
        if (count > 0 && next == null) {
            // the count says more but the range has no more: nothing can be delivered from it; every replica
            // reads the same range and comes to the same conclusion
            count = 0;
        } else if (next != null) {
            from = next.getKey();
            oldestMillis = next.getValue().retentionBaseMillis;
        }
        return out;
    }

    /** Forgets every cold message (purge, retire); the caller deletes the range. */
    void clear() {
        count = 0;
        oldestMillis = -1;
        unwritten.clear();
    }

    /** The entry being applied is in the store: its cold messages are read from there from now on. */
    void written() {
        unwritten.clear();
    }

    void recover(long count, long from, long oldestMillis) {
        this.count = count;
        this.from = from;
        this.oldestMillis = oldestMillis;
    }

    /** The first seq that may still be cold (stored in the meta record). */
    long from() {
        return from;
    }

    String describe() {
        return "cold=" + count + " from=" + from + " oldest=" + oldestMillis();
    }
}
