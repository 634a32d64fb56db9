package io.sluice.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class SqsLimitsTest {
    @Test
    void bodyCharacterSetIsXml10() {
        assertTrue(SqsLimits.hasOnlyAllowedCharacters("tab\there\r\nline \uD7FF \uE000 \uFFFD \uD83D\uDE00"));
        assertFalse(SqsLimits.hasOnlyAllowedCharacters("nul\u0000"));
        assertFalse(SqsLimits.hasOnlyAllowedCharacters("bs\u0008"));
        assertFalse(SqsLimits.hasOnlyAllowedCharacters("\uFFFF"));
        assertFalse(SqsLimits.hasOnlyAllowedCharacters("lone high \uD83D"));
        assertFalse(SqsLimits.hasOnlyAllowedCharacters("lone low \uDE00 x"));
    }

    /** Every single UTF-16 unit, against the XML 1.0 definition (a lone surrogate is never allowed). */
    @Test
    void everyCharAloneAgreesWithTheCodePointRule() {
        for (int c = 0; c <= 0xFFFF; c++) {
            boolean expected = !Character.isSurrogate((char) c) && SqsLimits.isAllowedCodePoint(c);
            assertEquals(expected, SqsLimits.hasOnlyAllowedCharacters("a" + (char) c + "b"),
                    "U+" + Integer.toHexString(c));
        }
    }

    @Test
    void fifoIds() {
        assertTrue(SqsLimits.isValidFifoId("group-1!~"));
        assertTrue(SqsLimits.isValidFifoId("x".repeat(128)));
        assertFalse(SqsLimits.isValidFifoId("x".repeat(129)));
        assertFalse(SqsLimits.isValidFifoId(""));
        assertFalse(SqsLimits.isValidFifoId("has space"));
        assertFalse(SqsLimits.isValidFifoId("caf\u00e9"));
    }

    @Test
    void utf8Length() {
        assertEquals(1, Utf8.length("a"));
        assertEquals(2, Utf8.length("\u00e9"));
        assertEquals(3, Utf8.length("\u20ac"));
        assertEquals(4, Utf8.length("\uD83D\uDE00"));
    }
}
