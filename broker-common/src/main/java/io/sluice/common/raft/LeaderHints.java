package io.sluice.common.raft;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeerId;

/**
 * News of Raft leader changes inside this process: a replica hosted here tells the clients of its group, which then
 * stop waiting on attempts addressed to the old leader ({@link ReconnectOffThread#leaderIs}).
 *
 * <p>Why: a leader cut off by a partition neither answers nor refuses, so a client's attempts to it wait out their
 * whole timeout (3 s) before the client tries another member, though the other members elected a new leader within
 * about a second. On a node that hosts a replica of the group (a combined node), the replica learns the new leader
 * when it is elected; the node's frontend clients move their pending requests to it at once, with the same call ids
 * (the new leader's retry cache answers any request the old one committed).
 */
public final class LeaderHints {
    private static final Map<RaftGroupId, Set<Consumer<RaftPeerId>>> LISTENERS = new ConcurrentHashMap<>();

    private LeaderHints() {
    }

    /** Called by a replica hosted in this process when it learns that its group's leader is now {@code leader}. */
    public static void leaderChanged(RaftGroupId group, RaftPeerId leader) {
        if (leader == null) {
            return; // an election under way: nothing to tell yet
        }
        Set<Consumer<RaftPeerId>> listeners = LISTENERS.get(group);
        if (listeners != null) {
            listeners.forEach(l -> l.accept(leader));
        }
    }

    /** Registers {@code listener} for {@code group}'s leader changes; running the returned handle unregisters it. */
    static Runnable listen(RaftGroupId group, Consumer<RaftPeerId> listener) {
        LISTENERS.compute(group, (g, set) -> { // atomic with the removal below: never added to a set being dropped
            Set<Consumer<RaftPeerId>> listeners = set != null ? set : ConcurrentHashMap.newKeySet();
            listeners.add(listener);
            return listeners;
        });
        return () -> LISTENERS.computeIfPresent(group, (g, set) -> {
            set.remove(listener);
            return set.isEmpty() ? null : set;
        });
    }
}
