package io.sluice.backend.raft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftGroupMemberId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.exceptions.LeaderNotReadyException;
import org.apache.ratis.protocol.exceptions.NotLeaderException;
import org.apache.ratis.protocol.exceptions.RaftException;
import org.junit.jupiter.api.Test;

/**
 * When a request that went to the local leader is sent again over the network: a read after any failure, a write only
 * when the leader refused it before appending it (a write that may have been appended is never sent twice).
 */
class LocalLeadersTest {
    private static final RaftGroupId GROUP = RaftGroupId.valueOf(UUID.randomUUID());
    private static final RaftGroupMemberId ME = RaftGroupMemberId.valueOf(RaftPeerId.valueOf("b1"), GROUP);
    private static final RaftClientReply OK = reply(null);

    private static RaftClientReply reply(RaftException failure) {
        RaftClientReply.Builder b = RaftClientReply.newBuilder().setClientId(ClientId.randomId()).setServerId(ME)
                .setCallId(1);
        return failure == null ? b.setSuccess().build() : b.setSuccess(false).setException(failure).build();
    }

    /** Sends through a local leader that answers {@code local} later (not on return); counts network sends. */
    private static RaftClientReply send(RaftClientReply local, boolean readOnly, AtomicInteger network) {
        CompletableFuture<RaftClientReply> later = new CompletableFuture<>();
        CompletableFuture<RaftClientReply> out = LocalLeaders.send((g, m, r) -> later, GROUP, Message.EMPTY, readOnly,
                () -> {
                    network.incrementAndGet();
                    return CompletableFuture.completedFuture(OK);
                }, Runnable::run);
        later.complete(local);
        return out.join();
    }

    @Test
    void aWriteIsResentOnlyWhenRefusedBeforeItsAppend() {
        AtomicInteger network = new AtomicInteger();
        assertSame(OK, send(reply(new LeaderNotReadyException(ME)), false, network), "not ready: resent");
        assertEquals(1, network.get());

        RaftClientReply notLeader = reply(new NotLeaderException(ME, null, List.of()));
        assertSame(notLeader, send(notLeader, false, network), "a leader stepping down answers NotLeader to writes"
                + " it had appended: not resent");
        assertEquals(1, network.get());

        assertSame(OK, send(OK, false, network));
        assertEquals(1, network.get(), "a success is the answer");
    }

    @Test
    void aReadIsResentAfterAnyFailure() {
        AtomicInteger network = new AtomicInteger();
        assertSame(OK, send(reply(new NotLeaderException(ME, null, List.of())), true, network));
        assertEquals(1, network.get());
    }

    @Test
    void noLocalLeaderMeansTheNetwork() {
        AtomicInteger network = new AtomicInteger();
        RaftClientReply r = LocalLeaders.send(LocalLeaders.NONE, GROUP, Message.EMPTY, false, () -> {
            network.incrementAndGet();
            return CompletableFuture.completedFuture(OK);
        }, Runnable::run).join();
        assertSame(OK, r);
        assertEquals(1, network.get());
        assertFalse(r.getException() != null);
    }

    @Test
    void oneEntryInFlightOnlyForAOneReplicaShardInThisProcess() {
        org.apache.ratis.protocol.RaftPeer b1 = org.apache.ratis.protocol.RaftPeer.newBuilder().setId("b1")
                .setAddress("127.0.0.1:1").build();
        org.apache.ratis.protocol.RaftPeer b2 = org.apache.ratis.protocol.RaftPeer.newBuilder().setId("b2")
                .setAddress("127.0.0.1:2").build();
        LocalLeaders hostsB1 = new LocalLeaders() {
            @Override
            public CompletableFuture<RaftClientReply> sendIfLeader(RaftGroupId g, Message m, boolean readOnly) {
                return null;
            }

            @Override
            public boolean hosts(RaftPeerId peer) {
                return peer.equals(b1.getId());
            }
        };
        assertEquals(1, ShardedPartitionService.entriesInFlight(org.apache.ratis.protocol.RaftGroup.valueOf(GROUP, b1),
                hostsB1), "its only replica is here: one fuller entry at a time");
        assertEquals(2, ShardedPartitionService.entriesInFlight(org.apache.ratis.protocol.RaftGroup.valueOf(GROUP, b2),
                hostsB1), "its only replica is elsewhere: one entry travels while the next fills");
        assertEquals(2, ShardedPartitionService.entriesInFlight(org.apache.ratis.protocol.RaftGroup.valueOf(GROUP, b1,
                b2), hostsB1), "replicated: one entry travels to the followers while the next fills");
        assertEquals(2, ShardedPartitionService.entriesInFlight(org.apache.ratis.protocol.RaftGroup.valueOf(GROUP, b1),
                LocalLeaders.NONE), "a frontend of its own hosts no replica");
    }
}
