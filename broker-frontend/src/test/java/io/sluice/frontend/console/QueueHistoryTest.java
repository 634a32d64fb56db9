package io.sluice.frontend.console;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.partition.QueueCounts;
import org.junit.jupiter.api.Test;

/** A queue's samples: rates from the totals' growth, the oldest message's age, and the ring of the last hour. */
class QueueHistoryTest {
    private static QueueCounts counts(int visible, long oldestMillis, long sent, long received) {
        return new QueueCounts(visible, 0, 0, 0, oldestMillis, -1, -1, sent, received);
    }

    @Test
    void ratesComeFromTheTotalsBetweenTwoSamples() {
        QueueHistory.Series s = new QueueHistory.Series();
        s.add(1_000, counts(5, 990_000, 100, 40), 1_000_000);
        assertNull(s.latestRates(), "one sample has no rate");
        s.add(1_010, counts(5, 990_000, 150, 60), 1_010_000);
        assertArrayEquals(new float[] {5.0f, 2.0f}, s.latestRates());
        s.add(1_020, counts(5, 990_000, -1, 60), 1_020_000);
        assertEquals(-1f, s.latestRates()[0], "an unknown total (an older backend) gives no rate");
        s.add(1_030, counts(5, 990_000, 10, 70), 1_030_000);
        assertEquals(-1f, s.latestRates()[0], "after an unknown total, no rate yet");
        assertEquals(1.0f, s.latestRates()[1]);
        s.add(1_040, counts(5, 990_000, 5, 80), 1_040_000);
        assertEquals(-1f, s.latestRates()[0], "a total that went back (a partition's state moved) gives no rate");
        s.add(1_050, counts(5, 990_000, 25, 80), 1_050_000);
        assertArrayEquals(new float[] {2.0f, 0.0f}, s.latestRates());
    }

    @Test
    void theRingKeepsTheLastHourOldestFirst() {
        QueueHistory.Series s = new QueueHistory.Series();
        for (int i = 0; i < QueueHistory.POINTS + 5; i++) {
            s.add(i * 10L, counts(i, i * 10_000L - 20_000, i, i), i * 10_000L);
        }
        String json = s.json(QueueHistory.POINTS * 10L);
        assertTrue(json.startsWith("{\"now\":3600,\"t\":[50,60,"), json.substring(0, 40));
        assertTrue(json.contains("\"oldest\":[20,20,"), "age = now - oldest send, in seconds");
        assertTrue(json.contains("\"visible\":[5,6,"));
        assertTrue(json.contains("\"sent\":[0.1,0.1,"), "one more message per 10 s");
    }
}
