package io.sluice.common.raft;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.apache.ratis.client.RaftClientRpc;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.proto.RaftProtos.RoleInfoProto;
import org.apache.ratis.proto.RaftProtos.ServerRpcProto;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.GroupInfoReply;
import org.apache.ratis.protocol.GroupInfoRequest;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeerId;

/**
 * Asks a group's members who leads it, for a client whose writes wait at a member that may be cut off. A process
 * that hosts no replica of the group (a split topology's frontend) hears of no election ({@link LeaderHints}); without
 * asking, its attempts at a leader cut off by a partition wait out their whole timeout (3 s) though the other members
 * elected a new leader within about a second.
 *
 * <p>A member's word is taken only when it is current: a leader that heard from a majority of its group within
 * {@link #HEARD_WITHIN_MILLIS}, or a follower that heard from the leader it names within that time. A deposed leader
 * still believes it leads, and its followers name it until their election timeout passes; neither counts once the
 * heartbeats stop. A wrong word costs one redirected attempt (resent with the same call id), never a second
 * application.
 */
final class LeaderProbe {
    /** A write pending this long makes its client ask the other members (an election takes 0.5-1 s and more). */
    static final long ASK_AFTER_MILLIS = 400;
    /** How recently a member must have heard from its group's leader (a leader: from a majority) to be believed. */
    static final long HEARD_WITHIN_MILLIS = 500;

    private final RaftClientRpc rpc;
    private final RaftGroupId groupId;
    private final Executor executor;
    private final ClientId id = ClientId.randomId();
    private final AtomicLong callIds = new AtomicLong();
    /** Members asked and not answered yet: one question at a time each, however long a silent one takes. */
    private final Set<RaftPeerId> asking = ConcurrentHashMap.newKeySet();

    LeaderProbe(RaftClientRpc rpc, RaftGroupId groupId, Executor executor) {
        this.rpc = rpc;
        this.groupId = groupId;
        this.executor = executor;
    }

    /** Asks {@code member} (on the executor); {@code leaderIs} gets the leader it names, if its word is current. */
    void ask(RaftPeerId member, Consumer<RaftPeerId> leaderIs) {
        if (!asking.add(member)) {
            return;
        }
        executor.execute(() -> {
            try {
                RaftClientReply reply = rpc.sendRequest(new GroupInfoRequest(id, member, groupId,
                        callIds.incrementAndGet()));
                RaftPeerId leader = reply instanceof GroupInfoReply && reply.isSuccess()
                        ? leaderNamedBy(((GroupInfoReply) reply).getRoleInfoProto()) : null;
                if (leader != null) {
                    leaderIs.accept(leader);
                }
            } catch (Exception e) {
                // unreachable or not hosting the group: the other members are asked too
            } finally {
                asking.remove(member);
            }
        });
    }

    /** The leader a member's role names, when the member heard from it (a leader: from a majority) recently. */
    static RaftPeerId leaderNamedBy(RoleInfoProto role) {
        RaftPeerId self = RaftPeerId.valueOf(role.getSelf().getId());
        if (role.getRole() == RaftPeerRole.LEADER && role.hasLeaderInfo()) {
            int followers = role.getLeaderInfo().getFollowerInfoCount();
            long heard = role.getLeaderInfo().getFollowerInfoList().stream().filter(LeaderProbe::recent).count();
            // itself and the followers it heard from recently make a majority of the group
            return 1 + heard > (followers + 1) / 2 ? self : null;
        }
        if (role.getRole() == RaftPeerRole.FOLLOWER && role.hasFollowerInfo()
                && role.getFollowerInfo().hasLeaderInfo()) {
            ServerRpcProto leader = role.getFollowerInfo().getLeaderInfo();
            return recent(leader) && !leader.getId().getId().isEmpty()
                    ? RaftPeerId.valueOf(leader.getId().getId()) : null;
        }
        return null; // a candidate, a listener, a follower that knows no leader
    }

    private static boolean recent(ServerRpcProto rpc) {
        return rpc.getLastRpcElapsedTimeMs() <= HEARD_WITHIN_MILLIS;
    }
}
