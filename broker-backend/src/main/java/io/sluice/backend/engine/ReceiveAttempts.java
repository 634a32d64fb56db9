package io.sluice.backend.engine;

import java.util.Arrays;

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
        String describe() {
            return expiresAtMillis + ":" + Arrays.toString(leases);
        }
    }

    private ReceiveAttempts() {
    }

    static ExpiringRegistry<Attempt> create() {
        return new ExpiringRegistry<>(Attempt::id, Attempt::expiresAtMillis);
    }
}
