package io.sluice.backend.raft;

import io.sluice.backend.shard.LeaderClock;
import io.sluice.common.raft.RaftTransport;
import java.io.IOException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.server.RaftServer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where a backend's shard leaderships go: handed back to each shard's preferred replica once it answers steadily
 * (this spreads the primaries over the backends), and given up while this machine's clock is off the reference or a
 * membership change is stuck. Called by the backend's agent on its ticks (blocking calls: never on a Ratis thread).
 */
public final class ShardLeadership {
    private static final Logger LOG = LoggerFactory.getLogger(ShardLeadership.class);

    private final String nodeId;
    private final RaftServer server;
    private final RaftTransport transport;
    private final LeaderClock clock;

    ShardLeadership(String nodeId, RaftServer server, RaftTransport transport, LeaderClock clock) {
        this.nodeId = nodeId;
        this.server = server;
        this.transport = transport;
        this.clock = clock;
    }

    /** A shard's preferred replica as this leader has seen it: answering steadily since, next attempt not before. */
    private static final class HandBackState {
        long steadySince;
        long notBeforeNanos;
        long backoffNanos = HAND_BACK_FIRST_BACKOFF_NANOS;

        HandBackState(long now) {
            steadySince = now;
        }
    }

    private final Map<RaftGroupId, HandBackState> handBacks = new ConcurrentHashMap<>();
    /** How long the preferred replica must have answered and kept up before the leadership goes back to it. */
    static final long HAND_BACK_STEADY_NANOS = TimeUnit.SECONDS.toNanos(3);
    /** A follower answering within this (the election timeout's order) and this close to the log counts as steady. */
    static final long HAND_BACK_HEARD_MILLIS = 500;
    static final long HAND_BACK_MAX_LAG = 1_000;
    /** Writes wait while a transfer runs: bounded like Ratis' own yield to a higher-priority member. */
    static final long HAND_BACK_TIMEOUT_MILLIS = 500;
    static final long HAND_BACK_FIRST_BACKOFF_NANOS = TimeUnit.SECONDS.toNanos(5);
    static final long HAND_BACK_MAX_BACKOFF_NANOS = TimeUnit.MINUTES.toNanos(5);

    /**
     * As the leader of a shard whose preferred replica (the catalog's first) is another member, and whose members are
     * {@code target}'s (the catalog's: no change to make first), hands the leadership back to it
     * once it has answered this leader within {@link #HAND_BACK_HEARD_MILLIS} and stayed within
     * {@link #HAND_BACK_MAX_LAG} entries of the log for {@link #HAND_BACK_STEADY_NANOS}: this spreads the primaries
     * over the backends after a failover (what Raft priorities did before). The transfer (Ratis' TransferLeadership:
     * the leader holds new writes, waits for the preferred replica to have its whole log, and asks it to start an
     * election at once) is bounded by {@link #HAND_BACK_TIMEOUT_MILLIS}; a failed one is tried again after 5 s,
     * doubling up to 5 minutes. Blocking: call from an agent thread.
     *
     * @return whether the leadership was handed back
     */
    public boolean handBack(RaftGroup target, String preferred) {
        RaftGroupId id = target.getGroupId();
        RaftServer.Division division;
        try {
            division = server.getDivision(id);
        } catch (IOException e) {
            handBacks.remove(id);
            return false;
        }
        var info = division.getInfo();
        var conf = division.getRaftConf();
        if (preferred.equals(nodeId) || !info.isLeader() || !info.isLeaderReady()
                || !conf.getPreviousPeers().isEmpty() // a membership change under way: it goes first
                || !ShardClient.members(conf.getCurrentPeers()).equals(ShardClient.members(target.getPeers()))) {
            handBacks.remove(id);
            return false;
        }
        RaftPeerId heir = RaftPeerId.valueOf(preferred);
        long now = System.nanoTime();
        HandBackState state = handBacks.computeIfAbsent(id, g -> new HandBackState(now));
        if (!steady(division, heir)) {
            state.steadySince = now;
            return false;
        }
        if (now - state.steadySince < HAND_BACK_STEADY_NANOS || now < state.notBeforeNanos) {
            return false;
        }
        try (RaftClient admin = transport.client(division.getGroup(), 5_000).setLeaderId(division.getId())
                .setRetryPolicy(RetryPolicies.noRetry()).build()) {
            RaftClientReply reply = admin.admin().transferLeadership(heir, HAND_BACK_TIMEOUT_MILLIS);
            if (reply.isSuccess()) {
                handBacks.remove(id);
                LOG.info("backend {} handed the leadership of shard group {} back to its preferred replica {}", nodeId,
                        id, preferred);
                return true;
            }
            backOff(state, now, id, preferred, String.valueOf(reply.getException()));
        } catch (IOException e) {
            backOff(state, now, id, preferred, e.getMessage());
        }
        return false;
    }

    private void backOff(HandBackState state, long now, RaftGroupId id, String preferred, String why) {
        state.notBeforeNanos = now + state.backoffNanos;
        LOG.info("backend {} could not hand shard group {} back to {} (next try in {} s): {}", nodeId, id, preferred,
                TimeUnit.NANOSECONDS.toSeconds(state.backoffNanos), why);
        state.backoffNanos = Math.min(HAND_BACK_MAX_BACKOFF_NANOS, state.backoffNanos * 2);
    }

    /** Whether this leader heard from {@code peer} lately and its log is close to the leader's. */
    private static boolean steady(RaftServer.Division division, RaftPeerId peer) {
        var role = division.getInfo().getRoleInfoProto();
        if (!role.hasLeaderInfo()) {
            return false;
        }
        boolean heard = role.getLeaderInfo().getFollowerInfoList().stream().anyMatch(f ->
                RaftPeerId.valueOf(f.getId().getId()).equals(peer)
                        && f.getLastRpcElapsedTimeMs() <= HAND_BACK_HEARD_MILLIS);
        if (!heard) {
            return false;
        }
        long commit = division.getRaftLog().getLastCommittedIndex();
        return division.getCommitInfos().stream().anyMatch(c -> RaftPeerId.valueOf(c.getServer().getId()).equals(peer)
                && commit - c.getCommitIndex() <= HAND_BACK_MAX_LAG);
    }

    /** Hands the leadership of a shard this backend leads to any other replica. */
    void stepDown(RaftServer.Division division) throws IOException {
        try (RaftClient admin = transport.client(division.getGroup(), 5_000)
                .setRetryPolicy(RetryPolicies.noRetry()).build()) {
            admin.admin().transferLeadership(null, RaftPeerId.valueOf(nodeId), 5_000);
        }
    }

    private final Map<RaftGroupId, Long> skewStepDowns = new ConcurrentHashMap<>();
    /** A skewed backend steps down from a shard at most this often (its stamps are corrected meanwhile). */
    static final long SKEW_STEP_DOWN_EVERY_NANOS = TimeUnit.SECONDS.toNanos(60);

    /**
     * While this machine's clock is further from the reference than the bound, steps down from every shard it leads,
     * each at most once a minute: the time it stamps is already held to the reference ({@link LeaderClock}), so this
     * only prefers a replica whose clock is sound, and if every clock disagrees with the reference (the reference is
     * the one that is off) leadership does not flap. Called by the backend's agent on each tick.
     *
     * @return the shards it stepped down from
     */
    public int stepDownIfSkewed() {
        if (!clock.skewed()) {
            return 0;
        }
        int steppedDown = 0;
        long now = System.nanoTime();
        for (RaftGroupId id : server.getGroupIds()) {
            Long last = skewStepDowns.get(id);
            if (!leads(id) || (last != null && now - last < SKEW_STEP_DOWN_EVERY_NANOS)) {
                continue;
            }
            skewStepDowns.put(id, now);
            try {
                LOG.warn("backend {}: its clock is {} ms off the reference (bound {} ms): stepping down from shard"
                        + " group {}", nodeId, clock.offsetMillis(), clock.maxSkewMillis(), id);
                stepDown(server.getDivision(id));
                steppedDown++;
            } catch (IOException e) {
                LOG.warn("backend {} could not step down from shard group {}: {}", nodeId, id, e.getMessage());
            }
        }
        return steppedDown;
    }

    private boolean leads(RaftGroupId id) {
        try {
            return server.getDivision(id).getInfo().isLeader();
        } catch (IOException e) {
            return false;
        }
    }
}
