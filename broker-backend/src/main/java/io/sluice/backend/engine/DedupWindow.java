package io.sluice.backend.engine;

/**
 * FIFO deduplication ids remembered for 5 minutes from the first accepted send. An entry outlives the message:
 * a duplicate arriving after the original was received and deleted is still dropped.
 */
final class DedupWindow {
    record Entry(String key, String messageId, long seq, String sequenceNumber, long expiresAtMillis) {
    }

    private DedupWindow() {
    }

    static ExpiringRegistry<Entry> create() {
        return new ExpiringRegistry<>(Entry::key, Entry::expiresAtMillis);
    }
}
