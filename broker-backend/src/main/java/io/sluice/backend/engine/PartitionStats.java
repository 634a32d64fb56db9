package io.sluice.backend.engine;

import io.sluice.partition.PartitionId;
import io.sluice.partition.QueueCounts;

/**
 * One partition's counts and totals, read together on the replica that holds it (for metrics); {@code arrivalSkew}
 * null when no producer-timed FIFO message arrived since it was opened here.
 */
public record PartitionStats(PartitionId id, QueueCounts counts, PartitionTotals totals, ArrivalSkew.Snapshot arrivalSkew) {
}
