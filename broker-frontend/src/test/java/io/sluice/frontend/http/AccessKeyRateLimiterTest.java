package io.sluice.frontend.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class AccessKeyRateLimiterTest {
    private final AtomicLong now = new AtomicLong();

    @Test
    void aKeyGetsItsBurstThenItsRate() {
        AccessKeyRateLimiter limiter = new AccessKeyRateLimiter(10, 1, Map.of(), now::get);
        int granted = 0;
        for (int i = 0; i < 50; i++) {
            granted += limiter.tryAcquire("a") ? 1 : 0;
        }
        assertEquals(10, granted, "a full bucket holds one second of rate");
        now.addAndGet(500_000_000L); // half a second refills 5
        granted = 0;
        for (int i = 0; i < 50; i++) {
            granted += limiter.tryAcquire("a") ? 1 : 0;
        }
        assertEquals(5, granted);
        assertTrue(limiter.tryAcquire("b"), "keys have separate buckets");
    }

    @Test
    void perKeyRatesOverrideTheDefaultAndZeroMeansUnlimited() {
        AccessKeyRateLimiter limiter = new AccessKeyRateLimiter(0, 1,
                AccessKeyRateLimiter.parseRates("noisy=2, vip=0"), now::get);
        assertTrue(limiter.tryAcquire("noisy"));
        assertTrue(limiter.tryAcquire("noisy"));
        assertFalse(limiter.tryAcquire("noisy"));
        for (int i = 0; i < 10_000; i++) {
            assertTrue(limiter.tryAcquire("vip"));
            assertTrue(limiter.tryAcquire("anyone-else"));
        }
    }

    @Test
    void malformedSpecsAreRejected() {
        assertThrows(IllegalArgumentException.class, () -> AccessKeyRateLimiter.parseRates("noisy"));
        assertThrows(IllegalArgumentException.class, () -> AccessKeyRateLimiter.parseRates("=3"));
        assertThrows(NumberFormatException.class, () -> AccessKeyRateLimiter.parseRates("a=x"));
        assertThrows(IllegalArgumentException.class, () -> AccessKeyRateLimiter.parseRates("a=NaN"));
        assertThrows(IllegalArgumentException.class, () -> AccessKeyRateLimiter.parseRates("a=Infinity"));
        assertThrows(IllegalArgumentException.class, () -> AccessKeyRateLimiter.parseRates("a=-1"));
        assertThrows(IllegalArgumentException.class, () -> new AccessKeyRateLimiter(-1, 1, Map.of(), now::get));
    }
}
