package io.sluice.backend.shard;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.sluice.backend.engine.PartitionStats;
import io.sluice.backend.engine.PartitionTotals;
import io.sluice.partition.HistoryPoint;
import io.sluice.partition.PartitionId;
import io.sluice.partition.QueueCounts;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A replica's record of its partitions' counts: written on change or keep-alive, read back by range, kept on disk. */
class ShardHistoryTest {
    @TempDir
    Path dir;

    static final PartitionId A = new PartitionId(7, 0);
    static final PartitionId B = new PartitionId(7, 1);

    static PartitionStats stats(PartitionId id, int visible, long sent) {
        return new PartitionStats(id, new QueueCounts(visible, 0, 0, 0, -1, -1, -1, sent, 0), PartitionTotals.ZERO,
                null);
    }

    static long minute(long m) {
        return m * 60_000 + 30_000;
    }

    @Test
    void pointsAreWrittenOnChangeAndKeepAliveAndSurviveAReopen() {
        Path store = dir.resolve("shard");
        try (ShardHistory h = ShardHistory.open(store)) {
            h.record(minute(100), List.of(stats(A, 5, 10), stats(B, 0, 0)));
            h.record(minute(101), List.of(stats(A, 5, 10), stats(B, 0, 0))); // nothing changed: nothing written
            h.record(minute(102), List.of(stats(A, 6, 11), stats(B, 0, 0)));
            h.record(minute(110), List.of(stats(A, 6, 11), stats(B, 0, 0))); // B's keep-alive (10 minutes)
            h.record(minute(112), List.of(stats(A, 6, 11), stats(B, 0, 0))); // A's
            assertEquals(List.of(100L, 102L, 112L), h.read(A, minute(100), minute(120)).stream()
                    .map(HistoryPoint::minute).toList());
            assertEquals(List.of(100L, 110L), h.read(B, minute(100), minute(120)).stream().map(HistoryPoint::minute)
                    .toList(), "an idle partition: its first point and the keep-alive");
        }
        try (ShardHistory reopened = ShardHistory.open(store)) {
            List<HistoryPoint> range = reopened.read(A, minute(105), minute(113));
            assertEquals(List.of(102L, 112L), range.stream().map(HistoryPoint::minute).toList(),
                    "the last point before the range (the figures at its start), then the range's");
            assertEquals(6, range.get(0).visible());
            assertEquals(11, range.get(0).sentTotal());
            assertEquals(List.of(), reopened.read(new PartitionId(8, 0), minute(0), minute(200)));
        }
    }
}
