package io.sluice.backend.raft;

import io.sluice.backend.engine.ShardPartitions;
import io.sluice.backend.shard.LeaderClock;
import io.sluice.backend.shard.ShardCore;
import io.sluice.backend.shard.ShardHistory;
import io.sluice.backend.storage.ShardStore;
import io.sluice.backend.storage.StorageException;
import io.sluice.common.Clock;
import io.sluice.common.Fsync;
import io.sluice.common.raft.LeaderHints;
import io.sluice.common.raft.StateMachineLifecycle;
import io.sluice.partition.CommandCodec;
import io.sluice.partition.OutcomeCodec;
import io.sluice.partition.PartitionOutcome;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;
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
 *       is skipped: replay after a crash re-applies exactly the entries the store lost. An entry whose id
 *       ({@code ShardClient}'s writer and entry number) was applied before is not applied again
 *       ({@code EntryIds}): Ratis' retry cache misses some retried calls, and forgets all across a restart.</li>
 *   <li>Domain errors are answers; a command that throws anyway is answered InternalError on every replica alike;
 *       a storage failure stops the process (fail-stop) rather than let this replica diverge.</li>
 *   <li>Effects reach listeners only on the leader (only the primary executes them).</li>
 * </ul>
 *
 * <p>It only adapts Ratis to the {@link ShardCore}, which applies entries, answers queries and parks awaits exactly
 * as it does under a one-replica shard's local log; an entry's reply and its bodies are an {@link OutcomeReply}; the
 * snapshot folders and a store's replacement by one of them are {@link ShardSnapshots}.
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
    /** The shard above its log: apply, queries, parked awaits, the leader's housekeeping reads. */
    private final ShardCore core;
    private final ShardSnapshots snapshots = new ShardSnapshots(this::followerNeedsSnapshot);

    /** @param storeDir where this replica's RocksDB lives (outside Ratis' own folders: a snapshot install replaces those) */
    public ShardStateMachine(Path storeDir, Clock clock) {
        this(storeDir, new LeaderClock(clock));
    }

    /** @param clock the time this replica stamps when it leads (bounded against a reference, {@link LeaderClock}) */
    public ShardStateMachine(Path storeDir, LeaderClock clock) {
        this.storeDir = storeDir;
        this.core = new ShardCore(storeDir.getFileName().toString(), storeDir, ShardStore.Durability.NO_WAL, clock);
    }

    /** The shard this replica adapts to Ratis: what its leader's housekeeping, listeners and status read. */
    public ShardCore core() {
        return core;
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
        core.open();
        if (latest != null) {
            updateLastAppliedTermIndex(latest.getTermIndex());
        }
        StateMachineLifecycle.started(this);
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
            if (last == null || !core.isStoreOpen()) {
                return RaftLog.INVALID_LOG_INDEX;
            }
            target = snapshots.dirOf(last);
            if (!Files.exists(target)) {
                Path partial = target.resolveSibling(target.getFileName() + ".partial");
                ShardSnapshots.deleteRecursively(partial);
                core.checkpoint(partial); // flushes: the store's files now hold every entry up to `last`
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
            synchronized (core) {
                if (core.appliedIndex() >= latest.getIndex()) {
                    return; // our own snapshot, or an install we already took in
                }
                core.closeStore();
                ShardSnapshots.replaceStore(storeDir, snapshots.dirOf(latest.getTermIndex()));
                core.open(); // its partitions are opened from the new store lazily
            }
            updateLastAppliedTermIndex(latest.getTermIndex());
        }
    }

    @Override
    public TransactionContext startTransaction(RaftClientRequest request) throws IOException {
        ByteString batch = request.getMessage().getContent();
        CommandCodec.Batch decoded;
        try {
            decoded = CommandCodec.decodeBatch(batch.toByteArray()); // what does not decode never reaches the log
        } catch (RuntimeException e) {
            throw new IOException("not a command batch: " + e.getMessage(), e);
        }
        long stamp = core.stamp();
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
            CommandCodec.Batch batch = trx.getStateMachineContext() instanceof CommandCodec.Batch decoded
                    ? decoded // the leader decoded it in startTransaction
                    : CommandCodec.decodeBatch(data.substring(8).toByteArray());
            // Every replica computes the answer: Ratis keeps each replica's reply in its retry cache, and a client
            // that retries a committed request on a new leader gets the reply cached there (OutcomeReply).
            List<PartitionOutcome> outcomes;
            try {
                outcomes = core.apply(batch, leaderTime, termIndex.getIndex());
            } catch (StorageException e) {
                throw storageFailed(e);
            }
            updateLastAppliedTermIndex(termIndex);
            if (outcomes == null) { // the store held it already (replayed after a restart)
                return CompletableFuture.completedFuture(Message.EMPTY);
            }
            // committed on a majority: durable as the shard's contract says
            core.durable(ShardPartitions.effectsOf(outcomes), trx.getServerRole() == RaftPeerRole.LEADER);
            return CompletableFuture.completedFuture(new OutcomeReply(String.valueOf(getGroupId()), core::withBodies,
                    batch.commands(), outcomes));
        }
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

    void onStorageFailure(Consumer<Throwable> handler) {
        this.onStorageFailure = handler;
    }

    @Override
    public CompletableFuture<Message> query(Message request) {
        return core.query(request.getContent().asReadOnlyByteBuffer())
                .thenApply(answer -> Message.valueOf(ByteString.copyFrom(answer)));
    }

    @Override
    public void notifyNotLeader(Collection<TransactionContext> pending) {
        core.leadershipLost(); // parked AWAITs belong to the leader: answered empty, their frontends ask the new one
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

    /**
     * Deletes this replica's store, and its charts' history, once the group was removed from this backend (it was
     * replaced elsewhere).
     */
    public void deleteStore() throws IOException {
        synchronized (this) {
            core.closeStore();
            core.closeHistory();
            ShardSnapshots.deleteRecursively(storeDir);
            ShardSnapshots.deleteRecursively(ShardHistory.dirOf(storeDir));
        }
    }

    @Override
    public void close() throws IOException {
        closedAtNanos = System.nanoTime();
        closed = true;
        super.close();
        synchronized (this) {
            core.close();
        }
    }
}
