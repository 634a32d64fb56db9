package io.sluice.backend.engine;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The hand-off keys a partition remembers for its deduplication window: one copy per dead-letter hand-off or move,
 * however many movers execute it (an old and a new leader, a retry after a lost reply). A poison flood makes one key
 * per message, hundreds a second, so they are kept on disk only, not in the heap: {@code k key → entry} to find one,
 * and {@code e expiresAt seq → key} to forget them in expiry order, a bounded number per sweep. Only the first expiry
 * time is in memory (read back with one seek at open).
 *
 * <p>Reads go through the {@link ColdTail}'s view of the entry being applied, so a command sees the keys earlier
 * commands of its entry remembered. Keys remembered before this class existed are in the {@code d} range and the
 * in-memory window, where the engine still finds them until they expire.
 */
final class HandOffKeys {
    /** Keys forgotten per sweep at most. */
    static final int FORGET_PER_SWEEP = 10_000;

    private final PartitionKeys keys;
    private final ColdTail store;
    /** The earliest expiry of a key on disk, or -1 when there is none. */
    private long firstExpiry = -1;

    HandOffKeys(PartitionKeys keys, ColdTail store) {
        this.keys = keys;
        this.store = store;
    }

    /** The entry remembered for {@code key} and still live at {@code now}, or null. */
    DedupWindow.Entry find(String key, long now) {
        if (firstExpiry < 0) {
            return null;
        }
        byte[] stored = store.get(keys.handOffKey(key));
        DedupWindow.Entry e = stored == null ? null : RecordCodec.decodeDedup(key, stored);
        return e != null && e.expiresAtMillis() > now ? e : null;
    }

    void remember(DedupWindow.Entry e, List<Mutation> mutations) {
        store.put(keys.handOffKey(e.key()), RecordCodec.encodeDedup(e), mutations);
        store.put(keys.handOffExpiry(e.expiresAtMillis(), e.seq()), e.key().getBytes(StandardCharsets.UTF_8),
                mutations);
        if (firstExpiry < 0 || e.expiresAtMillis() < firstExpiry) {
            firstExpiry = e.expiresAtMillis();
        }
    }

    /** Whether a key has expired (a sweep would forget something). */
    boolean hasExpired(long now) {
        return firstExpiry >= 0 && firstExpiry <= now;
    }

    /** Forgets up to {@link #FORGET_PER_SWEEP} keys expired at {@code now}, oldest first. */
    void forgetExpired(long now, List<Mutation> mutations) {
        if (!hasExpired(now)) {
            return;
        }
        List<byte[][]> expired = new ArrayList<>();
        store.read(keys.typePrefix(PartitionKeys.HAND_OFF_EXPIRY), keys.handOffExpiry(now + 1, 0), FORGET_PER_SWEEP,
                (k, v) -> expired.add(new byte[][] {k, v}));
        for (byte[][] kv : expired) {
            store.delete(kv[0], mutations);
            String key = new String(kv[1], StandardCharsets.UTF_8);
            byte[] stored = store.get(keys.handOffKey(key));
            long seq = ByteBuffer.wrap(kv[0], PartitionKeys.PREFIX_LENGTH + 1 + 8, 8).getLong();
            if (stored != null && RecordCodec.decodeDedup(key, stored).seq() == seq) {
                // not when the key was remembered again since (its first entry expired before a sweep forgot it)
                store.delete(keys.handOffKey(key), mutations);
            }
        }
        refresh();
    }

    /** Reads the first expiry back (at open, and after forgetting). */
    void refresh() {
        long[] first = {-1};
        store.read(keys.typePrefix(PartitionKeys.HAND_OFF_EXPIRY), keys.typeEnd(PartitionKeys.HAND_OFF_EXPIRY), 1,
                (k, v) -> first[0] = ByteBuffer.wrap(k, PartitionKeys.PREFIX_LENGTH + 1, 8).getLong());
        firstExpiry = first[0];
    }

    /** The partition's data was dropped (its queue deleted without a hand-off). */
    void clear() {
        firstExpiry = -1;
    }

    String describe() {
        return "handOffKeysFirstExpiry=" + firstExpiry;
    }
}
