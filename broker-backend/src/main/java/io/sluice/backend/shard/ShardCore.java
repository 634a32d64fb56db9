package io.sluice.backend.shard;

import io.sluice.backend.engine.ConfigurationWaits;
import io.sluice.backend.engine.DeadlineWakeUps;
import io.sluice.backend.engine.PartitionEngine;
import io.sluice.backend.engine.PartitionStats;
import io.sluice.backend.engine.ShardPartitions;
import io.sluice.backend.storage.ShardStore;
import io.sluice.partition.CommandCodec;
import io.sluice.partition.Effect;
import io.sluice.partition.HistoryPoint;
import io.sluice.partition.MoveTask;
import io.sluice.partition.PartitionId;
import io.sluice.partition.PartitionOutcome;
import io.sluice.partition.PartitionService;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One shard above its log: what a shard does with an entry and with a query, whichever log orders its entries. A
 * replicated shard's Raft state machine ({@code ShardStateMachine}) and a one-replica shard's local log
 * ({@code LocalLog}) both adapt this one class; neither applies, answers or parks anything itself.
 *
 * <ul>
 *   <li>{@link #stamp} is the time the leader puts on its next entry ({@link LeaderClock}, bounded by the last stamp
 *       applied here); {@link #apply} applies an entry's commands at that time and writes their mutations with the
 *       entry's index in one batch ({@link ShardPartitions}); an entry at or below the stored index is skipped.</li>
 *   <li>{@link #durable} is told once the entry is on disk where the shard's contract says (committed by a majority,
 *       or the local WAL forced): configuration waits are answered and, on the leader, the listeners (dead-letter
 *       hand-offs) hear the effects and the parked {@code AWAIT}s are answered ({@link ShardAwaits}).</li>
 *   <li>{@link #query} answers the read queries ({@link ShardQueries}) and parks {@code AWAIT} and
 *       {@code AWAIT_CONFIGURED}.</li>
 *   <li>What the shard's leader reads for its housekeeping (sweeps, hand-offs, move tasks, metrics, reconciling).</li>
 *   <li>{@link #sampleHistory}: every replica records its partitions' counts for the console's charts
 *       ({@link ShardHistory}, beside the store, outside the replicated state), at open, every minute and at close.</li>
 * </ul>
 *
 * <p>Thread-safe: every read and write of the store holds this object's lock.
 */
public final class ShardCore implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ShardCore.class);

    private final String name;
    private final Path storeDir;
    private final ShardStore.Durability durability;
    private final LeaderClock clock;
    private final CopyOnWriteArrayList<PartitionService.EffectListener> listeners = new CopyOnWriteArrayList<>();
    /** The leader time of the last entry applied here, and this process's monotonic clock when it was applied. */
    private volatile long lastStampMillis = Long.MIN_VALUE;
    private volatile long lastStampNanos;
    /** The frontends' parked long polls (leader only) and the deadline wake-ups that answer them. */
    private final ShardAwaits awaits;
    /** Waits for partitions to be configured from a catalog version (the {@code AWAIT_CONFIGURED} query). */
    private final ConfigurationWaits configWaits;
    private volatile ConfigurationWaits.Requests configRequests = ConfigurationWaits.Requests.NONE;
    /** A test's stand-in for a bug in the engine: throws for the commands it chooses. */
    private Consumer<CommandCodec.Addressed> applyFault = a -> { };
    private ShardStore store;
    /** The store's partitions (null while no store is open): the apply, read, stats and sweep logic. */
    private ShardPartitions partitions;
    /**
     * This replica's record of its partitions' counts for the charts: opened by its first sample (on the history
     * thread, never in the way of opening the store), kept across stores; guarded by {@link #historyLock}.
     */
    private ShardHistory history;
    private final Object historyLock = new Object();
    /** The periodic sample while a store is open (null when none is scheduled). */
    private ScheduledFuture<?> historySampling;
    /** Where every shard of the process takes its samples: one daemon thread, off the long polls' timer. */
    private static final ScheduledExecutorService HISTORY_THREAD = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "sluice-shard-history");
        t.setDaemon(true);
        return t;
    });

    /**
     * @param name       the shard's name in logs
     * @param storeDir   where its RocksDB lives
     * @param durability the store's: no WAL under a Raft log (the log is the write-ahead log), a synced WAL under
     *                   a local log
     * @param clock      the time it stamps when it leads
     */
    public ShardCore(String name, Path storeDir, ShardStore.Durability durability, LeaderClock clock) {
        this.name = name;
        this.storeDir = storeDir;
        this.durability = durability;
        this.clock = clock;
        this.awaits = new ShardAwaits(new DeadlineWakeUps.Deadlines() {
            @Override
            public CompletableFuture<DeadlineWakeUps.Due> dueAt(PartitionId partition, long nowMillis) {
                synchronized (ShardCore.this) {
                    return CompletableFuture.completedFuture(partitions == null ? DeadlineWakeUps.Due.NOTHING
                            : new DeadlineWakeUps.Due(partitions.visibleAt(partition, nowMillis),
                            partitions.nextDeadlineAfter(partition, nowMillis)));
                }
            }

            @Override
            public CompletableFuture<Map<PartitionId, Long>> nextDeadlines() {
                synchronized (ShardCore.this) {
                    return CompletableFuture.completedFuture(
                            partitions == null ? Map.of() : partitions.nextDeadlines());
                }
            }
        }, clock::now);
        this.configWaits = new ConfigurationWaits(awaits.timer());
    }

    public String name() {
        return name;
    }

    public Path storeDir() {
        return storeDir;
    }

    /** The time reads are answered at (its leader clock). */
    public long now() {
        return clock.now();
    }

    /**
     * Opens the store (again, after {@link #closeStore}); its partitions are opened lazily. The history records a point
     * at once and every minute after, on its own thread.
     */
    public synchronized void open() {
        store = ShardStore.open(storeDir, durability);
        partitions = new ShardPartitions(store, name);
        partitions.applyFault(applyFault);
        seedLastStamp();
        if (historySampling == null) {
            historySampling = HISTORY_THREAD.scheduleWithFixedDelay(this::sampleHistory, 0, HISTORY_EVERY_SECONDS,
                    TimeUnit.SECONDS);
        } else {
            HISTORY_THREAD.execute(this::sampleHistory); // a store reopened (a snapshot installed): its figures now
        }
    }

    /** How often a replica records its partitions' counts ({@link ShardHistory}). */
    static final int HISTORY_EVERY_SECONDS = 60;

    /** Records the partitions' counts now in the history, opening it first if need be. */
    public void sampleHistory() {
        try {
            synchronized (historyLock) {
                List<PartitionStats> stats;
                long now;
                synchronized (this) {
                    if (partitions == null) {
                        return;
                    }
                    now = clock.now();
                    stats = partitions.stats(now);
                }
                if (history == null) {
                    history = ShardHistory.open(storeDir);
                }
                history.record(now, stats);
            }
        } catch (RuntimeException e) { // charts only: never the shard's business
            LOG.warn("shard {}: history not recorded", name, e);
        }
    }

    /** The history of one partition's counts (the {@code HISTORY} query). */
    List<HistoryPoint> history(PartitionId partition, long fromMillis, long toMillis) {
        synchronized (historyLock) {
            return history == null ? List.of() : history.read(partition, fromMillis, toMillis);
        }
    }

    /** Whether a store is open. */
    public synchronized boolean isStoreOpen() {
        return store != null;
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

    /** The index of the last entry the store holds (-1 while closed). */
    public synchronized long appliedIndex() {
        return store == null ? -1 : store.appliedIndex();
    }

    /** The time a leader stamps on its next entry. */
    public long stamp() {
        return clock.stamp(lastStampMillis, lastStampNanos);
    }

    /**
     * Applies an entry: every command at {@code leaderTime}, all their mutations and {@code index} in one write
     * (unsynced under a synced WAL: the log forces it before telling {@link #durable}). Receives' outcomes carry
     * leases, not bodies ({@link #withBodies}).
     *
     * @return the outcomes in order, or null when the store holds the entry already (replayed after a restart)
     * @throws io.sluice.backend.storage.StorageException the store failed: memory may no longer match the disk
     */
    public List<PartitionOutcome> apply(List<CommandCodec.Addressed> batch, long leaderTime, long index) {
        return apply(CommandCodec.Batch.anonymous(batch), leaderTime, index);
    }

    /** As {@link #apply(List, long, long)}, for an entry with an id: applied once however often the log holds it. */
    public synchronized List<PartitionOutcome> apply(CommandCodec.Batch batch, long leaderTime, long index) {
        if (partitions == null) {
            throw new IllegalStateException("shard " + name + " is closed");
        }
        if (index <= store.appliedIndex()) {
            if (leaderTime > lastStampMillis) { // in the store already, but its time still bounds the next stamp
                lastStampNanos = clock.monotonicNanos();
                lastStampMillis = leaderTime;
            }
            return null;
        }
        lastStampNanos = clock.monotonicNanos();
        lastStampMillis = leaderTime;
        return partitions.apply(batch, leaderTime, index, false);
    }

    /**
     * The entries applied so far are durable: configuration waits are answered, and when this replica leads, the
     * listeners hear {@code effects} and parked awaits whose partitions have messages now are answered.
     */
    public void durable(List<Effect> effects, boolean leader) {
        synchronized (this) {
            if (partitions != null) {
                configWaits.check(partitions::configVersion);
            }
        }
        if (!leader || effects.isEmpty()) {
            return;
        }
        for (PartitionService.EffectListener l : listeners) {
            try {
                l.onEffects(effects);
            } catch (RuntimeException e) { // one listener's failure must not fail the entry or the others
                LOG.warn("effect listener failed", e);
            }
        }
        awaits.onApplied(effects);
    }

    /** A receive's outcome with its bodies read from the store; null once the store is closed. */
    public synchronized PartitionOutcome withBodies(PartitionId id, PartitionOutcome outcome) {
        return partitions == null ? null : partitions.withBodies(id, outcome);
    }

    /**
     * Answers a read query ({@link ShardQueries}): at once, or, for {@code AWAIT} and {@code AWAIT_CONFIGURED}, once
     * what it waits for happened (or at its timeout).
     */
    public CompletableFuture<byte[]> query(ByteBuffer q) {
        if (!q.hasRemaining()) {
            return CompletableFuture.failedFuture(new IllegalArgumentException("empty query"));
        }
        byte type = q.get(0);
        if (type == ShardQueries.AWAIT) {
            return awaits.park(ShardQueries.argOf(q), ShardQueries.cursorOf(q))
                    .thenApply(ShardQueries::encodeAvailable);
        }
        if (type == ShardQueries.HISTORY) {
            return CompletableFuture.completedFuture(HistoryPoint.encodeList(history(ShardQueries.partitionOf(q),
                    ShardQueries.historyFrom(q), ShardQueries.argOf(q))));
        }
        if (type == ShardQueries.AWAIT_CONFIGURED) {
            PartitionId id = ShardQueries.partitionOf(q);
            long version = ShardQueries.argOf(q);
            CompletableFuture<Boolean> configured;
            synchronized (this) {
                if (partitions == null) {
                    return closedFailure();
                }
                configured = configWaits.await(id, version, partitions::configVersion);
            }
            if (!configured.isDone()) {
                configRequests.configure(id, version);
            }
            return configured.thenApply(ok -> ShardQueries.encodeLong(ok ? 1 : 0));
        }
        byte[] answer;
        synchronized (this) {
            if (partitions == null) {
                return closedFailure();
            }
            answer = ShardQueries.answer(type, q, partitions, clock.now());
        }
        return answer == null ? CompletableFuture.failedFuture(new IllegalArgumentException("unknown query " + type))
                : CompletableFuture.completedFuture(answer);
    }

    private <T> CompletableFuture<T> closedFailure() {
        return CompletableFuture.failedFuture(new IllegalStateException("shard " + name + " is closed"));
    }

    /** This replica no longer leads: parked awaits are answered empty (their frontends ask the new leader). */
    public void leadershipLost() {
        awaits.leadershipLost();
    }

    /** Parked awaits now (for tests). */
    public int parkedAwaits() {
        return awaits.parked();
    }

    /** Registers for the effects of the entries applied while this replica leads (once per listener). */
    public void addListener(PartitionService.EffectListener listener) {
        listeners.addIfAbsent(listener);
    }

    /** Who configures this shard's partitions from the catalog when a frontend waits for it (must not block). */
    public void setConfigurationRequests(ConfigurationWaits.Requests requests) {
        this.configRequests = requests;
    }

    /** A test's stand-in for a bug in the engine. */
    public synchronized void applyFault(Consumer<CommandCodec.Addressed> fault) {
        this.applyFault = fault;
        if (partitions != null) {
            partitions.applyFault(fault);
        }
    }

    /** A checkpoint of the store in {@code target} (flushes first: its files then hold every applied entry). */
    public synchronized void checkpoint(Path target) {
        if (store == null) {
            throw new IllegalStateException("shard " + name + " is closed");
        }
        store.checkpoint(target);
    }

    /** Dead-letter hand-offs not yet acknowledged in the partitions opened here. */
    public synchronized List<Effect.DeadLetter> pendingDeadLetters() {
        return partitions == null ? List.of() : partitions.pendingDeadLetters();
    }

    /** The stored config of one partition, if the store has it. */
    public synchronized Optional<PartitionEngine.Stored> storedPartition(PartitionId id) {
        return partitions == null ? Optional.empty() : partitions.storedPartition(id);
    }

    /** Whether the partition is open here (its leader drives it). */
    public synchronized boolean isOpen(PartitionId id) {
        return partitions != null && partitions.isOpen(id);
    }

    /** Move tasks with work to do in the partitions opened here. */
    public synchronized List<MoveTask.Located> moveTasksToDrive() {
        return partitions == null ? List.of() : partitions.moveTasksToDrive();
    }

    /**
     * The partitions (as opened so far) that an {@code Expire} sweep would change now: what the shard's leader
     * sweeps, rather than every partition.
     */
    public synchronized List<PartitionId> partitionsToSweep(long nowMillis) {
        return partitions == null ? List.of() : partitions.partitionsToSweep(nowMillis);
    }

    /**
     * Counts and totals of the given partitions (those the store has; partitions not opened since start are read from
     * it): what the shard's primary exports as queue metrics.
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

    /** Every partition the store holds (opened since start or not), with its config and retired flag. */
    public synchronized List<PartitionEngine.Stored> storedPartitions() {
        return partitions == null ? List.of() : partitions.storedPartitions();
    }

    /** The last entries applied here with the store's digest after each ({@link ShardStore.Applied}). */
    public List<ShardStore.Applied> recentDigests() {
        ShardStore s;
        synchronized (this) {
            s = store;
        }
        return s == null ? List.of() : s.recentDigests();
    }

    /** A partition's state here (for tests and status): its canonical description. */
    public synchronized String describe(PartitionId id) {
        return partitions == null ? "not open" : partitions.describe(id);
    }

    /** Forces the store's WAL (a local log's group commit; a no-op without a WAL). */
    public void syncWal() {
        ShardStore s;
        synchronized (this) {
            s = store;
        }
        if (s != null && durability == ShardStore.Durability.SYNC_WAL) {
            s.syncWal();
        }
    }

    /** Closes the store (it may be opened again, e.g. from a snapshot). */
    public synchronized void closeStore() {
        if (store != null) {
            store.close();
            store = null;
            partitions = null;
        }
    }

    /** Records a last point of history, answers parked awaits empty, stops their timer, closes the store. */
    @Override
    public void close() {
        sampleHistory();
        awaits.close();
        closeStore();
        closeHistory();
    }

    /** Stops sampling and closes the history (the next {@link #open} starts again): before its folder is deleted. */
    public void closeHistory() {
        synchronized (this) {
            if (historySampling != null) {
                historySampling.cancel(false);
                historySampling = null;
            }
        }
        synchronized (historyLock) {
            if (history != null) {
                history.close();
                history = null;
            }
        }
    }
}
