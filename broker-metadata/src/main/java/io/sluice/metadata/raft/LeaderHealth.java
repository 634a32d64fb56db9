package io.sluice.metadata.raft;

import io.sluice.metadata.image.ShardReport;
import java.util.List;
import java.util.Set;

/**
 * What only the metadata leader knows, as it answered the {@code health} query: which backends it holds alive and the
 * latest report of each shard's leader.
 *
 * @param leader the metadata member that answered (the group's leader)
 * @param alive  the backends alive by their heartbeats
 * @param shards the latest report of each shard received within the last 6 s, by shard id
 */
public record LeaderHealth(String leader, Set<String> alive, List<ShardReport> shards) {
    public LeaderHealth {
        alive = Set.copyOf(alive);
        shards = List.copyOf(shards);
    }
}
