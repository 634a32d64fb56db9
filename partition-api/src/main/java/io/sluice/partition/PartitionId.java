package io.sluice.partition;

/**
 * One partition of one queue incarnation. {@code queueId} is assigned by the catalog when the queue is created
 * and never reused, so a re-created queue of the same name is a different partition. Queue id 0 is reserved
 * for shard-level keys.
 */
public record PartitionId(long queueId, int index) {
    public PartitionId {
        if (queueId <= 0) {
            throw new IllegalArgumentException("queueId must be positive: " + queueId);
        }
        if (index < 0) {
            throw new IllegalArgumentException("partition index must not be negative: " + index);
        }
    }

    @Override
    public String toString() {
        return queueId + "/" + index;
    }
}
