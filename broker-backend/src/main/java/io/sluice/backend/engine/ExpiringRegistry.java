package io.sluice.backend.engine;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.ToLongFunction;

/**
 * Entries remembered until an expiry time, found by key: the shape of the FIFO deduplication window and of the
 * receive-attempt records. Engine time never goes back and every entry lives for the same window, so insertion
 * order is expiry order and forgetting is a walk from the front.
 */
final class ExpiringRegistry<E> {
    private final Function<E, String> keyOf;
    private final ToLongFunction<E> expiresAtOf;
    private final Map<String, E> byKey = new HashMap<>();
    private final ArrayDeque<E> byExpiry = new ArrayDeque<>();

    ExpiringRegistry(Function<E, String> keyOf, ToLongFunction<E> expiresAtOf) {
        this.keyOf = keyOf;
        this.expiresAtOf = expiresAtOf;
    }

    /** The live entry for a key, or null when absent or expired. */
    E find(String key, long nowMillis) {
        E e = byKey.get(key);
        return e != null && expiresAtOf.applyAsLong(e) > nowMillis ? e : null;
    }

    /** Adds or replaces the entry for its key. */
    void remember(E entry) {
        byKey.put(keyOf.apply(entry), entry);
        byExpiry.addLast(entry);
    }

    /** Forgets expired entries, calling {@code onForget} with each key so its stored copy can be deleted. */
    void forgetExpired(long nowMillis, Consumer<String> onForget) {
        while (!byExpiry.isEmpty() && expiresAtOf.applyAsLong(byExpiry.peekFirst()) <= nowMillis) {
            E e = byExpiry.pollFirst();
            String key = keyOf.apply(e);
            if (byKey.get(key) == e) { // not replaced by a newer entry for the same key
                byKey.remove(key);
                onForget.accept(key);
            }
        }
    }

    /** Whether some entry has expired (and {@link #forgetExpired} would drop something). */
    boolean hasExpired(long nowMillis) {
        return !byExpiry.isEmpty() && expiresAtOf.applyAsLong(byExpiry.peekFirst()) <= nowMillis;
    }

    /** Rebuilds from storage, in expiry order. */
    void recover(Iterable<E> entries) {
        List<E> sorted = new ArrayList<>();
        entries.forEach(sorted::add);
        sorted.sort(Comparator.comparingLong(expiresAtOf).thenComparing(keyOf));
        sorted.forEach(this::remember);
    }

    /** Canonical content for state comparison. */
    <V> SortedMap<String, V> snapshot(Function<E, V> render) {
        SortedMap<String, V> out = new TreeMap<>();
        byKey.forEach((k, v) -> out.put(k, render.apply(v)));
        return out;
    }
}
