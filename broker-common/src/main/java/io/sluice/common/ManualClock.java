package io.sluice.common;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/** A {@link Clock} that moves only when told to. For tests and simulations. */
public final class ManualClock implements Clock {
    private final AtomicLong nowMillis;

    public ManualClock(long startMillis) {
        this.nowMillis = new AtomicLong(startMillis);
    }

    @Override
    public long nowMillis() {
        return nowMillis.get();
    }

    public long advance(Duration by) {
        return advanceMillis(by.toMillis());
    }

    public long advanceMillis(long millis) {
        if (millis < 0) {
            throw new IllegalArgumentException("time only moves forward: " + millis);
        }
        return nowMillis.addAndGet(millis);
    }

    public void set(long millis) {
        nowMillis.set(millis);
    }
}
