package io.sluice.metadata.image;

/**
 * What a partition's primary reports of its load with its backend's heartbeat: its running totals of messages sent
 * and received (they only grow, on every replica alike) and when its oldest message was sent (0 when it is empty).
 */
public record PartitionLoad(long queueId, int index, long sent, long received, long oldestMillis) {
    public String key() {
        return queueId + "/" + index;
    }
}
