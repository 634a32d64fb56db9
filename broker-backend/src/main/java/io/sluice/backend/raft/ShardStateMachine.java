package io.sluice.backend.raft;

import io.sluice.backend.engine.ConfigurationWaits;
import io.sluice.backend.engine.DeadlineWakeUps;
import io.sluice.backend.engine.PartitionEngine;
import io.sluice.backend.engine.PartitionStats;
import io.sluice.backend.engine.ShardPartitions;
import io.sluice.backend.storage.ShardStore;
import io.sluice.backend.storage.StorageException;
import io.sluice.common.Clock;
import io.sluice.common.Fsync;
import io.sluice.common.raft.LeaderHints;
import io.sluice.common.raft.StateMachineLifecycle;
import io.sluice.partition.CommandCodec;
import io.sluice.partition.Effect;
import io.sluice.partition.MoveTask;
import io.sluice.partition.OutcomeCodec;
import io.sluice.partition.PartitionId;
import io.sluice.partition.PartitionOutcome;
import io.sluice.partition.PartitionService;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftGroupMemberId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.raftlog.RaftLog;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.SnapshotInfo;
import org.apache.ratis.statemachine.StateMachineStorage;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One shard: a Raft group whose state is many queue partitions in one RocksDB ({@link ShardStore} with the WAL
 * off: the Raft log is the write-ahead log).
 *
 * <ul>
 *   <li>A log entry is a batch of {@code (partition, command)} pairs (group commit, {@link CommandCodec}).
 *       {@link #startTransaction} (leader) prefixes the client's batch with the leader's time, so every replica
 *       applies it at the same time; that time is the wall clock bounded against a reference
 *       ({@link LeaderClock}): a leader whose clock is wrong cannot jump the partitions' time.</li>
 *   <li>{@link #applyTransaction} applies every command of the entry to its partition's engine, writes all their
 *       mutations and the entry's index in <em>one</em> WriteBatch, and answers the outcomes in order
 *       ({@link OutcomeCodec}). An entry at or below the stored applied index (already durable before a restart)
 *       is skipped: replay after a crash re-applies exactly the entries the store lost.</li>
 *   <li>Domain errors are answers; a command that throws anyway is answered InternalError on every replica alike;
 *       a storage failure stops the process (fail-stop) rather than let this replica diverge.</li>
 *   <li>Effects reach listeners only on the leader (only the primary executes them).</li>
 * </ul>
 *
 * <p>It adapts, and leaves each job to its own class: an entry's reply and its bodies are an {@link OutcomeReply};
 * the frontends' parked long polls and the deadline wake-ups that answer them are {@link ShardAwaits}; what each read
 * query answers is {@link ShardQueries#answer}; the snapshot folders and a store's replacement by one of them are
 * {@link ShardSnapshots}; applying commands to partitions is {@link ShardPartitions}.
 *
 * <p>Snapshots are RocksDB checkpoints in Ratis' state-machine folder, {@code sm/snap_<term>_<index>/} (the live
 * store lives elsewhere: installing a snapshot on a follower replaces that whole folder). Taking one flushes the store
 * first, so once Ratis purges the log up to the snapshot, the store's files hold every purged entry. A follower too
 * far behind for the log receives the leader's checkpoint files and {@link #reinitialize()} rebuilds its store from
 * them. On start, the latest snapshot is the applied point Ratis replays from; entries the store already holds are
 * skipped.
 */
public final class ShardStateMachine extends BaseStateMachine {
    private static final Logger LOG = LoggerFactory.getLogger(ShardStateMachine.class);
    private final Path storeDir;
    private final CopyOnWriteArrayList<PartitionService.EffectListener> listeners = new CopyOnWriteArrayList<>();
    private final LeaderClock clock;
    /** The leader time of the last entry applied here, and this process's monotonic clock when it was applied. */
    private volatile long lastStampMillis = Long.MIN_VALUE;
    private volatile long lastStampNanos;
    /** The frontends' parked long polls (leader only) and the deadline wake-ups that answer them. */
    private final ShardAwaits awaits;
    private final ShardSnapshots snapshots = new ShardSnapshots(this::followerNeedsSnapshot);
    private ShardStore store;
    /** The store's partitions (null while no store is open): the apply, read, stats and sweep logic. */
    private ShardPartitions partitions;

    /** @param storeDir where this replica's RocksDB lives (outside Ratis' own folders: a snapshot install replaces those) */
    public ShardStateMachine(Path storeDir, Clock clock) {
        this(storeDir, new LeaderClock(clock));
    }

    /** @param clock the time this replica stamps when it leads (bounded against a reference, {@link LeaderClock}) */
    public ShardStateMachine(Path storeDir, LeaderClock clock) {
        this.storeDir = storeDir;
        this.clock = clock;
        this.awaits = new ShardAwaits(new DeadlineWakeUps.Deadlines() {
            @Override
            public CompletableFuture<DeadlineWakeUps.Due> dueAt(PartitionId partition, long nowMillis) {
                synchronized (ShardStateMachine.this) {
                    return CompletableFuture.completedFuture(partitions == null ? DeadlineWakeUps.Due.NOTHING
                            : new DeadlineWakeUps.Due(partitions.visibleAt(partition, nowMillis),
                            partitions.nextDeadlineAfter(partition, nowMillis)));
                }
            }

            @Override
            public CompletableFuture<Map<PartitionId, Long>> nextDeadlines() {
                synchronized (ShardStateMachine.this) {
                    return CompletableFuture.completedFuture(partitions == null ? Map.of() : partitions.nextDeadlines());
                }
            }
        }, clock::now);
        this.configWaits = new ConfigurationWaits(awaits.timer());
    }

    /** Registers for the effects of the commands this replica applies while it leads the shard (once per listener). */
    public void addListener(PartitionService.EffectListener listener) {
        listeners.addIfAbsent(listener);
    }

    /** Dead-letter hand-offs not yet acknowledged in the partitions this replica has opened. */
    public synchronized List<Effect.DeadLetter> pendingDeadLetters() {
        return partitions == null ? List.of() : partitions.pendingDeadLetters();
    }

    /** Waits for partitions to be configured from a catalog version (the {@code AWAIT_CONFIGURED} query). */
    private final ConfigurationWaits configWaits;
    private volatile ConfigurationWaits.Requests configRequests =
            ConfigurationWaits.Requests.NONE;

    /** Who configures this shard's partitions from the catalog when asked (its backend's reconciler). */
    public void setConfigurationRequests(ConfigurationWaits.Requests requests) {
        this.configRequests = requests;
    }

    /** The stored config of one partition, if this replica's store has it. */
    public synchronized Optional<PartitionEngine.Stored> storedPartition(PartitionId id) {
        return partitions == null ? Optional.empty() : partitions.storedPartition(id);
    }

    /** Whether this replica has the partition open (its leader drives it). */
    public synchronized boolean isOpen(PartitionId id) {
        return partitions != null && partitions.isOpen(id);
    }

    /** Move tasks with work to do in the partitions this replica has opened. */
    public synchronized List<MoveTask.Located> moveTasksToDrive() {
        return partitions == null ? List.of() : partitions.moveTasksToDrive();
    }

    /** Tells this process's clients of the group (a combined node's frontend) where to send their requests now. */
    @Override
    public void notifyLeaderChanged(RaftGroupMemberId groupMemberId, RaftPeerId newLeaderId) {
        LeaderHints.leaderChanged(groupMemberId.getGroupId(), newLeaderId);
    }

    @Override
    public void initialize(RaftServer server, RaftGroupId groupId, RaftStorage raftStorage) throws IOException {
        super.initialize(server, groupId, raftStorage);
        snapshots.init(raftStorage);
        SnapshotInfo latest = snapshots.getLatestSnapshot();
        if (latest != null) {
            // The log is purged up to the snapshot, so the store must hold at least that much. It does not when a
            // crash cut a snapshot install short (or the store folder is gone): rebuild it from the snapshot.
            boolean lagging = !Files.exists(storeDir);
            if (!lagging) {
                try (ShardStore existing = ShardStore.open(storeDir, ShardStore.Durability.NO_WAL)) {
                    lagging = existing.appliedIndex() < latest.getIndex();
                }
            }
            if (lagging) {
                ShardSnapshots.replaceStore(storeDir, snapshots.dirOf(latest.getTermIndex()));
            }
        }
        openStore();
        if (latest != null) {
            updateLastAppliedTermIndex(latest.getTermIndex());
        }
        StateMachineLifecycle.started(this);
    }

    private void openStore() {
        store = ShardStore.open(storeDir, ShardStore.Durability.NO_WAL);
        partitions = new ShardPartitions(store, String.valueOf(getGroupId()));
        partitions.applyFault(applyFault);
        seedLastStamp();
    }

    /**
     * The last stamp as the store has it (the latest engine time of its partitions), read when the store opens: after
     * a clean stop every replayed entry is skipped, and after a snapshot none is replayed at all, so without this the
     * first stamp before a reference time arrives would be the raw wall clock, which may be far ahead (engine time
     * never goes back: acknowledged messages would expire early and in-flight ones reappear).
     */
    private void seedLastStamp() {
        long latest = Long.MIN_VALUE;
        for (PartitionEngine.Stored s : partitions.storedPartitions()) {
            latest = Math.max(latest, s.lastNowMillis());
        }
        if (latest > lastStampMillis) {
            lastStampNanos = clock.monotonicNanos();
            lastStampMillis = latest;
        }
    }

    @Override
    public StateMachineStorage getStateMachineStorage() {
        return snapshots;
    }

    /**
     * Whether this replica leads the group and a follower's next entry is before the start of its log: that follower
     * gets a snapshot (ShardSnapshots keeps superseded ones meanwhile). False when it cannot tell.
     */
    private boolean followerNeedsSnapshot() {
        try {
            RaftServer.Division division = getServer().getNow(null).getDivision(getGroupId());
            if (!division.getInfo().isLeader()) {
                return false;
            }
            long start = division.getRaftLog().getStartIndex();
            for (long next : division.getInfo().getFollowerNextIndices()) {
                if (next < start) {
                    return true;
                }
            }
            return false;
        } catch (Exception e) {
            return false; // not initialized, or closing: the usual grace applies
        }
    }

    /** A checkpoint of the store at the last applied entry; Ratis may then purge the log up to it. */
    @Override
    public long takeSnapshot() throws IOException {
        TermIndex last;
        Path target;
        synchronized (this) {
            last = getLastAppliedTermIndex();
            if (last == null || store == null) {
                return RaftLog.INVALID_LOG_INDEX;
            }
            target = snapshots.dirOf(last);
            if (!Files.exists(target)) {
                Path partial = target.resolveSibling(target.getFileName() + ".partial");
                ShardSnapshots.deleteRecursively(partial);
                store.checkpoint(partial); // flushes: the store's files now hold every entry up to `last`
                Files.move(partial, target, StandardCopyOption.ATOMIC_MOVE);
                snapshots.changed();
                Fsync.force(target.getParent()); // the rename is durable before Ratis purges the log
            }
        }
        snapshots.deleteSuperseded(Instant.now());
        return last.getIndex();
    }

    /** Ratis pauses the machine while it installs a snapshot from the leader (once per chunk). */
    @Override
    public void pause() {
        StateMachineLifecycle.paused(this);
    }

    /**
     * After a snapshot from the leader was installed into {@code sm/}: the store becomes a copy of that checkpoint
     * (the old one is discarded), the partition engines are rebuilt from it lazily, and the applied point is the
     * snapshot's.
     */
    @Override
    public void reinitialize() throws IOException {
        reloadFromSnapshot();
        StateMachineLifecycle.resumed(this);
    }

    private void reloadFromSnapshot() throws IOException {
        snapshots.changed(); // installed from the leader: list the folder Ratis put in place
        SnapshotInfo latest = snapshots.getLatestSnapshot();
        if (latest == null) {
            return;
        }
        synchronized (this) {
            if (store != null && store.appliedIndex() >= latest.getIndex()) {
                return; // our own snapshot, or an install we already took in
            }
            closeStore();
            ShardSnapshots.replaceStore(storeDir, snapshots.dirOf(latest.getTermIndex()));
            openStore(); // its partitions are opened from the new store lazily
            updateLastAppliedTermIndex(latest.getTermIndex());
        }
    }

    @Override
    public TransactionContext startTransaction(RaftClientRequest request) throws IOException {
        ByteString batch = request.getMessage().getContent();
        List<CommandCodec.Addressed> decoded;
        try {
            decoded = CommandCodec.decode(batch.toByteArray()); // refuse what does not decode: it never reaches the log
        } catch (RuntimeException e) {
            throw new IOException("not a command batch: " + e.getMessage(), e);
        }
        long stamp = clock.stamp(lastStampMillis, lastStampNanos);
        ByteString stamped = ByteString.copyFrom(ByteBuffer.allocate(8).putLong(0, stamp)).concat(batch);
        // the decoded batch rides along to this leader's apply (decoded from these very bytes): decoded once here
        return TransactionContext.newBuilder().setStateMachine(this).setClientRequest(request).setLogData(stamped)
                .setStateMachineContext(decoded).build();
    }

    @Override
    public CompletableFuture<Message> applyTransaction(TransactionContext trx) {
        LogEntryProto entry = trx.getLogEntry();
        TermIndex termIndex = TermIndex.valueOf(entry);
        ByteString data = entry.getStateMachineLogEntry().getLogData();
        synchronized (this) {
            long leaderTime = data.substring(0, 8).asReadOnlyByteBuffer().getLong();
            if (termIndex.getIndex() <= store.appliedIndex()) {
                if (leaderTime > lastStampMillis) { // in the store already, but its time still bounds the next stamp
                    lastStampNanos = clock.monotonicNanos();
                    lastStampMillis = leaderTime;
                }
                updateLastAppliedTermIndex(termIndex);
                return CompletableFuture.completedFuture(Message.EMPTY);
            }
            lastStampNanos = clock.monotonicNanos();
            lastStampMillis = leaderTime;
            @SuppressWarnings("unchecked")
            List<CommandCodec.Addressed> batch = trx.getStateMachineContext() instanceof List<?> decoded
                    ? (List<CommandCodec.Addressed>) decoded // the leader decoded it in startTransaction
                    : CommandCodec.decode(data.substring(8).toByteArray());
            // Every replica computes the answer: Ratis keeps each replica's reply in its retry cache, and a client
            // that retries a committed request on a new leader gets the reply cached there (OutcomeReply).
            List<PartitionOutcome> outcomes;
            try {
                outcomes = partitions.apply(batch, leaderTime, termIndex.getIndex(), true);
            } catch (StorageException e) {
                throw storageFailed(e);
            }
            List<Effect> effects = ShardPartitions.effectsOf(outcomes);
            updateLastAppliedTermIndex(termIndex);
            configWaits.check(partitions::configVersion);
            if (trx.getServerRole() == RaftPeerRole.LEADER && !effects.isEmpty()) {
                for (PartitionService.EffectListener l : listeners) {
                    try {
                        l.onEffects(effects);
                    } catch (RuntimeException e) { // one listener's failure must not fail the entry or the others
                        LOG.warn("effect listener failed", e);
                    }
                }
                awaits.onApplied(effects);
            }
            return CompletableFuture.completedFuture(new OutcomeReply(String.valueOf(getGroupId()), this::withBodies,
                    batch, outcomes));
        }
    }

    /** A receive's outcome with its bodies read from this replica's store; null once the store is closed. */
    private synchronized PartitionOutcome withBodies(PartitionId id, PartitionOutcome outcome) {
        return partitions == null ? null : partitions.withBodies(id, outcome);
    }

    /**
     * The store failed under an apply: this replica can neither go on nor skip the entry (it would diverge), so the
     * process stops (fail-stop); restarted, it replays the entry from its log, or is replaced if its disk is gone.
     */
    private RuntimeException storageFailed(RuntimeException e) {
        LOG.error("shard {}: storage failed while applying: stopping the process", getGroupId(), e);
        onStorageFailure.accept(e);
        return e;
    }

    /** What a storage failure does: halt the JVM (tests record it instead). */
    private volatile Consumer<Throwable> onStorageFailure = e -> Runtime.getRuntime().halt(74);
    /** A test's stand-in for a bug in the engine: throws for the commands it chooses. */
    private volatile Consumer<CommandCodec.Addressed> applyFault = a -> { };

    void onStorageFailure(Consumer<Throwable> handler) {
        this.onStorageFailure = handler;
    }

    synchronized void applyFault(Consumer<CommandCodec.Addressed> fault) {
        this.applyFault = fault;
        if (partitions != null) {
            partitions.applyFault(fault);
        }
    }

    @Override
    public CompletableFuture<Message> query(Message request) {
        ByteBuffer q = request.getContent().asReadOnlyByteBuffer();
        if (!q.hasRemaining()) {
            return CompletableFuture.failedFuture(new IllegalArgumentException("empty query"));
        }
        byte type = q.get(0);
        if (type == ShardQueries.AWAIT) {
            return awaits.park(ShardQueries.argOf(q))
                    .thenApply(available -> Message.valueOf(ByteString.copyFrom(ShardQueries.encodeAvailable(available))));
        }
        if (type == ShardQueries.AWAIT_CONFIGURED) {
            PartitionId id = ShardQueries.partitionOf(q);
            long version = ShardQueries.argOf(q);
            CompletableFuture<Boolean> configured;
            synchronized (this) {
                if (partitions == null) {
                    return CompletableFuture.failedFuture(new IllegalStateException("shard " + getGroupId() + " is closed"));
                }
                configured = configWaits.await(id, version, partitions::configVersion);
            }
            if (!configured.isDone()) {
                configRequests.configure(id, version);
            }
            return configured.thenApply(ok -> Message.valueOf(ByteString.copyFrom(ShardQueries.encodeLong(ok ? 1 : 0))));
        }
        byte[] answer;
        synchronized (this) {
            if (partitions == null) {
                return CompletableFuture.failedFuture(new IllegalStateException("shard " + getGroupId() + " is closed"));
            }
            answer = ShardQueries.answer(type, q, partitions, clock.now());
        }
        return answer == null ? CompletableFuture.failedFuture(new IllegalArgumentException("unknown query " + type))
                : CompletableFuture.completedFuture(Message.valueOf(ByteString.copyFrom(answer)));
    }

    @Override
    public void notifyNotLeader(Collection<TransactionContext> pending) {
        awaits.leadershipLost(); // parked AWAITs belong to the leader: answered empty, their frontends ask the new one
    }

    /**
     * The partitions of this shard (as opened so far, i.e. every one that has seen a command since start) that an
     * {@code Expire} sweep would change now: what the shard's leader sweeps, rather than every frontend sweeping
     * every partition.
     */
    public synchronized List<PartitionId> partitionsToSweep(long nowMillis) {
        return partitions == null ? List.of() : partitions.partitionsToSweep(nowMillis);
    }

    /**
     * Counts and totals of the given partitions on this replica (those it has; partitions not opened since start are
     * read from the store): what the shard's primary exports as queue metrics.
     */
    public List<PartitionStats> stats(Collection<PartitionId> ids) {
        List<PartitionStats> out = new ArrayList<>();
        int opened = 0;
        for (PartitionId id : ids) {
            // one partition per lock hold: applies interleave with a scrape; loading a partition not opened since
            // start (a scan of its states) is bounded per scrape, the rest follow on the next ones
            synchronized (this) {
                if (partitions == null) {
                    return out;
                }
                boolean wasOpen = partitions.isOpen(id);
                var st = partitions.stats(id, clock.now(), opened < ShardPartitions.MAX_OPENED_PER_STATS);
                opened += !wasOpen && partitions.isOpen(id) ? 1 : 0; // a partition with no state here costs no slot
                if (st != null) {
                    out.add(st);
                }
            }
        }
        return out;
    }

    /**
     * Opens up to {@code max} partitions of the store not opened since start (retired ones are skipped): a partition
     * idle since a restart must still be swept and have its pending dead-letter hand-offs executed, which only
     * happens to opened partitions. The shard's leader calls this on each sweep until all are open.
     *
     * @return how many it opened
     */
    public int openStored(int max) {
        ShardPartitions of;
        List<PartitionEngine.Stored> stored;
        synchronized (this) {
            of = partitions;
            if (of == null || of.allStoredOpen()) {
                return 0;
            }
            stored = of.storedPartitions();
        }
        int opened = 0;
        for (PartitionEngine.Stored p : stored) {
            if (opened >= max) {
                return opened;
            }
            synchronized (this) {
                if (partitions != of) {
                    return opened; // the store was replaced meanwhile: the next sweep starts over
                }
                // a retired partition only while its cold messages are still to be handed off (its sweeps do it)
                if ((!p.retired() || p.coldMessages() > 0) && !of.isOpen(p.id()) && of.open(p.id())) {
                    opened++;
                }
            }
        }
        synchronized (this) {
            of.markAllStoredOpen(); // from now on every partition is opened by the command that creates it
        }
        return opened;
    }

    /** Every partition this replica's store holds (opened since start or not), with its config and retired flag. */
    public synchronized List<PartitionEngine.Stored> storedPartitions() {
        return partitions == null ? List.of() : partitions.storedPartitions();
    }

    /** The last entries this replica applied with the store's digest after each ({@link ShardStore.Applied}). */
    public List<ShardStore.Applied> recentDigests() {
        ShardStore s = store;
        return s == null ? List.of() : s.recentDigests();
    }

    /** Ratis closed this replica (its group was removed here, or the server stops). */
    public boolean closed() {
        return closed;
    }

    private volatile boolean closed;
    private volatile long closedAtNanos;

    /** Nanoseconds since Ratis closed this replica (meaningless unless {@link #closed()}). */
    public long closedForNanos() {
        return System.nanoTime() - closedAtNanos;
    }

    /** Deletes this replica's store once the group was removed from this backend (it was replaced elsewhere). */
    public void deleteStore() throws IOException {
        synchronized (this) {
            closeStore();
            ShardSnapshots.deleteRecursively(storeDir);
        }
    }

    /** A read of a partition's state on this replica (for tests and status): its canonical description. */
    public synchronized String describe(PartitionId id) {
        return partitions == null ? "not open" : partitions.describe(id);
    }

    @Override
    public void close() throws IOException {
        closedAtNanos = System.nanoTime();
        closed = true;
        super.close();
        awaits.close();
        synchronized (this) {
            closeStore();
        }
    }

    private void closeStore() {
        if (store != null) {
            store.close();
            store = null;
            partitions = null;
        }
    }
}
