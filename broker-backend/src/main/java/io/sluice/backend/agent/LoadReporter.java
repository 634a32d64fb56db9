package io.sluice.backend.agent;

import io.sluice.backend.metrics.QueueMetrics;
import io.sluice.catalog.QueueMetadata;
import io.sluice.metadata.image.ClusterImage;
import io.sluice.metadata.image.PartitionLoad;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What a primary tells the metadata leader of its partitions' load (for the auto-split policy): the partitions whose
 * sent or received totals moved since its last report, so a quiet partition costs nothing however many there are.
 * One per reporting loop (a backend's heartbeat, {@code sluice dev}'s in-process feed); not thread-safe.
 */
public final class LoadReporter {
    private final Map<String, PartitionLoad> lastReported = new HashMap<>();

    public List<PartitionLoad> changed(List<QueueMetrics.Row> primaries, ClusterImage image) {
        List<PartitionLoad> out = new ArrayList<>();
        Map<String, PartitionLoad> seen = new HashMap<>();
        for (QueueMetrics.Row row : primaries) {
            QueueMetadata q = image.queues().get(row.queue());
            if (q == null) {
                continue;
            }
            PartitionLoad load = new PartitionLoad(q.queueId(), row.partition(), row.totals().sent(),
                    row.totals().received(), Math.max(0, row.counts().oldestRetentionBaseMillis()));
            seen.put(load.key(), load);
            PartitionLoad before = lastReported.get(load.key());
            if (before == null || before.sent() != load.sent() || before.received() != load.received()) {
                out.add(load);
            }
        }
        lastReported.clear();
        lastReported.putAll(seen);
        return out;
    }
}
