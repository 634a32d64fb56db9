package io.sluice.common.raft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.ratis.client.RaftClientRpc;
import org.apache.ratis.protocol.ClientId;
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
 * a new leader from a replica in this process fails the attempts pending at the old one, naming the new one.
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

        @Override
        public RaftClientReply sendRequest(RaftClientRequest request) {
            throw new UnsupportedOperationException();
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

    private static ReconnectOffThread rpc(Scripted scripted) {
        return new ReconnectOffThread(scripted, RaftGroup.valueOf(GROUP, RaftPeer.newBuilder().setId(A).build(),
                RaftPeer.newBuilder().setId(B).build()));
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
}
