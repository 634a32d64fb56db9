package io.sluice.backend.raft;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Supplier;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.exceptions.LeaderNotReadyException;
import org.apache.ratis.protocol.exceptions.LeaderSteppingDownException;
import org.apache.ratis.protocol.exceptions.ResourceUnavailableException;

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
     */
    CompletableFuture<RaftClientReply> sendIfLeader(RaftGroupId group, Message message, boolean readOnly);

    /** Whether this process's replica of {@code group} leads it now (and has committed an entry of its term). */
    default boolean leads(RaftGroupId group) {
        return false;
    }

    /** Whether {@code peer} is a Raft server in this process. */
    default boolean hosts(RaftPeerId peer) {
        return false;
    }

    /**
     * A request through the local leader when there is one, else (or when that leader refused it where resending is
     * safe) through {@code network}. Reads are resent on any failure (they change nothing). A write is resent only
     * when the leader refused it before appending it: not ready, stepping down, out of pending-request permits, or not
     * the leader at the moment it was submitted; a write that failed after it may have been appended is not resent
     * (it could apply twice under a new call id) and fails, as a network client whose retries ran out does. A resend
     * starts on {@code executor}, never on the Ratis thread that completed the local reply.
     */
    static CompletableFuture<RaftClientReply> send(LocalLeaders local, RaftGroupId group, Message message,
                                                   boolean readOnly,
                                                   Supplier<CompletableFuture<RaftClientReply>> network,
                                                   Executor executor) {
        CompletableFuture<RaftClientReply> reply = local.sendIfLeader(group, message, readOnly);
        if (reply == null) {
            return network.get();
        }
        boolean completeOnReturn = reply.isDone();
        return reply.handle((r, error) -> {
            boolean resend = readOnly ? error != null || !r.isSuccess()
                    : error == null && !r.isSuccess() && refusedBeforeAppend(r, completeOnReturn);
            return resend ? CompletableFuture.supplyAsync(network, executor).thenCompose(f -> f) : error != null ? CompletableFuture.<RaftClientReply>failedFuture(error)
                    : CompletableFuture.completedFuture(r);
        }).thenCompose(f -> f);
    }

    /** Whether a failed write reply says the leader refused the write before appending it. */
    private static boolean refusedBeforeAppend(RaftClientReply r, boolean completeOnReturn) {
        Throwable e = r.getException();
        return e instanceof LeaderNotReadyException
                || e instanceof LeaderSteppingDownException
                || e instanceof ResourceUnavailableException
                // a leader stepping down also answers NotLeader to writes it had appended: only one given at once is
                // known to be a refusal at submission
                || (completeOnReturn && r.getNotLeaderException() != null);
    }
}
