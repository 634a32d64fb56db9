package io.sluice.metadata.image;

import java.util.List;

/**
 * A shard: one Raft group of backends holding many queue partitions. The first replica is the preferred leader
 * (the primary of every partition in the shard); {@code groupId} is the Raft group's UUID; {@code epoch} increases
 * with every replica change.
 */
public record ShardInfo(String shardId, String groupId, List<String> replicas, long epoch) {
    public ShardInfo {
        replicas = List.copyOf(replicas);
    }
}
