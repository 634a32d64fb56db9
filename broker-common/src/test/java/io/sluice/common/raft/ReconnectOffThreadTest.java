package io.sluice.common.raft;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.ratis.client.RaftClientRpc;
import org.apache.ratis.proto.RaftProtos.FollowerInfoProto;
import org.apache.ratis.proto.RaftProtos.LeaderInfoProto;
import org.apache.ratis.proto.RaftProtos.RaftPeerProto;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.proto.RaftProtos.RoleInfoProto;
import org.apache.ratis.proto.RaftProtos.ServerRpcProto;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.GroupInfoReply;
import org.apache.ratis.protocol.GroupInfoRequest;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.exceptions.NotLeaderException;
import org.apache.ratis.protocol.exceptions.TimeoutIOException;
import org.junit.jupiter.api.Test;

/**
 * The Raft client transport's partition behaviour, against a scripted transport: a member whose attempt timed out is
 * passed over while another is not (and answered normally once the suspicion ends or every member is suspected); an
 * answer clears it; a reconnect returns at once and runs on another thread, however long the close takes; news of
 * a new leader from a replica in this process fails the attempts pending at the old one, naming the new one; a
 * write that waits asks the other members who leads, and believes only a current answer.
 */
class ReconnectOffThreadTest {
    private static final RaftPeerId A = RaftPeerId.valueOf("a");
    private static final RaftPeerId B = RaftPeerId.valueOf("b");
    private static final ClientId CLIENT = ClientId.randomId();
    private static final RaftGroupId GROUP = RaftGroupId.randomId();

    /** Answers by target: a timeout for the members in {@code silent}, a reply otherwise; counts what reached it. */
    private static final class Scripted implements RaftClientRpc {
        final List<RaftPeerId> silent = new ArrayList<>();
        /** Members that never answer (a partition): their attempts stay pending. */
        final List<RaftPeerId> hanging = new ArrayList<>();
        final List<RaftPeerId> reached = new ArrayList<>();
        volatile CountDownLatch closing = new CountDownLatch(0);
        final AtomicReference<Thread> reconnectedOn = new AtomicReference<>();
        final CountDownLatch reconnected = new CountDownLatch(1);

        @Override
        public CompletableFuture<RaftClientReply> sendRequestAsync(RaftClientRequest request) {
            reached.add(request.getServerId());
            if (hanging.contains(request.getServerId())) {
                return new CompletableFuture<>();
            }
            if (silent.contains(request.getServerId())) {
                return CompletableFuture.failedFuture(new TimeoutIOException("attempt timed out"));
            }
            return CompletableFuture.completedFuture(RaftClientReply.newBuilder().setRequest(request).setSuccess()
                    .build());
        }

        @Override
        public CompletableFuture<RaftClientReply> sendRequestAsyncUnordered(RaftClientRequest request) {
            return sendRequestAsync(request);
        }

        /** Each member's answer to "who leads?" (a GroupInfo request); a member without one is unreachable. */
        final Map<RaftPeerId, RoleInfoProto> roles = new ConcurrentHashMap<>();
        final List<RaftPeerId> asked = new CopyOnWriteArrayList<>();

        @Override
        public RaftClientReply sendRequest(RaftClientRequest request) throws IOException {
            if (!(request instanceof GroupInfoRequest)) {
                throw new UnsupportedOperationException();
            }
            asked.add(request.getServerId());
            RoleInfoProto role = roles.get(request.getServerId());
            if (role == null) {
                throw new TimeoutIOException("no answer");
            }
            return new GroupInfoReply(request, List.of(), null, role, true, null, null);
        }

        @Override
        public void addRaftPeers(Collection<RaftPeer> peers) {
        }

        @Override
        public boolean handleException(RaftPeerId serverId, Throwable t, boolean reconnect) {
            reconnectedOn.set(Thread.currentThread());
            reconnected.countDown();
            try {
                closing.await(10, TimeUnit.SECONDS); // gRPC waiting for a stream to a silent member to end
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return true;
        }

        @Override
        public void close() {
        }
    }

    private static RaftClientRequest to(RaftPeerId server) {
        return RaftClientRequest.newBuilder().setClientId(CLIENT).setServerId(server).setGroupId(GROUP).setCallId(1)
                .setMessage(Message.EMPTY).setType(RaftClientRequest.writeRequestType()).build();
    }

    private static RaftClientRequest readAt(RaftPeerId server) {
        return RaftClientRequest.newBuilder().setClientId(CLIENT).setServerId(server).setGroupId(GROUP).setCallId(2)
                .setMessage(Message.EMPTY).setType(RaftClientRequest.readRequestType()).build();
    }

    private static ServerRpcProto heard(RaftPeerId peer, long millisAgo) {
        return ServerRpcProto.newBuilder().setId(RaftPeerProto.newBuilder().setId(peer.toByteString()))
                .setLastRpcElapsedTimeMs(millisAgo).build();
    }

    /** A member that leads and heard from {@code follower} {@code millisAgo}. */
    private static RoleInfoProto leading(RaftPeerId self, RaftPeerId follower, long millisAgo) {
        return RoleInfoProto.newBuilder().setSelf(RaftPeerProto.newBuilder().setId(self.toByteString()))
                .setRole(RaftPeerRole.LEADER)
                .setLeaderInfo(LeaderInfoProto.newBuilder().setTerm(2).addFollowerInfo(heard(follower, millisAgo)))
                .build();
    }

    /** A member that follows {@code leader} and heard from it {@code millisAgo}. */
    private static RoleInfoProto following(RaftPeerId self, RaftPeerId leader, long millisAgo) {
        return RoleInfoProto.newBuilder().setSelf(RaftPeerProto.newBuilder().setId(self.toByteString()))
                .setRole(RaftPeerRole.FOLLOWER)
                .setFollowerInfo(FollowerInfoProto.newBuilder().setLeaderInfo(heard(leader, millisAgo))).build();
    }

    private static ReconnectOffThread rpc(Scripted scripted) {
        return new ReconnectOffThread(scripted, RaftGroup.valueOf(GROUP, RaftPeer.newBuilder().setId(A).build(),
                RaftPeer.newBuilder().setId(B).build()), true);
    }

    private static Throwable failure(CompletableFuture<RaftClientReply> f) {
        try {
            f.join();
            return null;
        } catch (CompletionException e) {
            return e.getCause();
        }
    }

    @Test
    void aMemberThatTimedOutIsPassedOverWhileAnotherIsNot() {
        Scripted scripted = new Scripted();
        scripted.silent.add(A);
        ReconnectOffThread rpc = rpc(scripted);
        assertInstanceOf(TimeoutIOException.class, failure(rpc.sendRequestAsync(to(A))));
        assertEquals(1, scripted.reached.size());

        Throwable passedOver = failure(rpc.sendRequestAsync(to(A)));
        assertInstanceOf(TimeoutIOException.class, passedOver);
        assertTrue(passedOver.getMessage().contains("passed over"), passedOver.getMessage());
        assertEquals(1, scripted.reached.size(), "the suspected member was not asked again");
        assertTrue(rpc.sendRequestAsync(to(B)).join().isSuccess(), "the other member is asked as usual");
    }

    @Test
    void whenEveryMemberIsSuspectedTheyAreAskedAnyway() {
        Scripted scripted = new Scripted();
        scripted.silent.add(A);
        scripted.silent.add(B);
        ReconnectOffThread rpc = rpc(scripted);
        failure(rpc.sendRequestAsync(to(A)));
        failure(rpc.sendRequestAsync(to(B)));
        failure(rpc.sendRequestAsync(to(A)));
        assertEquals(List.of(A, B, A), scripted.reached, "no member left to prefer: nobody is passed over");
    }

    @Test
    void anAnswerClearsTheSuspicion() {
        Scripted scripted = new Scripted();
        scripted.silent.add(A);
        ReconnectOffThread rpc = rpc(scripted);
        failure(rpc.sendRequestAsync(to(A)));
        scripted.silent.clear();
        scripted.silent.add(B);
        failure(rpc.sendRequestAsync(to(B))); // now both are suspected: A is asked again, and answers
        assertTrue(rpc.sendRequestAsync(to(A)).join().isSuccess());
        assertTrue(rpc.sendRequestAsync(to(A)).join().isSuccess(), "A answered: no longer passed over");
        assertEquals(List.of(A, B, A, A), scripted.reached);
        assertTrue(failure(rpc.sendRequestAsync(to(B))).getMessage().contains("passed over"),
                "B is still suspected, and A no longer is: B is passed over");
        assertEquals(4, scripted.reached.size());
    }

    @Test
    void aReconnectReturnsAtOnceAndClosesOnAnotherThread() throws Exception {
        Scripted scripted = new Scripted();
        scripted.closing = new CountDownLatch(1);
        ReconnectOffThread rpc = rpc(scripted);
        long start = System.nanoTime();
        assertTrue(rpc.handleException(A, new TimeoutIOException("attempt timed out"), true));
        assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(1), "the caller did not wait for the close");
        assertTrue(scripted.reconnected.await(30, TimeUnit.SECONDS), "the reconnect ran");
        assertNotEquals(Thread.currentThread(), scripted.reconnectedOn.get());
        scripted.closing.countDown();
    }

    @Test
    void aFailureThatNeedsNoReconnectIsLeftAlone() {
        Scripted scripted = new Scripted();
        assertFalse(rpc(scripted).handleException(A, new IllegalStateException("not a connection problem"), false));
    }

    @Test
    void newsOfANewLeaderFailsTheAttemptsPendingAtTheOldOneNamingIt() throws Exception {
        Scripted scripted = new Scripted();
        scripted.hanging.add(A);
        scripted.hanging.add(B);
        ReconnectOffThread rpc = rpc(scripted);
        try {
            CompletableFuture<RaftClientReply> atA = rpc.sendRequestAsync(to(A));
            CompletableFuture<RaftClientReply> atB = rpc.sendRequestAsyncUnordered(to(B));
            LeaderHints.leaderChanged(GROUP, RaftPeerId.valueOf("not-a-member"));
            LeaderHints.leaderChanged(RaftGroupId.randomId(), B); // another group's news
            LeaderHints.leaderChanged(GROUP, B);
            Throwable failed = assertThrows(java.util.concurrent.ExecutionException.class,
                    () -> atA.get(10, TimeUnit.SECONDS)).getCause();
            NotLeaderException notLeader = assertInstanceOf(NotLeaderException.class, failed);
            assertEquals(B, notLeader.getSuggestedLeader().getId(), "the new leader is named");
            assertFalse(atB.isDone(), "an attempt pending at the new leader waits for its answer");
            int reached = scripted.reached.size();
            assertTrue(failure(rpc.sendRequestAsync(to(A))).getMessage().contains("passed over"),
                    "the deposed leader is passed over for a while");
            assertEquals(reached, scripted.reached.size());
        } finally {
            rpc.close();
        }
        CompletableFuture<RaftClientReply> afterClose = rpc.sendRequestAsync(to(B));
        LeaderHints.leaderChanged(GROUP, A);
        Thread.sleep(200); // nothing to wait for: a closed transport must not react at all
        assertFalse(afterClose.isDone(), "a closed transport no longer listens");
    }

    @Test
    void aMemberIsBelievedOnlyWhenItsWordIsCurrent() {
        RaftPeerId c = RaftPeerId.valueOf("c");
        assertEquals(B, LeaderProbe.leaderNamedBy(leading(B, c, 20)), "a leader that hears a majority");
        assertNull(LeaderProbe.leaderNamedBy(leading(A, c, 4_000)), "a leader cut off from its followers");
        assertEquals(A, LeaderProbe.leaderNamedBy(following(B, A, 100)), "a follower its leader reaches");
        assertNull(LeaderProbe.leaderNamedBy(following(B, A, 900)), "a follower its leader no longer reaches");
        assertNull(LeaderProbe.leaderNamedBy(RoleInfoProto.newBuilder()
                .setSelf(RaftPeerProto.newBuilder().setId(B.toByteString())).setRole(RaftPeerRole.CANDIDATE)
                .build()), "a candidate names nobody");
        assertNull(LeaderProbe.leaderNamedBy(RoleInfoProto.newBuilder()
                .setSelf(RaftPeerProto.newBuilder().setId(B.toByteString())).setRole(RaftPeerRole.FOLLOWER)
                .setFollowerInfo(FollowerInfoProto.newBuilder().setLeaderInfo(ServerRpcProto.getDefaultInstance()))
                .build()), "a follower that knows no leader");
    }

    @Test
    void aWriteWaitingAtACutOffLeaderAsksTheOthersAndGoesToTheLeaderTheyName() throws Exception {
        Scripted scripted = new Scripted();
        scripted.hanging.add(A);
        scripted.roles.put(B, following(B, A, 100)); // before the election, B still follows A: nothing moves
        ReconnectOffThread rpc = rpc(scripted);
        try {
            CompletableFuture<RaftClientReply> write = rpc.sendRequestAsync(to(A));
            await().atMost(Duration.ofSeconds(10)).until(() -> !scripted.asked.isEmpty());
            assertEquals(B, scripted.asked.get(0), "the other member was asked, not the one the write waits at");
            await().atMost(Duration.ofSeconds(10)).until(() -> scripted.asked.size() >= 4); // asked again and again
            assertFalse(scripted.asked.contains(A));
            assertFalse(write.isDone(), "B named A, where the write already waits");

            scripted.roles.put(B, leading(B, RaftPeerId.valueOf("c"), 30)); // B won an election
            Throwable failed = assertThrows(java.util.concurrent.ExecutionException.class,
                    () -> write.get(10, TimeUnit.SECONDS)).getCause();
            NotLeaderException notLeader = assertInstanceOf(NotLeaderException.class, failed);
            assertEquals(B, notLeader.getSuggestedLeader().getId(), "the client is sent to the new leader");
        } finally {
            rpc.close();
        }
    }

    @Test
    void aWriteWaitingAtALeaderThatStillAnswersOthersAsksNobody() throws Exception {
        Scripted scripted = new Scripted();
        scripted.hanging.add(A);
        scripted.roles.put(B, leading(B, RaftPeerId.valueOf("c"), 30));
        ReconnectOffThread rpc = rpc(scripted);
        try {
            CompletableFuture<RaftClientReply> slow = rpc.sendRequestAsync(to(A));
            scripted.hanging.clear();
            long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(LeaderProbe.ASK_AFTER_MILLIS
                    + 5 * ReconnectOffThread.PROBE_EVERY_MILLIS);
            while (System.nanoTime() < until) { // A is loaded, not cut off: it answers the other attempts
                assertTrue(rpc.sendRequestAsync(to(A)).join().isSuccess());
                Thread.sleep(50);
            }
            assertTrue(scripted.asked.isEmpty(), "A answers: nobody is asked who leads");
            assertFalse(slow.isDone());
            long start = System.nanoTime(); // A falls silent: now B is asked, and leads
            assertThrows(java.util.concurrent.ExecutionException.class, () -> slow.get(10, TimeUnit.SECONDS));
            assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(LeaderProbe.ASK_AFTER_MILLIS / 2),
                    "only once A had been silent for a while");
            assertEquals(B, scripted.asked.get(0));
        } finally {
            rpc.close();
        }
    }

    @Test
    void aParkedReadAsksNobody() throws Exception {
        Scripted scripted = new Scripted();
        scripted.hanging.add(A);
        scripted.roles.put(B, leading(B, RaftPeerId.valueOf("c"), 30));
        ReconnectOffThread rpc = rpc(scripted);
        try {
            CompletableFuture<RaftClientReply> longPoll = rpc.sendRequestAsync(readAt(A));
            Thread.sleep(LeaderProbe.ASK_AFTER_MILLIS + 5 * ReconnectOffThread.PROBE_EVERY_MILLIS);
            assertTrue(scripted.asked.isEmpty(), "a long poll waits at a healthy leader: nobody is asked");
            assertFalse(longPoll.isDone());
        } finally {
            rpc.close();
        }
    }

    @Test
    void anIdleClientKeepsNoTimer() throws Exception {
        Scripted scripted = new Scripted();
        scripted.roles.put(B, leading(B, RaftPeerId.valueOf("c"), 30));
        ReconnectOffThread rpc = rpc(scripted);
        try {
            assertFalse(rpc.probeArmed(), "no write sent: no look at pending writes is scheduled");
            assertTrue(rpc.sendRequestAsync(to(A)).join().isSuccess());
            await().atMost(Duration.ofSeconds(10)).until(() -> !rpc.probeArmed()); // the tick after the answer ends it
            Thread.sleep(3 * ReconnectOffThread.PROBE_EVERY_MILLIS);
            assertFalse(rpc.probeArmed(), "the write was answered: the timer stays off");
            scripted.hanging.add(A);
            rpc.sendRequestAsync(to(A));
            assertTrue(rpc.probeArmed(), "a write pending: its client looks at it");
        } finally {
            rpc.close();
        }
    }
}
