package io.sluice.backend.raft;

import java.util.Map;

/**
 * How one shard group looks from this replica, for metrics and alerts.
 *
 * @param leader        this replica leads the group (it is the primary of the shard's partitions)
 * @param leaderKnown   this replica knows a current leader (itself included); false while an election runs
 * @param replicas      members of the Raft configuration (known on the leader; 0 elsewhere)
 * @param inSync        members, leader included, that answered within {@link #IN_SYNC_HEARD_MILLIS} and whose commit
 *                      index is within {@link #IN_SYNC_MAX_LAG} entries of the leader's (leader only)
 * @param followerLag   per follower id, entries committed on the leader that it has not acknowledged (leader only)
 * @param appliedIndex  the last log index this replica applied
 * @param members       ids of the current configuration's members (leader only)
 * @param changing      a membership change is under way: joint configuration, or not yet committed (leader only)
 */
public record ShardHealth(boolean leader, boolean leaderKnown, int replicas, int inSync, Map<String, Long> followerLag,
                          long appliedIndex, java.util.Set<String> members, boolean changing) {
    public static final long IN_SYNC_HEARD_MILLIS = 5_000;
    public static final long IN_SYNC_MAX_LAG = 1_000;
}
