package io.sluice.common.raft;

import java.io.IOException;
import java.util.Collection;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import org.apache.ratis.client.RaftClientRpc;
import org.apache.ratis.proto.RaftProtos.RaftClientRequestProto;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftGroupMemberId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.exceptions.NotLeaderException;
import org.apache.ratis.protocol.exceptions.TimeoutIOException;

/**
 * A Ratis client transport whose reconnects do not hold up the client's retries. When an attempt fails (a timeout
 * against a leader that a partition cut off), Ratis' client picks another member and drops its connection to the old
 * one, on the timer thread that reported the failure, before it schedules the retry; gRPC then waits up to 3 s for the
 * open stream to that unreachable member to end ({@code GrpcUtil.shutdownManagedChannel}), and the retry waits with
 * it. Measured (PartitionIT): sends through the majority stalled ~4.9 s while a cut-off shard leader was replaced,
 * against ~1.3 s for a killed one, whose refused connection closes at once. Here the old connection is dropped on a
 * thread of its own; the client has already chosen the member it tries next, and the retry goes out on time.
 *
 * <p>A member whose attempt timed out is also suspected for {@link #SUSPECT_MILLIS}: while another member is not,
 * an attempt addressed to it fails at once (as a timeout) instead of waiting out the request timeout again. Without
 * that, a client that asks a member which knows no leader yet is sent to a random one, often the cut-off leader,
 * and waits another full attempt (measured: 4.2 s of stall against 2.8 s for the election). A leader that timed out
 * only because it was slow is retried with the same call id once the suspicion ends (its retry cache answers), so
 * the cost of a wrong suspicion is latency, never a second application.
 *
 * <p>When a replica of the group hosted in this process learns of a new leader ({@link LeaderHints}), every attempt
 * still pending at another member fails at once as "not the leader, try the new one": Ratis' client resends it there
 * without a pause, under the same call id. Measured (PartitionIT): with the election down to ~1 s, the 3 s wait of
 * attempts already sent to a cut-off leader was what stalled sends through the majority.
 *
 * <p>A process that hosts no replica (a split topology's frontend) hears no such news; a shard write client
 * ({@code RaftTransport.writerClient}) whose write has waited {@link LeaderProbe#ASK_AFTER_MILLIS} at a member that
 * answered nothing else meanwhile asks the other members who leads ({@link LeaderProbe}) and treats a current answer
 * naming another member as the same news.
 */
final class ReconnectOffThread implements RaftClientRpc {
    /** How long a member that let an attempt time out is passed over while another one is not. */
    static final long SUSPECT_MILLIS = 2_000;
    /**
     * How often a client with writes pending looks for ones that wait long enough to ask who leads. The tick runs
     * only while writes are pending: an idle client's timer is not armed (it woke its thread 5 times a second each).
     */
    static final long PROBE_EVERY_MILLIS = 200;
    private static final ExecutorService RECONNECTS = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "sluice-raft-reconnect");
        t.setDaemon(true);
        return t;
    });
    private static final ScheduledExecutorService TICKS = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "sluice-raft-leader-probe");
        t.setDaemon(true);
        return t;
    });

    /** An attempt sent and not yet answered. */
    private record Attempt(RaftPeerId target, long sentNanos, boolean write) {
    }

    private final RaftClientRpc rpc;
    private final RaftGroupId groupId;
    private final Map<RaftPeerId, RaftPeer> peers = new ConcurrentHashMap<>();
    /** Members whose attempt timed out, with when (nanoTime) they stop being passed over. */
    private final Map<RaftPeerId, Long> suspects = new ConcurrentHashMap<>();
    /** When (nanoTime) each member last answered anything: a member that answers is not cut off. */
    private final Map<RaftPeerId, Long> answeredAt = new ConcurrentHashMap<>();
    /** Attempts sent and not yet answered, by the member they were sent to. */
    private final Map<CompletableFuture<RaftClientReply>, Attempt> pending = new ConcurrentHashMap<>();
    private final Runnable stopHints;
    /** Who asks the other members who leads; null for a client that does not ask. */
    private final LeaderProbe probe;
    /** Whether a look at the pending writes is scheduled ({@link #armProbe}). */
    private final AtomicBoolean probeArmed = new AtomicBoolean();
    private volatile ScheduledFuture<?> probing;
    private volatile boolean closed;

    /** @param askWhoLeads ask the other members who leads when a write waits at a silent one ({@link LeaderProbe}) */
    ReconnectOffThread(RaftClientRpc rpc, RaftGroup group, boolean askWhoLeads) {
        this.rpc = rpc;
        this.groupId = group.getGroupId();
        group.getPeers().forEach(p -> peers.put(p.getId(), p));
        this.stopHints = LeaderHints.listen(groupId, leader -> RECONNECTS.execute(() -> leaderIs(leader)));
        this.probe = askWhoLeads ? new LeaderProbe(rpc, groupId, RECONNECTS) : null;
    }

    @Override
    public CompletableFuture<RaftClientReply> sendRequestAsync(RaftClientRequest request) {
        IOException passOver = passOver(request.getServerId());
        return passOver != null ? CompletableFuture.failedFuture(passOver)
                : track(request, watch(request.getServerId(), rpc.sendRequestAsync(request)));
    }

    @Override
    public CompletableFuture<RaftClientReply> sendRequestAsyncUnordered(RaftClientRequest request) {
        IOException passOver = passOver(request.getServerId());
        return passOver != null ? CompletableFuture.failedFuture(passOver)
                : track(request, watch(request.getServerId(), rpc.sendRequestAsyncUnordered(request)));
    }

    /** The attempt as the client sees it: completed by the member's answer, or failed early by {@link #leaderIs}. */
    private CompletableFuture<RaftClientReply> track(RaftClientRequest request,
                                                     CompletableFuture<RaftClientReply> answer) {
        CompletableFuture<RaftClientReply> attempt = new CompletableFuture<>();
        boolean write = request.is(RaftClientRequestProto.TypeCase.WRITE);
        pending.put(attempt, new Attempt(request.getServerId(), System.nanoTime(), write));
        if (write) {
            armProbe();
        }
        answer.whenComplete((r, e) -> {
            pending.remove(attempt);
            if (e != null) {
                attempt.completeExceptionally(e);
            } else {
                attempt.complete(r);
            }
        });
        return attempt;
    }

    /**
     * The group's leader is now {@code leader}: attempts pending at another member fail with a {@link
     * NotLeaderException} naming it, which Ratis' client answers by resending them to it at once. The old member's
     * late answer, if any, is ignored (a request it committed is answered again from the new leader's retry cache).
     */
    void leaderIs(RaftPeerId leader) {
        RaftPeer suggested = peers.get(leader);
        if (suggested == null) {
            return; // not a member this client knows: let its own retries find the leader
        }
        long suspectUntil = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(SUSPECT_MILLIS);
        pending.forEach((attempt, sent) -> {
            RaftPeerId target = sent.target();
            if (!target.equals(leader)) {
                // deposed and silent: passed over like a member that let an attempt time out, so that the client's
                // random pick of "another member" (after the new leader's first "not ready yet") does not wait on it
                suspects.put(target, suspectUntil);
                attempt.completeExceptionally(new NotLeaderException(RaftGroupMemberId.valueOf(target, groupId),
                        suggested, peers.values()));
            }
        });
    }

    /**
     * When a write has waited {@link LeaderProbe#ASK_AFTER_MILLIS} at a member that has not answered anything for as
     * long, asks the other members who leads; an answer naming another member is news of a new leader
     * ({@link #leaderIs}). Only writes count: a parked read (a long poll) waits at a healthy leader for up to its whole
     * wait, and would have every idle client asking. A member still answering other attempts is slow, not cut off: a
     * loaded leader, whose writes often wait that long, keeps its clients from asking.
     */
    private void askIfWritesWait() {
        probeArmed.set(false);
        try {
            askIfWritesWaitNow();
        } finally {
            if (pending.values().stream().anyMatch(Attempt::write)) {
                armProbe();
            }
        }
    }

    /** Schedules a look at the pending writes in {@link #PROBE_EVERY_MILLIS}, unless one is scheduled already. */
    private void armProbe() {
        if (probe != null && !closed && probeArmed.compareAndSet(false, true)) {
            probing = TICKS.schedule(this::askIfWritesWait, PROBE_EVERY_MILLIS, TimeUnit.MILLISECONDS);
        }
    }

    /** Whether a look at the pending writes is scheduled (tests: an idle client has none). */
    boolean probeArmed() {
        return probeArmed.get();
    }

    private void askIfWritesWaitNow() {
        long askAfter = System.nanoTime() - TimeUnit.MILLISECONDS.toNanos(LeaderProbe.ASK_AFTER_MILLIS);
        Set<RaftPeerId> waitedAt = pending.values().stream()
                .filter(a -> a.write() && a.sentNanos() - askAfter <= 0)
                .map(Attempt::target)
                .filter(t -> silentSince(t, askAfter))
                .collect(Collectors.toSet());
        if (waitedAt.isEmpty()) {
            return;
        }
        for (RaftPeerId member : peers.keySet()) {
            if (!waitedAt.contains(member) || waitedAt.size() == peers.size()) {
                probe.ask(member, leader -> {
                    if (pending.values().stream().anyMatch(a -> !a.target().equals(leader))) {
                        leaderIs(leader);
                    }
                });
            }
        }
    }

    /** Whether {@code member} has answered nothing since {@code nanos}. */
    private boolean silentSince(RaftPeerId member, long nanos) {
        Long at = answeredAt.get(member);
        return at == null || at - nanos <= 0;
    }

    @Override
    public RaftClientReply sendRequest(RaftClientRequest request) throws IOException {
        IOException passOver = passOver(request.getServerId());
        if (passOver != null) {
            throw passOver;
        }
        RaftClientReply reply = rpc.sendRequest(request);
        suspects.remove(request.getServerId());
        return reply;
    }

    /** A timeout to fail an attempt with at once, when its member is suspected and another member is not. */
    private IOException passOver(RaftPeerId target) {
        Long until = suspects.get(target);
        if (until == null) {
            return null;
        }
        long now = System.nanoTime();
        if (now - until >= 0) {
            suspects.remove(target, until);
            return null;
        }
        boolean another = peers.keySet().stream().anyMatch(p -> !p.equals(target) && !suspected(p, now));
        return another ? new TimeoutIOException(target + " let an attempt time out in the last " + SUSPECT_MILLIS
                + " ms: passed over") : null;
    }

    private boolean suspected(RaftPeerId peer, long now) {
        Long until = suspects.get(peer);
        return until != null && now - until < 0;
    }

    /** An answer (any reply, even "not the leader") clears the member; a timeout makes it a suspect. */
    private CompletableFuture<RaftClientReply> watch(RaftPeerId target, CompletableFuture<RaftClientReply> reply) {
        return reply.whenComplete((r, e) -> {
            Throwable cause = e instanceof CompletionException && e.getCause() != null
                    ? e.getCause() : e;
            if (cause instanceof TimeoutIOException) {
                suspects.put(target, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(SUSPECT_MILLIS));
            } else if (r != null) {
                suspects.remove(target);
                answeredAt.put(target, System.nanoTime());
            }
        });
    }

    @Override
    public void addRaftPeers(Collection<RaftPeer> added) {
        added.forEach(p -> peers.put(p.getId(), p));
        rpc.addRaftPeers(added);
    }

    @Override
    public boolean shouldReconnect(Throwable t) {
        return rpc.shouldReconnect(t);
    }

    /** The reconnect (closing the old connection, which may take seconds) runs off the caller's thread. */
    @Override
    public boolean handleException(RaftPeerId serverId, Throwable t, boolean reconnect) {
        if (!reconnect && !rpc.shouldReconnect(t)) {
            return false;
        }
        RECONNECTS.execute(() -> rpc.handleException(serverId, t, reconnect));
        return true;
    }

    @Override
    public void close() throws IOException {
        closed = true;
        stopHints.run();
        ScheduledFuture<?> tick = probing;
        if (tick != null) {
            tick.cancel(false);
        }
        rpc.close();
    }
}
