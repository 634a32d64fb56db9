package io.sluice.worker;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Exponential back-off with full jitter for failed messages: the {@code n}-th receive's failure makes the message
 * visible again after a uniform time in {@code [0, min(max, initial * multiplier^(n-1))]}, so a failing downstream is
 * not hammered and workers that failed together do not retry together. Applied with ChangeMessageVisibility, so it
 * works against any SQS server; Sluice can also do it server-side ({@code SluiceRedeliveryBackoff}).
 *
 * @param initial    the first failure's upper bound
 * @param multiplier growth per receive, at least 1
 * @param max        the cap, at most 12 hours (SQS's longest visibility timeout)
 */
public record Backoff(Duration initial, double multiplier, Duration max) {
    static final Duration LONGEST = Duration.ofHours(12);

    public Backoff {
        if (initial.isNegative() || max.compareTo(initial) < 0 || max.compareTo(LONGEST) > 0 || !(multiplier >= 1)) {
            throw new IllegalArgumentException("backoff needs 0 <= initial <= max <= 12 h and multiplier >= 1: "
                    + initial + ", " + multiplier + ", " + max);
        }
    }

    /** 1 s doubling up to 15 minutes. */
    public static Backoff defaults() {
        return new Backoff(Duration.ofSeconds(1), 2, Duration.ofMinutes(15));
    }

    /** The upper bound of the wait after the {@code receiveCount}-th receive failed. */
    public Duration ceiling(int receiveCount) {
        double millis = Math.min(max.toMillis(),
                initial.toMillis() * Math.pow(multiplier, Math.max(0, receiveCount - 1)));
        return Duration.ofMillis((long) millis);
    }

    /** The jittered wait, whole seconds (what ChangeMessageVisibility takes), in [0, ceiling]. */
    public int visibilitySeconds(int receiveCount) {
        long ceilingMillis = ceiling(receiveCount).toMillis();
        long millis = ThreadLocalRandom.current().nextLong(ceilingMillis + 1);
        return (int) Math.min(LONGEST.toSeconds(), Math.round(millis / 1000.0));
    }
}
