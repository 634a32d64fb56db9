package io.sluice.backend.raft;

import io.sluice.common.raft.RaftTransport;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.exceptions.ReconfigurationInProgressException;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.util.TimeDuration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A shard leader's membership changes: the group's Raft members made the catalog's replicas one safe step at a time,
 * dropped replicas told to remove their copies, older groups' Raft priorities evened out, a change Ratis left stuck
 * restarted by stepping down. Called by the backend's agent on its ticks (blocking calls: never on a Ratis thread).
 */
public final class ShardMembership {
    private static final Logger LOG = LoggerFactory.getLogger(ShardMembership.class);

    private final String nodeId;
    private final RaftServer server;
    private final RaftTransport transport;
    private final ShardLeadership leadership;
    /** Replicas dropped by a committed membership change that could not be told yet (this backend led it). */
    private final Map<RaftGroupId, Set<RaftPeer>> pendingDrops = new ConcurrentHashMap<>();
    /** Since when a shard's membership change has been refused as "in progress" with a stable configuration. */
    private final Map<RaftGroupId, Long> stuckSince = new ConcurrentHashMap<>();
    private static final long STUCK_STEP_DOWN_NANOS = TimeUnit.SECONDS.toNanos(30);

    ShardMembership(String nodeId, RaftServer server, RaftTransport transport, ShardLeadership leadership) {
        this.nodeId = nodeId;
        this.server = server;
        this.transport = transport;
        this.leadership = leadership;
    }

    /**
     * The next membership on the way from {@code current} to {@code target}: the target itself, unless it adds at
     * least as many replicas as it keeps (a one-replica shard moved, say), which Ratis refuses in one change (an
     * endless election could follow, RATIS-1912); then the current members plus one of the new ones, and the rest on
     * the following calls.
     */
    static List<RaftPeer> nextMembership(Collection<RaftPeer> current,
                                                   Collection<RaftPeer> target) {
        Set<RaftPeerId> currentIds = new HashSet<>();
        current.forEach(p -> currentIds.add(p.getId()));
        List<RaftPeer> added = target.stream().filter(p -> !currentIds.contains(p.getId()))
                .toList();
        long kept = target.size() - added.size();
        if (added.isEmpty() || added.size() < kept) {
            return new ArrayList<>(target);
        }
        List<RaftPeer> step = new ArrayList<>(current);
        step.add(added.get(0));
        return step;
    }

    /**
     * As the shard's leader, makes the group's Raft membership {@code target}'s (the catalog's replicas) if it differs:
     * a replica the catalog replaced is removed and its replacement added; Ratis catches the newcomer up from the log
     * or a snapshot before counting it. Returns whether a change was requested. Blocking: call from an agent thread.
     */
    public boolean reconfigure(RaftGroup target) {
        RaftGroupId id = target.getGroupId();
        try {
            var division = server.getDivision(id);
            if (!division.getInfo().isLeader()) {
                return false;
            }
            retryDrops(id);
            List<RaftPeer> before = List.copyOf(division.getRaftConf().getCurrentPeers());
            Set<String> current = ShardClient.members(before);
            Set<String> wanted = ShardClient.members(target.getPeers());
            if (!division.getRaftConf().getPreviousPeers().isEmpty()) { // a change under way
                return false;
            }
            if (current.equals(wanted)) {
                return equalPriorities(division, before);
            }
            // to this leader, through the current group (the target's peers may not include it, or be empty yet)
            try (RaftClient admin = transport.client(division.getGroup(), 10_000).setLeaderId(division.getId())
                    .setRetryPolicy(RetryPolicies.retryUpToMaximumCountWithFixedSleep(2,
                            TimeDuration.valueOf(500, TimeUnit.MILLISECONDS)))
                    .build()) { // bounded: the next agent tick tries again
                List<RaftPeer> step = nextMembership(before, target.getPeers());
                if (step.stream().noneMatch(p -> p.getId().equals(division.getId()))) {
                    // A Ratis 3.2.0 leader that commits its own removal closes itself from its own state thread, and
                    // here it never finished closing: removing its group then hung (seen moving a one-replica shard;
                    // ratis-notes.md lists a leader step-down deadlock fixed in 3.2.1, RATIS-2345). So it hands the
                    // leadership to a member that stays, which makes the change with this backend a follower (then
                    // told to drop its copy).
                    RaftPeer heir = step.stream().filter(p -> before.stream().anyMatch(b -> b.getId().equals(p.getId())))
                            .findFirst().orElse(null);
                    if (heir == null) {
                        return false;
                    }
                    RaftClientReply handed = admin.admin().transferLeadership(heir.getId(), 10_000);
                    LOG.info("backend {} hands the leadership of shard group {} to {} before leaving it: {}", nodeId,
                            id, heir.getId(), handed.isSuccess() ? "done" : handed.getException());
                    return handed.isSuccess();
                }
                RaftClientReply reply = admin.admin().setConfiguration(step);
                LOG.info("backend {} changed the members of shard group {} from {} to {}{}: {}", nodeId, id, current,
                        ShardClient.members(step), step.size() == wanted.size() ? "" : " (on the way to " + wanted + ")",
                        reply.isSuccess() ? "done" : reply.getException());
                if (reply.isSuccess()) { // committed: the dropped replicas' copies are no longer needed
                    stuckSince.remove(id);
                    Set<String> wantedIds = new HashSet<>();
                    step.forEach(p -> wantedIds.add(p.getId().toString()));
                    tellToDrop(id, before.stream().filter(p -> !wantedIds.contains(p.getId().toString())).toList());
                } else {
                    unstick(id, reply.getException());
                }
                return reply.isSuccess();
            }
        } catch (IOException e) {
            LOG.warn("backend {} could not change the members of {} yet: {}", nodeId, id, e.getMessage());
            unstick(id, e);
            return false;
        }
    }

    /**
     * Groups made by older releases gave their first replica Raft priority 1. A candidate then waits out an election
     * timeout, in the pre-vote and again in the vote, for a higher-priority member that does not answer: a partitioned
     * preferred leader stalled its shard ~2 s longer than a killed one. Every member now has the same priority and
     * {@link ShardLeadership#handBack} spreads the leaderships; this sets an older group's members to equal priorities, once.
     */
    private boolean equalPriorities(RaftServer.Division division, List<RaftPeer> before) {
        if (before.stream().allMatch(p -> p.getPriority() == 0)) {
            return false;
        }
        List<RaftPeer> equal = before.stream().map(p -> RaftPeer.newBuilder(p).setPriority(0).build())
                .toList();
        try (RaftClient admin = transport.client(division.getGroup(), 10_000).setLeaderId(division.getId())
                .setRetryPolicy(RetryPolicies.noRetry()).build()) {
            RaftClientReply reply = admin.admin().setConfiguration(equal);
            LOG.info("backend {} gave the members of shard group {} equal Raft priorities: {}", nodeId,
                    division.getGroup().getGroupId(), reply.isSuccess() ? "done" : reply.getException());
            return reply.isSuccess();
        } catch (IOException e) {
            LOG.warn("backend {} could not give the members of {} equal priorities yet: {}", nodeId,
                    division.getGroup().getGroupId(), e.getMessage());
            return false;
        }
    }

    /**
     * After a committed membership change, tells each dropped replica to remove the group (it may never learn of
     * the commit itself: the leader stops replicating to it); one that is down keeps an orphan copy until removed by
     * hand. This backend itself, if dropped, removes its own.
     */
    private void tellToDrop(RaftGroupId id, List<RaftPeer> dropped) {
        for (RaftPeer peer : dropped) {
            if (peer.getId().toString().equals(nodeId)) {
                continue; // never happens: a leader hands its leadership over before a change removes it (reconfigure)
            }
            try (RaftClient admin = transport.client(RaftGroup.valueOf(id, peer), 5_000)
                    .setRetryPolicy(RetryPolicies.noRetry()).build()) {
                RaftClientReply reply = admin.getGroupManagementApi(peer.getId()).remove(id, true, false);
                if (!reply.isSuccess() && !String.valueOf(reply.getException()).contains("not found")) {
                    throw new IOException(String.valueOf(reply.getException()));
                }
                LOG.info("backend {} told {} to drop its copy of shard group {}", nodeId, peer.getId(), id);
                pendingDrops.computeIfPresent(id, (g, peers) -> {
                    peers.remove(peer);
                    return peers.isEmpty() ? null : peers;
                });
            } catch (IOException e) {
                // down or unreachable: told again on every pass while this backend leads (a restart forgets)
                pendingDrops.computeIfAbsent(id, g -> ConcurrentHashMap.newKeySet()).add(peer);
                LOG.warn("backend {} could not tell {} to drop shard group {} yet: {}", nodeId, peer.getId(), id,
                        e.getMessage());
            }
        }
    }

    private void retryDrops(RaftGroupId id) {
        Set<RaftPeer> pending = pendingDrops.get(id);
        if (pending != null && !pending.isEmpty()) {
            tellToDrop(id, List.copyOf(pending));
        }
    }

    /**
     * Ratis (3.2) can leave a leader's membership change staged for good: when a first attempt fails because the
     * newcomer was not running yet (NOPROGRESS), a later attempt may wait for the newcomer's snapshot attempt forever,
     * and every further attempt is refused as "already in progress" while the configuration itself is stable. Seen
     * under a CPU hog in ShardedBackendsIT. A new leader term starts with no staged change, so a leader that has been
     * refused that way for {@link #STUCK_STEP_DOWN_NANOS} steps down (it may well be elected again, afresh).
     */
    private void unstick(RaftGroupId id, Throwable failure) {
        boolean inProgress = false;
        for (Throwable t = failure; t != null && !inProgress; t = t.getCause()) {
            inProgress = t instanceof ReconfigurationInProgressException;
        }
        if (!inProgress) {
            stuckSince.remove(id);
            return;
        }
        long now = System.nanoTime();
        long since = stuckSince.computeIfAbsent(id, g -> now);
        if (now - since < STUCK_STEP_DOWN_NANOS) {
            return;
        }
        stuckSince.remove(id);
        try {
            var division = server.getDivision(id);
            if (!division.getInfo().isLeader() || !division.getRaftConf().getPreviousPeers().isEmpty()) {
                return; // a real change under way (joint consensus), or no longer ours to fix
            }
            LOG.warn("backend {}: the membership change of shard group {} has been refused as 'in progress' for {} s"
                    + " with a stable configuration: stepping down so a new leader term starts it afresh", nodeId, id,
                    TimeUnit.NANOSECONDS.toSeconds(now - since));
            leadership.stepDown(division);
        } catch (IOException e) {
            LOG.warn("backend {} could not step down from shard group {}: {}", nodeId, id, e.getMessage());
        }
    }
}
