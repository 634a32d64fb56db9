package io.sluice.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class BackoffTest {
    @Test
    void theCeilingGrowsByTheMultiplierUpToTheCap() {
        Backoff b = new Backoff(Duration.ofSeconds(1), 2, Duration.ofSeconds(10));
        assertEquals(Duration.ofSeconds(1), b.ceiling(1));
        assertEquals(Duration.ofSeconds(2), b.ceiling(2));
        assertEquals(Duration.ofSeconds(8), b.ceiling(4));
        assertEquals(Duration.ofSeconds(10), b.ceiling(5));
        assertEquals(Duration.ofSeconds(10), b.ceiling(1_000_000), "no overflow past the cap");
    }

    @Test
    void fullJitterSpreadsOverZeroToTheCeiling() {
        Backoff b = new Backoff(Duration.ofSeconds(10), 1, Duration.ofSeconds(10));
        Set<Integer> seen = new HashSet<>();
        for (int i = 0; i < 2_000; i++) {
            int s = b.visibilitySeconds(3);
            assertTrue(s >= 0 && s <= 10, "within [0, ceiling]: " + s);
            seen.add(s);
        }
        assertEquals(11, seen.size(), "every whole second from 0 to 10 drawn in 2,000 tries: " + seen);
    }

    @Test
    void rejectsWhatSqsCannotTake() {
        assertThrows(IllegalArgumentException.class, () -> new Backoff(Duration.ofSeconds(5), 2, Duration.ofSeconds(1)));
        assertThrows(IllegalArgumentException.class, () -> new Backoff(Duration.ofSeconds(1), 0.5, Duration.ofSeconds(9)));
        assertThrows(IllegalArgumentException.class, () -> new Backoff(Duration.ofSeconds(1), 2, Duration.ofHours(13)));
    }
}
