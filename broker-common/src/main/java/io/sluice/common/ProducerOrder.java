package io.sluice.common;

/**
 * The message attributes of producer order on FIFO queues with a reorder window ({@code SluiceReorderWindowMillis};
 * docs/architecture.md, "Producer order"). The names are reserved on every queue.
 */
public final class ProducerOrder {
    /** Set by producers: when the message was produced, epoch milliseconds (a Number, a whole number, 0 or more). */
    public static final String PRODUCER_TIME = "Sluice.ProducerTime";
    /** Optionally set by producers (a String): who produced it, ordering messages with equal producer times. */
    public static final String PRODUCER_ID = "Sluice.ProducerId";
    /** Set by Sluice (String {@code true}) on a straggler delivered after a message later in producer order. */
    public static final String LATE = "Sluice.Late";

    private ProducerOrder() {
    }

    /** A producer time's value as stored, or -1 when it is not a whole number of milliseconds, 0 or more. */
    public static long parseProducerTime(String value) {
        if (value == null || value.isEmpty() || value.length() > 18) {
            return -1;
        }
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
        }
        return Long.parseLong(value);
    }
}
