package io.sluice.metadata.image;

import java.util.List;

/**
 * Which backends hold one queue partition. The first replica is the preferred primary; {@code epoch} increases on
 * every change of the replica set, so a stale route or a stale replica can tell it is out of date.
 *
 * @param shardId the shard (Raft group) holding the partition, or null where partitions are not sharded
 *                ({@code sluice dev}); the replicas are then the shard's
 */
public record PartitionAssignment(long queueId, int index, List<String> replicas, long epoch, String shardId) {
    public PartitionAssignment {
        replicas = List.copyOf(replicas);
    }

    public String key() {
        return key(queueId, index);
    }

    public static String key(long queueId, int index) {
        return queueId + "/" + index;
    }
}
