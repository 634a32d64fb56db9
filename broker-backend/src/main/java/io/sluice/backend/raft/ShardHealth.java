package io.sluice.backend.raft;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;

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
                          long appliedIndex, Set<String> members, boolean changing) {
    public static final long IN_SYNC_HEARD_MILLIS = 5_000;
    public static final long IN_SYNC_MAX_LAG = 1_000;

    /** The group as {@code division}, the replica on backend {@code nodeId}, sees it now. */
    static ShardHealth of(RaftServer.Division division, String nodeId) {
        var info = division.getInfo();
        boolean leader = info.isLeader() && info.isLeaderReady(); // a new leader counts once it committed its term
        long applied = info.getLastAppliedIndex();
        if (!leader) {
            return new ShardHealth(false, info.getLeaderId() != null, 0, 0, Map.of(), applied, Set.of(),
                    false);
        }
        // members of the current configuration (voters), not peers still being caught up for a membership change
        var conf = division.getRaftConf();
        Set<String> members = new TreeSet<>();
        conf.getCurrentPeers().forEach(p -> members.add(p.getId().toString()));
        long commit = division.getRaftLog().getLastCommittedIndex();
        Map<String, Long> heardAgo = new HashMap<>();
        var role = info.getRoleInfoProto();
        if (role.hasLeaderInfo()) {
            role.getLeaderInfo().getFollowerInfoList().forEach(f -> heardAgo.put(
                    RaftPeerId.valueOf(f.getId().getId()).toString(), f.getLastRpcElapsedTimeMs()));
        }
        Map<String, Long> lag = new TreeMap<>();
        int inSync = members.contains(nodeId) ? 1 : 0; // the leader itself
        for (var c : division.getCommitInfos()) {
            String peer = RaftPeerId.valueOf(c.getServer().getId()).toString();
            if (peer.equals(nodeId) || !members.contains(peer)) {
                continue;
            }
            long behind = Math.max(0, commit - c.getCommitIndex());
            lag.put(peer, behind);
            Long heard = heardAgo.get(peer);
            if (heard != null && heard <= ShardHealth.IN_SYNC_HEARD_MILLIS && behind <= ShardHealth.IN_SYNC_MAX_LAG) {
                inSync++;
            }
        }
        boolean changing = !conf.getPreviousPeers().isEmpty() || conf.getLogEntryIndex() > commit;
        return new ShardHealth(true, true, members.size(), inSync, lag, applied, members, changing);
    }
}
