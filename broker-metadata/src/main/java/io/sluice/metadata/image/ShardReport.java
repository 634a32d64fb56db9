package io.sluice.metadata.image;

import java.util.List;
import java.util.Map;

/**
 * What a shard's leader reports of its Raft group with its backend's heartbeat, for the operator's view of the
 * cluster (admin status, console). Not replicated: the metadata leader keeps the latest report of each shard in
 * memory, as it keeps heartbeats.
 *
 * @param shardId      the catalog's shard id
 * @param leader       the reporting backend, the shard's leader (it has committed an entry of its term)
 * @param members      the voting members of the group's current Raft configuration
 * @param inSync       members, leader included, heard from within 5 s and within 1,000 entries of the leader's commit
 * @param followerLag  per follower, entries committed on the leader that it has not acknowledged
 * @param changing     a membership change is under way (joint configuration, or its entry not yet committed)
 * @param appliedIndex the last log index the leader applied
 * @param ageMillis    how long before the answer the metadata leader received the report (0 as sent)
 */
public record ShardReport(String shardId, String leader, List<String> members, int inSync,
                          Map<String, Long> followerLag, boolean changing, long appliedIndex, long ageMillis) {
    public ShardReport {
        members = List.copyOf(members);
        followerLag = Map.copyOf(followerLag);
    }

    public ShardReport withAge(long millis) {
        return new ShardReport(shardId, leader, members, inSync, followerLag, changing, appliedIndex, millis);
    }
}
