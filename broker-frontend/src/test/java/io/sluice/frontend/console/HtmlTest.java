package io.sluice.frontend.console;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class HtmlTest {
    private static final String EMOJI = "\uD83D\uDE00"; // one character, two UTF-16 code units

    @Test
    void aTextNoLongerThanTheLimitIsKeptWhole() {
        assertEquals("abc", Html.cut("abc", 3));
        assertEquals("ab" + EMOJI, Html.cut("ab" + EMOJI, 3), "three characters in four code units");
        assertEquals("", Html.cut("", 0));
    }

    @Test
    void aCutCountsCharactersAndNeverSplitsASurrogatePair() {
        assertEquals("ab" + EMOJI + "…", Html.cut("ab" + EMOJI + "cd", 3));
        assertEquals("ab…", Html.cut("ab" + EMOJI + "cd", 2));
        assertEquals(EMOJI.repeat(2) + "…", Html.cut(EMOJI.repeat(5), 2));
    }
}
