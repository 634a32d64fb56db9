package io.sluice.frontend.console;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class SignInThrottleTest {
    private final AtomicLong now = new AtomicLong(1_000_000);
    private final SignInThrottle throttle = new SignInThrottle(now::get);

    @Test
    void anAddressIsRefusedAfterItsFailuresUntilItsWindowEnds() {
        for (int i = 0; i < SignInThrottle.MAX_FAILURES - 1; i++) {
            throttle.failed("10.0.0.1");
        }
        assertFalse(throttle.blocked("10.0.0.1"), "one failure short of the limit");
        throttle.failed("10.0.0.1");
        assertTrue(throttle.blocked("10.0.0.1"));
        assertFalse(throttle.blocked("10.0.0.2"), "another address keeps its own budget");
        now.addAndGet(SignInThrottle.WINDOW_MILLIS - 1);
        assertTrue(throttle.blocked("10.0.0.1"), "until the minute is over");
        now.addAndGet(1);
        assertFalse(throttle.blocked("10.0.0.1"), "a new window");
        throttle.failed("10.0.0.1");
        assertFalse(throttle.blocked("10.0.0.1"), "counted from one again");
    }

    @Test
    void anIpv6HostIsCountedByItsSlash64AndIsToldHowLongToWait() {
        for (int i = 0; i < SignInThrottle.MAX_FAILURES; i++) {
            throttle.failed("2001:db8:1:2::" + Integer.toHexString(i + 1)); // a new address of the /64 each time
        }
        assertTrue(throttle.blocked("2001:db8:1:2:ffff::9"), "the whole /64");
        assertFalse(throttle.blocked("2001:db8:1:3::1"), "another /64");
        now.addAndGet(15_000);
        assertEquals(45_000, throttle.blockedForMillis("2001:db8:1:2::1"));
    }

    @Test
    void theOldestWindowsGiveWayBeyondTheTrackedAddresses() {
        for (int i = 0; i < SignInThrottle.MAX_FAILURES; i++) {
            throttle.failed("first");
        }
        assertTrue(throttle.blocked("first"));
        for (int i = 0; i < SignInThrottle.MAX_ADDRESSES; i++) {
            throttle.failed("a" + i);
        }
        assertFalse(throttle.blocked("first"), "dropped: the memory stays bounded");
        String newest = "a" + (SignInThrottle.MAX_ADDRESSES - 1);
        for (int i = 1; i < SignInThrottle.MAX_FAILURES; i++) {
            throttle.failed(newest);
        }
        assertTrue(throttle.blocked(newest), "the newest windows are kept");
    }
}
