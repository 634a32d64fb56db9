package io.sluice.backend.raft;

import io.sluice.backend.shard.LocalLog;
import io.sluice.backend.shard.ShardAwaits;
import io.sluice.backend.shard.ShardChannel;
import io.sluice.backend.shard.ShardQueries;
import io.sluice.common.SqsError;
import io.sluice.common.raft.RaftTransport;
import io.sluice.partition.Effect;
import io.sluice.partition.HistoryPoint;
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
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The data plane over shards, as a frontend uses it: a partition's commands go to its shard (found by the
 * {@link Router}, i.e. the cached catalog) through the shard's {@link ShardChannel} (group commit), reads are read
 * queries to the shard's leader, and arrivals are learnt from one parked {@code AWAIT} query per shard, turned into
 * {@code MessagesAvailable} effects for the listeners (long polls). The channel is a Raft group's
 * ({@link RaftShardChannel}) in a cluster and a one-replica shard's local log in {@code sluice dev}: everything here
 * is the same for both.
 */
public final class ShardedPartitionService implements PartitionService, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ShardedPartitionService.class);

    /** Where partitions live: from the catalog. A shard is named by its Raft group (id and members). */
    public interface Router {
        /** The shard group holding {@code partition}, or null when the catalog has no such partition. */
        RaftGroup groupOf(PartitionId partition);

        /** Every shard group (for arrival watches and cluster-wide reads). */
        Collection<RaftGroup> allGroups();
    }

    private final Router router;
    private final Function<RaftGroup, ShardChannel> opener;
    /** Each shard's channel, bound to the members it was opened for. */
    private final Map<RaftGroupId, Bound> channels = new ConcurrentHashMap<>();
    private final Map<RaftGroupId, Boolean> watched = new ConcurrentHashMap<>();
    /** Where each shard's parked await stands in its leader's announcements. */
    private final Map<RaftGroupId, ShardAwaits.Cursor> cursors = new ConcurrentHashMap<>();
    /** Whether a probe of the shard is out (a probe still out is not doubled). */
    private final Map<RaftGroupId, AtomicBoolean> probing = new ConcurrentHashMap<>();
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

    private record Bound(SortedSet<String> members, ShardChannel channel) {
    }

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
        this.router = router;
        this.opener = group -> new RaftShardChannel(group, transport, local, entriesInFlight(group, local), replies);
        watch(watchArrivals);
    }

    /**
     * Over shards reached through {@code channels} (one per shard group it is asked for, opened again when the group's
     * members change): {@code sluice dev}'s one local shard.
     */
    public ShardedPartitionService(Router router, Function<RaftGroup, ShardChannel> channels, boolean watchArrivals) {
        this.router = router;
        this.opener = channels;
        watch(watchArrivals);
    }

    /**
     * Over one shard of one replica in this process, under its {@link LocalLog} ({@code sluice dev}): every partition
     * is on it (the engine answers QueueDoesNotExist for one the shard does not have), and arrivals are learnt as in
     * a cluster, from a parked {@code AWAIT}.
     */
    public static ShardedPartitionService overLocalLog(LocalLog log) {
        String name = log.core().name();
        RaftGroup group = RaftGroup.valueOf(
                RaftGroupId.valueOf(UUID.nameUUIDFromBytes(name.getBytes(StandardCharsets.UTF_8))),
                RaftPeer.newBuilder().setId(name).build());
        return new ShardedPartitionService(new Router() {
            @Override
            public RaftGroup groupOf(PartitionId partition) {
                return group;
            }

            @Override
            public Collection<RaftGroup> allGroups() {
                return List.of(group);
            }
        }, g -> log, true);
    }

    private void watch(boolean watchArrivals) {
        if (watchArrivals) {
            watcher.scheduleWithFixedDelay(this::watchNewShards, 0, 1, TimeUnit.SECONDS);
            watcher.scheduleWithFixedDelay(this::probeAll, 0, PROBE_EVERY_MILLIS, TimeUnit.MILLISECONDS);
        }
    }

    /** How often each shard's leader is probed (readiness). */
    static final long PROBE_EVERY_MILLIS = 1_000;

    /**
     * Asks every shard's leader a no-op read (an {@code AWAIT} of 1 ms, which every backend version answers): the
     * answer proves this process reaches the leader now ({@link ShardChannel#probe}: a few seconds at most).
     */
    private void probeAll() {
        try {
            for (RaftGroup g : router.allGroups()) {
                AtomicBoolean out = probing.computeIfAbsent(g.getGroupId(), id -> new AtomicBoolean());
                if (!out.compareAndSet(false, true)) {
                    continue;
                }
                CompletableFuture<byte[]> probe;
                try {
                    probe = channel(g).probe(ShardQueries.simple(ShardQueries.AWAIT, 1));
                } catch (RuntimeException e) {
                    out.set(false);
                    throw e;
                }
                probe.whenComplete((r, e) -> {
                    out.set(false);
                    if (e == null) {
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

    /** The shard's channel; replaced (atomically) only when the shard's replicas or their addresses change. */
    private ShardChannel channel(RaftGroup group) {
        SortedSet<String> members = ShardClient.members(group.getPeers());
        return channels.compute(group.getGroupId(), (id, existing) -> {
            if (existing != null && existing.members().equals(members)) {
                return existing;
            }
            if (existing != null) {
                ShardClient.closeAfterRetryWindow(existing.channel());
            }
            return new Bound(members, opener.apply(group));
        }).channel();
    }

    /**
     * Entries a frontend keeps outstanding at one shard. Two when the shard is replicated or its one replica is in
     * another process: one travels (to the followers, over the network) while the next fills. One for a one-replica
     * shard in this process (a one-node cluster): its entry costs only the local log write, which a second entry
     * would wait behind in a flush of its own, so what queues meanwhile goes in one fuller entry instead (measured:
     * 3.2 -> 5.7 commands per entry at 8/8, docs/performance.md).
     */
    static int entriesInFlight(RaftGroup group, LocalLeaders local) {
        Collection<RaftPeer> peers = group.getPeers();
        return peers.size() == 1 && local.hosts(peers.iterator().next().getId()) ? 1 : 2;
    }

    @Override
    public CompletableFuture<PartitionOutcome> submit(PartitionId partition, PartitionCommand command) {
        RaftGroup group = router.groupOf(partition);
        if (group == null) {
            return CompletableFuture.completedFuture(new PartitionOutcome(
                    new PartitionResponse.Rejected(SqsError.QUEUE_DOES_NOT_EXIST.failure()), List.of(), List.of()));
        }
        return channel(group).submit(partition, command);
    }

    @Override
    public boolean ledHere(PartitionId partition) {
        RaftGroup group = router.groupOf(partition);
        return group != null && channel(group).ledHere();
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
        return channel(group).read(q);
    }
    @Override
    public CompletableFuture<QueueCounts> counts(PartitionId partition) {
        return query(partition, ShardQueries.partitionQuery(ShardQueries.COUNTS, partition, 0))
                .thenApply(b -> b == null ? new QueueCounts(0, 0, 0, 0, -1, -1, -1, 0, 0) : ShardQueries.decodeCounts(b));
    }

    /** How long {@link #allCounts} waits for a shard. */
    static final long ALL_COUNTS_TIMEOUT_MILLIS = 5_000;

    /**
     * One ALL_COUNTS read per shard; a partition's counts are taken from the shard the catalog places it on (a
     * shard may still hold a partition moved away), and a shard that fails or answers after 5 s is left out.
     */
    @Override
    public CompletableFuture<Map<PartitionId, QueueCounts>> allCounts() {
        List<CompletableFuture<Void>> reads = new ArrayList<>();
        Map<PartitionId, QueueCounts> all = new ConcurrentHashMap<>();
        for (RaftGroup group : router.allGroups()) {
            CompletableFuture<byte[]> read;
            try {
                read = channel(group).read(ShardQueries.simple(ShardQueries.ALL_COUNTS, 0));
            } catch (RuntimeException e) {
                read = CompletableFuture.failedFuture(e);
            }
            // a shard that does not answer within its bound is left out; the others still count
            reads.add(read.copy().completeOnTimeout(null, ALL_COUNTS_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS).thenAccept(b -> {
                if (b == null) {
                    LOG.debug("counts of shard {} not read in time", group.getGroupId());
                    return;
                }
                ShardQueries.decodeAllCounts(b).forEach((id, c) -> {
                    RaftGroup placed = router.groupOf(id);
                    if (placed != null && placed.getGroupId().equals(group.getGroupId())) {
                        all.put(id, c);
                    }
                });
            }).exceptionally(e -> {
                LOG.debug("counts of shard {} not read: {}", group.getGroupId(), e.toString());
                return null;
            }));
        }
        return CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new)).thenApply(v -> all);
    }

    @Override
    public CompletableFuture<List<HistoryPoint>> history(PartitionId partition, long fromMillis, long toMillis) {
        return query(partition, ShardQueries.history(partition, fromMillis, toMillis))
                .thenApply(b -> b == null ? List.<HistoryPoint>of() : HistoryPoint.decodeList(b));
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
        for (Bound b : channels.values()) {
            long[] s = b.channel().stats();
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
        CompletableFuture<byte[]> answer;
        try {
            // a leader in this process parks it without an RPC (and answers it empty when it stops leading)
            answer = channel(group).read(ShardQueries.await(RaftShardChannel.AWAIT_MILLIS,
                    cursors.getOrDefault(group.getGroupId(), ShardAwaits.Cursor.NONE)));
        } catch (RuntimeException e) {
            answer = CompletableFuture.failedFuture(e);
        }
        answer.whenCompleteAsync((bytes, e) -> {
            if (e == null) {
                ShardAwaits.Answer decoded = ShardQueries.decodeAvailable(bytes);
                cursors.put(group.getGroupId(), decoded.cursor()); // the next await asks from here: nothing missed
                Map<PartitionId, Integer> available = decoded.available();
                if (!available.isEmpty()) {
                    List<Effect> effects = new ArrayList<>();
                    // each frontend wakes up to that many of its polls (unknown from an older backend: all)
                    available.forEach((p, count) -> effects.add(new Effect.MessagesAvailable(p, count)));
                    listeners.forEach(l -> l.onEffects(effects));
                }
                await(group);
            } else if (!closed) {
                watcher.schedule(() -> await(group), 500, TimeUnit.MILLISECONDS);
            }
        }, replies);
    }

    @Override
    public void close() {
        closed = true;
        watcher.shutdownNow();
        channels.values().forEach(b -> b.channel().close());
        replies.shutdown(); // after the channels: their failed futures still complete through it
    }

}
