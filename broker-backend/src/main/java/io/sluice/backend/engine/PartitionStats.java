package io.sluice.backend.engine;

import io.sluice.partition.PartitionId;
import io.sluice.partition.QueueCounts;

/** One partition's counts and totals, read together on the replica that holds it (for metrics). */
public record PartitionStats(PartitionId id, QueueCounts counts, PartitionTotals totals) {
}
