package io.sluice.backend.shard;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.common.ManualClock;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class LeaderClockTest {
    static final long T0 = 1_700_000_000_000L;
    final ManualClock wall = new ManualClock(T0);
    final AtomicLong nanos = new AtomicLong(5_000_000_000L);
    final LeaderClock clock = new LeaderClock(wall, nanos::get, 1_000);

    void elapse(long millis) {
        wall.advanceMillis(millis);
        nanos.addAndGet(millis * 1_000_000);
    }

    @Test
    void withoutAReferenceTheWallClockIsBoundToTheLastStampPlusMonotonicTime() {
        assertEquals(T0, clock.stamp(Long.MIN_VALUE, 0), "nothing applied yet: the wall clock");
        long appliedAt = nanos.get();
        elapse(10_000);
        assertEquals(T0 + 10_000, clock.stamp(T0, appliedAt), "a sound clock is used as it is");
        wall.advanceMillis(3_600_000);
        assertEquals(T0 + 10_000 + 1_000, clock.stamp(T0, appliedAt), "a jump is cut to the bound");
        assertFalse(clock.skewed(), "no reference: nothing to call skewed");
        assertEquals(0, clock.offsetMillis());
    }

    @Test
    void aReferenceHoldsTheStampWithinTheBoundEitherWay() {
        assertTrue(clock.observeReference(T0 + 200, nanos.get(), nanos.get()));
        assertEquals(T0, clock.stamp(T0 - 5, nanos.get()), "200 ms off: within the bound, the wall clock");
        assertEquals(-200, clock.offsetMillis());
        assertFalse(clock.skewed());

        wall.advanceMillis(7_200_000); // the wall clock jumps two hours ahead
        assertEquals(T0 + 200 + 1_000, clock.stamp(T0, nanos.get()));
        assertTrue(clock.skewed());
        elapse(60_000);
        assertEquals(T0 + 200 + 60_000 + 1_000, clock.now(), "the reference is projected on the monotonic clock");

        wall.set(T0 - 7_200_000); // and then two hours behind
        assertEquals(T0 + 200 + 60_000 - 1_000, clock.stamp(T0, nanos.get()));
        assertTrue(clock.skewed());
    }

    @Test
    void readingsOverSlowRoundTripsAreIgnored() {
        assertFalse(clock.observeReference(T0 + 7_200_000, 0, 2_000_000_000L));
        assertFalse(clock.skewed());
        assertTrue(clock.observeReference(T0 + 100, 0, 300_000_000L));
    }
}
