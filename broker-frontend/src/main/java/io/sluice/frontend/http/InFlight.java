package io.sluice.frontend.http;

import java.util.concurrent.atomic.AtomicInteger;

/** Counts requests being processed, so shutdown can wait for them to finish. */
final class InFlight {
    private final AtomicInteger count = new AtomicInteger();

    void begin() {
        count.incrementAndGet();
    }

    void end() {
        count.decrementAndGet();
    }

    int count() {
        return count.get();
    }
}
