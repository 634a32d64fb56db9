package io.sluice.backend.engine;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * FIFO deduplication ids remembered for 5 minutes from the first accepted send. An entry outlives the message:
 * a duplicate arriving after the original was received and deleted is still dropped.
 */
final class DedupWindow {
    record Entry(String key, String messageId, long seq, String sequenceNumber, long expiresAtMillis) {
    }

    private final Map<String, Entry> byKey = new HashMap<>();
    /** Entries in expiry order. Time in the engine never goes back, so insertion order is expiry order. */
    private final ArrayDeque<Entry> byExpiry = new ArrayDeque<>();

    /** The live entry for a key, or null when absent or expired. */
    Entry find(String key, long nowMillis) {
        Entry e = byKey.get(key);
        return e != null && e.expiresAtMillis() > nowMillis ? e : null;
    }

    void remember(Entry entry) {
        byKey.put(entry.key(), entry);
        byExpiry.addLast(entry);
    }

    /** Forgets expired entries, calling {@code onForget} for each so its stored copy can be deleted. */
    void forgetExpired(long nowMillis, Consumer<String> onForget) {
        while (!byExpiry.isEmpty() && byExpiry.peekFirst().expiresAtMillis() <= nowMillis) {
            Entry e = byExpiry.pollFirst();
            if (byKey.get(e.key()) == e) {
                byKey.remove(e.key());
                onForget.accept(e.key());
            }
        }
    }

    /** Rebuilds from storage; entries are re-sorted into expiry order. */
    void recover(Iterable<Entry> entries) {
        java.util.List<Entry> sorted = new java.util.ArrayList<>();
        entries.forEach(sorted::add);
        sorted.sort(java.util.Comparator.comparingLong(Entry::expiresAtMillis).thenComparing(Entry::key));
        sorted.forEach(this::remember);
    }

    int size() {
        return byKey.size();
    }

    /** Canonical content for state comparison. */
    java.util.SortedMap<String, Entry> snapshot() {
        return new java.util.TreeMap<>(byKey);
    }
}
