package io.sluice.backend.engine;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * FIFO {@code ReceiveRequestAttemptId}s remembered for 5 minutes: a retried receive with the same id gets the
 * same messages and receipt handles, provided none of them was deleted or had its visibility changed since.
 */
final class ReceiveAttempts {
    /**
     * @param leases triples {@code (seq, receiveCount, visibleAtMillis)} of the leased messages; a lease is
     *               unchanged while the message still has that receive count and that deadline
     */
    record Attempt(String id, long expiresAtMillis, long[] leases) {
    }

    private final Map<String, Attempt> byId = new HashMap<>();
    private final ArrayDeque<Attempt> byExpiry = new ArrayDeque<>();

    Attempt find(String id, long nowMillis) {
        Attempt a = byId.get(id);
        return a != null && a.expiresAtMillis() > nowMillis ? a : null;
    }

    void remember(Attempt attempt) {
        byId.put(attempt.id(), attempt);
        byExpiry.addLast(attempt);
    }

    void forgetExpired(long nowMillis, Consumer<String> onForget) {
        while (!byExpiry.isEmpty() && byExpiry.peekFirst().expiresAtMillis() <= nowMillis) {
            Attempt a = byExpiry.pollFirst();
            if (byId.get(a.id()) == a) {
                byId.remove(a.id());
                onForget.accept(a.id());
            }
        }
    }

    void recover(Iterable<Attempt> attempts) {
        java.util.List<Attempt> sorted = new java.util.ArrayList<>();
        attempts.forEach(sorted::add);
        sorted.sort(java.util.Comparator.comparingLong(Attempt::expiresAtMillis).thenComparing(Attempt::id));
        sorted.forEach(this::remember);
    }

    /** Canonical content for state comparison. */
    java.util.SortedMap<String, String> snapshot() {
        java.util.SortedMap<String, String> out = new java.util.TreeMap<>();
        byId.forEach((k, v) -> out.put(k, v.expiresAtMillis() + ":" + java.util.Arrays.toString(v.leases())));
        return out;
    }
}
