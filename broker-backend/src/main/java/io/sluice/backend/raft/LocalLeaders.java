package io.sluice.backend.raft;

import java.util.concurrent.CompletableFuture;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroupId;

/**
 * Shard leaders hosted by this process, reached without an RPC: in a combined node (every role in one JVM) a frontend
 * hands a request for a shard led here straight to the local Raft server, which appends it, replicates it to the
 * followers and answers it exactly as it answers a request that came over the network.
 */
public interface LocalLeaders {
    /** No shard is hosted here: every request goes over the network. */
    LocalLeaders NONE = (group, message, readOnly) -> null;

    /**
     * Submits {@code message} to this process's replica of {@code group} if that replica leads the group now (and has
     * committed an entry of its term); null if it does not (the caller sends over the network instead).
     *
     * <p>A reply that is already complete when this returns and carries {@link #refusedBeforeAppend refusal}
     * was never appended: the caller may send the same request over the network. Any later failure may follow an
     * append, so the request's outcome is unknown.
     */
    CompletableFuture<RaftClientReply> sendIfLeader(RaftGroupId group, Message message, boolean readOnly);

    /**
     * Whether a reply that was complete on return says the leader refused the request before appending it (it was not
     * the leader, not ready, stepping down, or out of pending-request permits).
     */
    static boolean refusedBeforeAppend(CompletableFuture<RaftClientReply> reply) {
        if (!reply.isDone() || reply.isCompletedExceptionally()) {
            return reply.isDone();
        }
        RaftClientReply r = reply.join();
        return !r.isSuccess() && (r.getNotLeaderException() != null
                || r.getException() instanceof org.apache.ratis.protocol.exceptions.LeaderNotReadyException
                || r.getException() instanceof org.apache.ratis.protocol.exceptions.LeaderSteppingDownException
                || r.getException() instanceof org.apache.ratis.protocol.exceptions.ResourceUnavailableException);
    }
}
