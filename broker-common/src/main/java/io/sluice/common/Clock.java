package io.sluice.common;

/**
 * The only source of wall-clock time in Sluice. Production code takes a {@code Clock}; tests pass a
 * {@link ManualClock}. {@link SystemClock} is the one place that reads {@link System#currentTimeMillis()}.
 */
@FunctionalInterface
public interface Clock {
    /** Milliseconds since the Unix epoch. */
    long nowMillis();
}
