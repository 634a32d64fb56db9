package io.sluice.backend.raft;

import io.sluice.common.SqsError;
import io.sluice.common.raft.RaftTransport;
import io.sluice.common.raft.RatisSettings;
import io.sluice.partition.Effect;
import io.sluice.partition.MoveTask;
import io.sluice.partition.OutcomeCodec;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionConfig;
import io.sluice.partition.PartitionId;
import io.sluice.partition.PartitionOutcome;
import io.sluice.partition.PartitionResponse;
import io.sluice.partition.PartitionService;
import io.sluice.partition.PeekedMessage;
import io.sluice.partition.QueueCounts;
import io.sluice.partition.StoredMessage;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The data plane over replicated shards, as a frontend uses it: a partition's commands go to its shard (found by the
 * {@link Router}, i.e. the cached catalog) through a {@link ShardClient} (group commit), reads are Raft read
 * requests to the shard's leader, and arrivals are learnt from one parked {@code AWAIT} query per shard, turned into
 * {@code MessagesAvailable} effects for the listeners (long polls).
 */
public final class ShardedPartitionService implements PartitionService, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ShardedPartitionService.class);
    private static final long AWAIT_MILLIS = 10_000;

    /** Where partitions live: from the catalog. */
    public interface Router {
        /** The shard group holding {@code partition}, or null when the catalog has no such partition. */
        RaftGroup groupOf(PartitionId partition);

        /** Every shard group (for arrival watches and cluster-wide reads). */
        Collection<RaftGroup> allGroups();
    }

    private final Router router;
    private final RaftTransport transport;
    private final LocalLeaders local;
    private final Map<RaftGroupId, ShardClient> writers = new ConcurrentHashMap<>();
    private final Map<RaftGroupId, RaftClient> readers = new ConcurrentHashMap<>();
    private final Map<RaftGroupId, Boolean> watched = new ConcurrentHashMap<>();
    /** A client per shard for readiness probes: short attempts, retried for a few seconds only. */
    private final Map<RaftGroupId, ShardProbe> probes = new ConcurrentHashMap<>();
    /** When each shard's leader last answered a probe. */
    private final Map<RaftGroupId, Long> reachedAt = new ConcurrentHashMap<>();
    private final List<EffectListener> listeners = new CopyOnWriteArrayList<>();
    private final ScheduledExecutorService watcher = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "sluice-shard-watch");
        t.setDaemon(true);
        return t;
    });
    /** Where shard replies continue (never on a Ratis thread: see {@link ShardClient}). */
    private final ExecutorService replies = Executors.newFixedThreadPool(2, r -> {
        Thread t = new Thread(r, "sluice-shard-reply");
        t.setDaemon(true);
        return t;
    });
    private volatile boolean closed;

    public ShardedPartitionService(Router router) {
        this(router, RaftTransport.PLAINTEXT);
    }

    /** @param transport how it reaches the shards (mutual TLS in a cluster) */
    public ShardedPartitionService(Router router, RaftTransport transport) {
        this(router, transport, LocalLeaders.NONE);
    }

    /** @param local shard leaders in this process (a combined node): reached without an RPC */
    public ShardedPartitionService(Router router, RaftTransport transport, LocalLeaders local) {
        this(router, transport, local, true);
    }

    /**
     * @param watchArrivals whether to learn arrivals (one parked {@code AWAIT} per shard) for long polls: a frontend
     *                      does; a backend that only writes to other shards (dead-letter copies) does not
     */
    public ShardedPartitionService(Router router, RaftTransport transport, LocalLeaders local, boolean watchArrivals) {
        this.local = local;
        this.router = router;
        this.transport = transport;
        if (watchArrivals) {
            watcher.scheduleWithFixedDelay(this::watchNewShards, 0, 1, TimeUnit.SECONDS);
            watcher.scheduleWithFixedDelay(this::probeAll, 0, PROBE_EVERY_MILLIS, TimeUnit.MILLISECONDS);
        }
    }

    /** How often each shard's leader is probed (readiness). */
    static final long PROBE_EVERY_MILLIS = 1_000;

    /** A shard's probe client, bound to its members (replaced when they change), and whether a probe is out. */
    private record ShardProbe(SortedSet<String> members, RaftClient client, AtomicBoolean out) {
    }

    /**
     * Asks every shard's leader a no-op read (an {@code AWAIT} of 1 ms, which every backend version answers): the
     * answer proves this process reaches the leader now. An attempt lasts at most 2 s, a probe 4 s in all; a probe
     * still out is not doubled.
     */
    private void probeAll() {
        try {
            for (RaftGroup g : router.allGroups()) {
                ShardProbe probe = probes.compute(g.getGroupId(), (id, existing) -> {
                    if (existing != null && existing.members().equals(ShardClient.members(g.getPeers()))) {
                        return existing;
                    }
                    closeQuietly(existing == null ? null : existing.client());
                    return new ShardProbe(ShardClient.members(g.getPeers()), transport.client(g, 2_000)
                            .setRetryPolicy(RatisSettings.retryWithin(4_000)).build(), new AtomicBoolean());
                });
                if (!probe.out().compareAndSet(false, true)) {
                    continue;
                }
                Message ping = Message.valueOf(ByteString.copyFrom(ShardQueries.simple(ShardQueries.AWAIT, 1)));
                LocalLeaders.send(local, g.getGroupId(), ping, true,
                        () -> probe.client().async().sendReadOnlyUnordered(ping), replies).whenComplete((r, e) -> {
                            probe.out().set(false);
                            if (e == null && r.isSuccess()) {
                                reachedAt.put(g.getGroupId(), System.nanoTime());
                            }
                        });
            }
        } catch (RuntimeException e) {
            LOG.debug("shard probes failed", e);
        }
    }

    /**
     * The shards (group ids) whose leader this process has not reached in the last {@code millis}: empty when it can
     * serve every partition of the catalog now. Only a frontend (one that watches arrivals) probes.
     */
    public List<RaftGroupId> unreachableShards(long millis) {
        long now = System.nanoTime();
        List<RaftGroupId> out = new ArrayList<>();
        for (RaftGroup g : router.allGroups()) {
            Long at = reachedAt.get(g.getGroupId());
            if (at == null || now - at >= TimeUnit.MILLISECONDS.toNanos(millis)) {
                out.add(g.getGroupId());
            }
        }
        return out;
    }

    /** The shard's client; replaced (atomically) only when the shard's replicas or their addresses change. */
    private ShardClient writer(RaftGroup group) {
        return writers.compute(group.getGroupId(), (id, existing) -> {
            if (existing != null && existing.boundTo(group)) {
                return existing;
            }
            closeQuietly(existing);
            return new ShardClient(group, 512, RatisSettings.MAX_ENTRY_PAYLOAD_BYTES, entriesInFlight(group, local),
                    replies, transport, local);
        });
    }

    /**
     * Entries a frontend keeps outstanding at one shard. Two when the shard is replicated or its one replica is in
     * another process: one travels (to the followers, over the network) while the next fills. One for a one-replica
     * shard in this process (a one-node cluster, {@code sluice dev}'s shape): its entry costs only the local log
     * write, which a second entry would wait behind in a flush of its own, so what queues meanwhile goes in one
     * fuller entry instead (measured: 3.2 -> 5.7 commands per entry at 8/8, docs/performance.md).
     */
    static int entriesInFlight(RaftGroup group, LocalLeaders local) {
        Collection<RaftPeer> peers = group.getPeers();
        return peers.size() == 1 && local.hosts(peers.iterator().next().getId()) ? 1 : 2;
    }

    private RaftClient reader(RaftGroup group) {
        return readers.computeIfAbsent(group.getGroupId(), id -> transport.client(group, AWAIT_MILLIS + 5_000)
                .setRetryPolicy(RatisSettings.retryWithin(AWAIT_MILLIS + RatisSettings.DEFAULT_RETRY_WINDOW_MS))
                .build());
    }

    @Override
    public CompletableFuture<PartitionOutcome> submit(PartitionId partition, PartitionCommand command) {
        RaftGroup group = router.groupOf(partition);
        if (group == null) {
            return CompletableFuture.completedFuture(new PartitionOutcome(
                    new PartitionResponse.Rejected(SqsError.QUEUE_DOES_NOT_EXIST.failure()), List.of(), List.of()));
        }
        return writer(group).submit(partition, command);
    }

    @Override
    public CompletableFuture<Void> createPartition(PartitionId partition, PartitionConfig config) {
        return submit(partition, new PartitionCommand.Configure(config)).thenApply(o -> null);
    }

    private CompletableFuture<byte[]> query(PartitionId partition, byte[] q) {
        RaftGroup group = router.groupOf(partition);
        if (group == null) {
            return CompletableFuture.completedFuture(null);
        }
        return query(group, q);
    }

    private CompletableFuture<byte[]> query(RaftGroup group, byte[] q) {
        Message read = Message.valueOf(ByteString.copyFrom(q));
        // unordered: reads need no sequence, and the ordered path bounds outstanding requests with a blocking semaphore
        return LocalLeaders.send(local, group.getGroupId(), read, true,
                () -> reader(group).async().sendReadOnlyUnordered(read), replies).thenApplyAsync(reply -> {
            if (!reply.isSuccess()) {
                throw new IllegalStateException("shard read failed: " + reply.getException());
            }
            return reply.getMessage().getContent().toByteArray();
        }, replies);
    }

    @Override
    public CompletableFuture<QueueCounts> counts(PartitionId partition) {
        return query(partition, ShardQueries.partitionQuery(ShardQueries.COUNTS, partition, 0))
                .thenApply(b -> b == null ? new QueueCounts(0, 0, 0, 0, -1, -1, -1, 0, 0) : ShardQueries.decodeCounts(b));
    }

    @Override
    public CompletableFuture<Integer> visibleNow(PartitionId partition) {
        return query(partition, ShardQueries.partitionQuery(ShardQueries.VISIBLE_AT, partition, 0))
                .thenApply(b -> b == null ? 0 : (int) ShardQueries.decodeLong(b));
    }

    @Override
    public CompletableFuture<Long> nextDeadlineMillis(PartitionId partition) {
        return query(partition, ShardQueries.partitionQuery(ShardQueries.NEXT_DEADLINE, partition, 0))
                .thenApply(b -> b == null ? -1L : ShardQueries.decodeLong(b));
    }

    @Override
    public CompletableFuture<StoredMessage> readMessage(PartitionId partition, long seq) {
        return query(partition, ShardQueries.partitionQuery(ShardQueries.READ_MESSAGE, partition, seq))
                .thenApply(b -> b == null || b.length == 0 ? null : OutcomeCodec.decodeMessage(b));
    }

    @Override
    public CompletableFuture<List<PeekedMessage>> peek(PartitionId partition, int max) {
        return query(partition, ShardQueries.partitionQuery(ShardQueries.PEEK, partition, max))
                .thenApply(b -> b == null ? List.<PeekedMessage>of() : ShardQueries.decodePeek(b));
    }

    @Override
    public CompletableFuture<Boolean> awaitConfigured(PartitionId partition, long configVersion) {
        return query(partition, ShardQueries.partitionQuery(ShardQueries.AWAIT_CONFIGURED, partition, configVersion))
                .thenApply(b -> b != null && ShardQueries.decodeLong(b) == 1);
    }

    @Override
    public CompletableFuture<List<MoveTask>> moveTasks(PartitionId partition) {
        return query(partition, ShardQueries.partitionQuery(ShardQueries.MOVE_TASKS, partition, 0))
                .thenApply(b -> b == null ? List.<MoveTask>of() : MoveTask.decodeList(b));
    }

    /** Raft entries written and the commands they carried, over every shard client: their ratio is the batching factor. */
    public long[] groupCommitStats() {
        long entries = 0;
        long commands = 0;
        for (ShardClient c : writers.values()) {
            long[] s = c.stats();
            entries += s[0];
            commands += s[1];
        }
        return new long[] {entries, commands};
    }

    @Override
    public void addListener(EffectListener listener) {
        listeners.add(listener);
    }

    /** Keeps one parked AWAIT per shard; each answer fans out as MessagesAvailable effects. */
    private void watchNewShards() {
        try {
            for (RaftGroup g : router.allGroups()) {
                if (watched.putIfAbsent(g.getGroupId(), Boolean.TRUE) == null) {
                    await(g);
                }
            }
        } catch (RuntimeException e) {
            LOG.debug("shard watch refresh failed", e);
        }
    }

    private void await(RaftGroup group) {
        if (closed) {
            return;
        }
        Message wait = Message.valueOf(ByteString.copyFrom(ShardQueries.simple(ShardQueries.AWAIT, AWAIT_MILLIS)));
        // a leader in this process parks it without an RPC (and answers it empty when it stops leading)
        LocalLeaders.send(local, group.getGroupId(), wait, true, () -> reader(group).async().sendReadOnlyUnordered(wait),
                replies).whenCompleteAsync((RaftClientReply reply, Throwable e) -> {
                    if (e == null && reply.isSuccess()) {
                        Map<PartitionId, Integer> available = ShardQueries.decodeAvailable(
                                reply.getMessage().getContent().toByteArray());
                        if (!available.isEmpty()) {
                            List<Effect> effects = new ArrayList<>();
                            // each frontend wakes up to that many of its polls (unknown from an older backend: all)
                            available.forEach((p, count) -> effects.add(new Effect.MessagesAvailable(p, count)));
                            listeners.forEach(l -> l.onEffects(effects));
                        }
                        await(group);
                    } else {
                        watcher.schedule(() -> await(group), 500, TimeUnit.MILLISECONDS);
                    }
                }, replies);
    }

    private static void closeQuietly(AutoCloseable c) {
        if (c != null) {
            try {
                c.close();
            } catch (Exception e) {
                // dropping it anyway
            }
        }
    }

    @Override
    public void close() {
        closed = true;
        watcher.shutdownNow();
        writers.values().forEach(ShardedPartitionService::closeQuietly);
        readers.values().forEach(ShardedPartitionService::closeQuietly);
        probes.values().forEach(p -> closeQuietly(p.client()));
        replies.shutdown(); // after the clients: their failed futures still complete through it
    }

}
