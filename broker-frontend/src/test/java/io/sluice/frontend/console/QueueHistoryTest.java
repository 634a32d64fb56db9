package io.sluice.frontend.console;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.partition.HistoryPoint;
import io.sluice.partition.QueueCounts;
import java.util.List;
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
        QueueHistory.ChartData chart = new QueueHistory.ChartData();
        s.appendTo(chart, 0);
        String json = chart.json(0, QueueHistory.POINTS * 10L);
        assertTrue(json.startsWith("{\"from\":0,\"now\":3600,\"t\":[50,60,"), json.substring(0, 40));
        assertTrue(json.contains("\"oldest\":[20,20,"), "age = now - oldest send, in seconds");
        assertTrue(json.contains("\"visible\":[5,6,"));
        assertTrue(json.contains("\"sent\":[0.1,0.1,"), "one more message per 10 s");
        QueueHistory.ChartData recent = new QueueHistory.ChartData();
        s.appendTo(recent, 3_000);
        assertEquals(QueueHistory.POINTS + 5 - 300, recent.points(), "only the samples in the range");
    }

    private static HistoryPoint point(long minute, int visible, long sent) {
        return new HistoryPoint(minute, visible, 0, 0, minute * 60_000 - 120_000, sent, 0);
    }

    /**
     * The recorded minutes of a queue's partitions: each carried forward until its next point (written only on
     * change), summed; a partition with no point within the keep-alive makes the minute a gap, not a zero.
     */
    @Test
    void recordedMinutesAreCarriedForwardSummedAndGapped() {
        List<HistoryPoint> one = List.of(point(100, 5, 10), point(103, 7, 40));
        List<HistoryPoint> two = List.of(point(99, 1, 0)); // idle: nothing changed since minute 99
        QueueHistory.ChartData chart = new QueueHistory.ChartData();
        QueueHistory.appendRecorded(chart, List.of(one, two), 100, 105);
        String json = chart.json(6_000, 6_300);
        assertTrue(json.contains("\"t\":[6000,6060,6120,6180,6240]"), json);
        assertTrue(json.contains("\"visible\":[6,6,6,8,8]"), json);
        assertTrue(json.contains("\"oldest\":[180,240,300,360,420]"), "the older partition's oldest message (sent at"
                + " minute 97), growing older minute by minute: " + json);
        assertTrue(json.contains("\"sent\":[null,0.0,0.0,0.5,0.0]"), "30 more between minutes 102 and 103: " + json);

        QueueHistory.ChartData gapped = new QueueHistory.ChartData();
        QueueHistory.appendRecorded(gapped, List.of(one, two), 108, 112);
        assertTrue(gapped.json(0, 0).contains("\"t\":[6480,6540]"), "minute 110 is 11 after partition two's point,"
                + " past the keep-alive: a gap from there " + gapped.json(0, 0));
        QueueHistory.ChartData none = new QueueHistory.ChartData();
        QueueHistory.appendRecorded(none, List.of(one, List.of()), 100, 105);
        assertEquals(0, none.points(), "a partition with no record at all: nothing known");
    }
}
