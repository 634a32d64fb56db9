package io.sluice.frontend.console;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** Figures in an operator's units. */
class UnitsTest {
    @Test
    void durationsShowTheTwoLargestUnitsThatMatter() {
        assertEquals("0 s", Units.duration(0));
        assertEquals("45 s", Units.duration(45));
        assertEquals("5 min 30 s", Units.duration(330));
        assertEquals("1 h", Units.duration(3_600));
        assertEquals("1 h 1 min", Units.duration(3_661));
        assertEquals("4 d", Units.duration(345_600), "the default retention period");
        assertEquals("14 d", Units.duration(1_209_600));
        assertEquals("1 d 1 h", Units.duration(90_061));
        assertEquals("1 d", Units.duration(86_400 + 60), "a minute is not shown after a day with no hour");
    }

    @Test
    void countsAndSizes() {
        assertEquals("1,234,567", Units.count(1_234_567));
        assertEquals("256 KiB", Units.bytes(262_144));
        assertEquals("1 MiB", Units.bytes(1 << 20));
        assertEquals("1,000 bytes", Units.bytes(1_000));
        assertEquals("1 byte", Units.bytes(1));
        assertEquals("just now", Units.ago(400));
        assertEquals("12 s ago", Units.ago(12_300));
    }
}
