package io.sluice.backend.engine;

import io.sluice.backend.storage.ShardStore;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The entries a shard has applied, by id ({@code writer}, {@code entry}: {@code CommandCodec.Batch}), so that an entry
 * its log holds twice is applied once. Ratis deduplicates a retried call through its retry cache, but not always: the
 * 30-minute nemesis saw 10-11 calls appended a second time per run (in the cases read closely, by a leader that had
 * applied the first copy and had not restarted; how, not pinned down), and one Send stored twice under one message id
 * before this table (docs/reliability.md). The cache is also in memory only, filled by the entries a replica applied
 * since it started, so a replica restarted from a snapshot knows nothing of the calls the snapshot covers. This table
 * is the shard's own record, replicated like the rest of its state: the same on every replica, written in the entry's
 * own WriteBatch, part of every snapshot.
 *
 * <p>Per writer: the highest entry number applied, which of the {@link #WINDOW} numbers below it were applied
 * (a bitmap), and the leader time of its last entry. A writer keeps at most a few entries outstanding and retries
 * each for seconds, so an entry that comes again comes within the window; one below the window cannot be told from a
 * duplicate and is refused like one (its writer hears an error and nothing is applied). A writer silent for
 * {@link #FORGET_AFTER_MILLIS} of leader time is forgotten, checked every {@link #PRUNE_EVERY} entries: both from the
 * entry (its index and time), so every replica forgets the same writers at the same entry.
 *
 * <p>Stored as shard-level keys {@code 0(8) 0(4) 'r' writer(8)} (PartitionKeys), all loaded at open: one per
 * frontend and backend client of the shard since the last prune, a few dozen bytes each.
 */
public final class EntryIds {
    /** Entry numbers below a writer's highest that are told apart (applied or not). */
    public static final int WINDOW = 256;
    /** A writer whose last entry is this old (leader time) is forgotten. */
    public static final long FORGET_AFTER_MILLIS = 15 * 60_000L;
    /** Entries between two looks for writers to forget. */
    public static final long PRUNE_EVERY = 4_096;
    private static final int WORDS = WINDOW / 64;
    private static final int VALUE_BYTES = 16 + WORDS * 8;

    /** One writer's record: bit {@code i} of {@code seen} is entry {@code highest - i}. */
    private static final class Writer {
        long highest;
        long lastMillis;
        final long[] seen = new long[WORDS];
    }

    private final Map<Long, Writer> writers = new HashMap<>();

    /** The table as the store holds it. */
    public static EntryIds load(ShardStore store) {
        EntryIds ids = new EntryIds();
        byte[] from = PartitionKeys.entryIdsStart();
        byte[] to = PartitionKeys.entryIdsEnd();
        store.scan(from, to, (k, v) -> {
            if (v.length != VALUE_BYTES) {
                return; // not a record this version wrote: ignored, as if the writer were new
            }
            ByteBuffer b = ByteBuffer.wrap(v);
            Writer w = new Writer();
            w.highest = b.getLong();
            w.lastMillis = b.getLong();
            for (int i = 0; i < WORDS; i++) {
                w.seen[i] = b.getLong();
            }
            ids.writers.put(ByteBuffer.wrap(k, k.length - 8, 8).getLong(), w);
        });
        return ids;
    }

    /**
     * Records entry {@code entry} of {@code writer}, applied at {@code index} and leader time {@code nowMillis}, and
     * adds the table's changes to {@code mutations}.
     *
     * @return whether the entry is new (apply it); false when it was applied before, or is too old to tell (refuse
     *         it: nothing of it may be applied). An entry without an id ({@code writer} 0) is always new.
     */
    public boolean admit(long writer, long entry, long index, long nowMillis, List<Mutation> mutations) {
        prune(index, nowMillis, mutations);
        if (writer == 0) {
            return true;
        }
        Writer w = writers.get(writer);
        boolean fresh;
        if (w == null) {
            w = new Writer();
            w.highest = entry;
            w.seen[0] = 1;
            writers.put(writer, w);
            fresh = true;
        } else if (entry > w.highest) {
            shift(w.seen, entry - w.highest);
            w.seen[0] |= 1;
            w.highest = entry;
            fresh = true;
        } else {
            long back = w.highest - entry;
            if (back >= WINDOW) {
                fresh = false;
            } else {
                int word = (int) (back / 64);
                long bit = 1L << (back % 64);
                fresh = (w.seen[word] & bit) == 0;
                w.seen[word] |= bit;
            }
        }
        w.lastMillis = Math.max(w.lastMillis, nowMillis);
        mutations.add(new Mutation.Put(PartitionKeys.entryIdKey(writer), encode(w)));
        return fresh;
    }

    /** Writers in the table now (tests, status). */
    public int writers() {
        return writers.size();
    }

    private void prune(long index, long nowMillis, List<Mutation> mutations) {
        if (index % PRUNE_EVERY != 0) {
            return;
        }
        List<Long> gone = new ArrayList<>();
        writers.forEach((id, w) -> {
            if (w.lastMillis < nowMillis - FORGET_AFTER_MILLIS) {
                gone.add(id);
            }
        });
        gone.sort(null); // the mutations in one order on every replica
        for (Long id : gone) {
            writers.remove(id);
            mutations.add(new Mutation.Delete(PartitionKeys.entryIdKey(id)));
        }
    }

    /** Shifts the bitmap towards older entries by {@code by} places (bit i becomes bit i + by). */
    private static void shift(long[] seen, long by) {
        if (by >= WINDOW) {
            Arrays.fill(seen, 0);
            return;
        }
        int words = (int) (by / 64);
        int bits = (int) (by % 64);
        for (int i = WORDS - 1; i >= 0; i--) {
            long from = i - words >= 0 ? seen[i - words] : 0;
            long carry = bits != 0 && i - words - 1 >= 0 ? seen[i - words - 1] >>> (64 - bits) : 0;
            seen[i] = bits == 0 ? from : (from << bits) | carry;
        }
    }

    private static byte[] encode(Writer w) {
        ByteBuffer b = ByteBuffer.allocate(VALUE_BYTES).putLong(w.highest).putLong(w.lastMillis);
        for (long word : w.seen) {
            b.putLong(word);
        }
        return b.array();
    }
}
