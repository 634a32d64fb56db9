package io.sluice.backend.local;

import io.sluice.backend.engine.ConfigurationWaits;
import io.sluice.backend.engine.DeadlineWakeUps;
import io.sluice.backend.engine.PartitionEngine;
import io.sluice.backend.engine.PartitionStats;
import io.sluice.backend.engine.ShardPartitions;
import io.sluice.backend.storage.ShardStore;
import io.sluice.backend.storage.StorageException;
import io.sluice.common.Clock;
import io.sluice.partition.CommandCodec;
import io.sluice.partition.Effect;
import io.sluice.partition.MoveTask;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionConfig;
import io.sluice.partition.PartitionId;
import io.sluice.partition.PartitionOutcome;
import io.sluice.partition.PartitionService;
import io.sluice.partition.PeekedMessage;
import io.sluice.partition.QueueCounts;
import io.sluice.partition.StoredMessage;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A shard on one machine, without replication: the partitions of one {@link ShardStore}, applied by one thread
 * through the same {@link ShardPartitions} a replicated shard's state machine uses. It is what {@code sluice dev}
 * runs (replication factor 1) and has the same contract as a replicated shard: an outcome is released only once it is
 * forced to disk.
 *
 * <p>Group commit: the shard thread takes every queued task (up to {@link #MAX_GROUP}); consecutive commands form
 * one entry (one time, one unsynced WriteBatch, the role a Raft log entry plays), a read sees every command queued
 * before it; then the WAL is forced once and all their outcomes are released. Under load one fsync serves many
 * requests; an idle shard pays one fsync per request.
 *
 * <p>Unlike a replicated shard, whose replies are cached on every replica and so carry leases only, a receive's
 * outcome here carries the bodies (read from the store after the entry is written).
 *
 * <p>Its listeners hear every command's effects once it is on disk, and, from the first listener on, the
 * {@link DeadlineWakeUps} a replicated shard's leader runs too: a deadline that makes messages visible is told as a
 * {@code MessagesAvailable} effect.
 */
public final class LocalShard implements PartitionService, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LocalShard.class);
    static final int MAX_GROUP = 256;

    private final ShardStore store;
    private final ShardPartitions partitions;
    private final Clock clock;
    private final LinkedBlockingQueue<Task> queue = new LinkedBlockingQueue<>();
    private final List<EffectListener> listeners = new CopyOnWriteArrayList<>();
    private final Thread thread;
    /** Where outcomes are released: callers' continuations must not run on (and slow) the shard thread. */
    private final Executor completions;
    private volatile boolean running = true;
    private long logIndex;

    /** Work for the shard thread: a command (part of the next entry), or a read run in its turn. */
    private sealed interface Task permits Command, Read {
        CompletableFuture<?> done();
    }

    private record Command(CommandCodec.Addressed command, CompletableFuture<PartitionOutcome> done) implements Task {
    }

    private record Read<T>(Function<ShardPartitions, T> read, CompletableFuture<T> done) implements Task {
        Runnable run(ShardPartitions partitions) {
            try {
                T value = read.apply(partitions);
                return () -> done.complete(value);
            } catch (StorageException e) {
                throw e;
            } catch (RuntimeException e) {
                return () -> done.completeExceptionally(e); // a bad request or a bug: nothing was changed
            }
        }
    }

    public LocalShard(ShardStore store, Clock clock) {
        this(store, clock, Runnable::run);
    }

    /**
     * @param completions runs the completion of each outcome's future (and so the caller's continuations);
     *                    {@code Runnable::run} completes on the shard thread itself
     */
    public LocalShard(ShardStore store, Clock clock, Executor completions) {
        this.store = store;
        this.partitions = new ShardPartitions(store, store.dir().getFileName().toString());
        this.clock = clock;
        this.completions = completions;
        this.logIndex = store.appliedIndex();
        this.thread = new Thread(this::run, "sluice-shard-" + store.dir().getFileName());
        this.thread.setDaemon(true);
        this.thread.start();
        this.wakeUps = new DeadlineWakeUps(new DeadlineWakeUps.Deadlines() {
            @Override
            public CompletableFuture<DeadlineWakeUps.Due> dueAt(PartitionId partition, long nowMillis) {
                return call(p -> new DeadlineWakeUps.Due(p.visibleAt(partition, nowMillis),
                        p.nextDeadlineAfter(partition, nowMillis)));
            }

            @Override
            public CompletableFuture<Map<PartitionId, Long>> nextDeadlines() {
                return call(ShardPartitions::nextDeadlines);
            }
        }, clock::nowMillis, TIMER, available -> {
            List<Effect> effects = new ArrayList<>(available.size());
            available.forEach((p, n) -> effects.add(new Effect.MessagesAvailable(p, n)));
            publish(effects);
        });
    }

    /**
     * At a partition's deadline (a delayed message due, a lease expired) nothing is applied: these tell the listeners
     * as {@code MessagesAvailable} effects, as a replicated shard's leader tells its frontends' parked awaits.
     */
    private final DeadlineWakeUps wakeUps;

    /** Every partition the store holds, with its config and retired flag. */
    public CompletableFuture<List<PartitionEngine.Stored>> storedPartitions() {
        return call(ShardPartitions::storedPartitions);
    }

    /** Reopens a partition stored here (at start-up). */
    public CompletableFuture<Boolean> openPartition(PartitionId id) {
        return call(p -> p.open(id));
    }

    @Override
    public CompletableFuture<Void> createPartition(PartitionId id, PartitionConfig config) {
        return submit(id, new PartitionCommand.Configure(config)).thenApply(o -> null);
    }

    @Override
    public CompletableFuture<PartitionOutcome> submit(PartitionId id, PartitionCommand command) {
        CompletableFuture<PartitionOutcome> done = new CompletableFuture<>();
        enqueue(new Command(new CommandCodec.Addressed(id, command), done));
        return done;
    }

    @Override
    public CompletableFuture<QueueCounts> counts(PartitionId id) {
        return call(p -> p.counts(id, clock.nowMillis()));
    }

    /** Counts and totals of every partition here (for metrics). */
    public CompletableFuture<List<PartitionStats>> stats() {
        return call(p -> p.stats(clock.nowMillis()));
    }

    /** Visible messages at this moment, counting deadlines passed since the last command. */
    @Override
    public CompletableFuture<Integer> visibleNow(PartitionId id) {
        return call(p -> p.visibleAt(id, clock.nowMillis()));
    }

    /** When the next delayed or in-flight message of a partition becomes visible (-1: none). */
    @Override
    public CompletableFuture<Long> nextDeadlineMillis(PartitionId id) {
        return call(p -> p.nextDeadlineMillis(id));
    }

    /** Dead-letter hand-offs not yet acknowledged, for every partition (what its {@code DeadLetterHandOffs} scans). */
    public CompletableFuture<List<Effect.DeadLetter>> pendingDeadLetters() {
        return call(ShardPartitions::pendingDeadLetters);
    }

    /** Configuration waits; touched on the shard thread only. */
    private final ConfigurationWaits configWaits =
            new ConfigurationWaits(TIMER);
    private volatile ConfigurationWaits.Requests configRequests =
            ConfigurationWaits.Requests.NONE;
    private static final ScheduledExecutorService TIMER =
            Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "sluice-local-shard-timer");
                t.setDaemon(true);
                return t;
            });

    /** Who configures a partition from the catalog at once when asked (the dev server's reconciler; must not block). */
    public void setConfigurationRequests(ConfigurationWaits.Requests requests) {
        this.configRequests = requests;
    }

    @Override
    public CompletableFuture<Boolean> awaitConfigured(PartitionId id, long configVersion) {
        return call(p -> configWaits.await(id, configVersion, p::configVersion)).thenCompose(configured -> {
            if (!configured.isDone()) {
                configRequests.configure(id, configVersion);
            }
            return configured.thenApplyAsync(ok -> ok, completions);
        });
    }

    /** The stored config of one partition, if the store has it. */
    public CompletableFuture<Optional<PartitionEngine.Stored>> storedPartition(PartitionId id) {
        return call(p -> p.storedPartition(id));
    }

    @Override
    public CompletableFuture<List<MoveTask>> moveTasks(PartitionId id) {
        return call(p -> p.moveTasks(id));
    }

    /** Move tasks with work to do, for every partition (what its {@code MoveTaskDriver} scans). */
    public CompletableFuture<List<MoveTask.Located>> moveTasksToDrive() {
        return call(ShardPartitions::moveTasksToDrive);
    }

    @Override
    public CompletableFuture<List<PeekedMessage>> peek(PartitionId id, int max) {
        return call(p -> p.peek(id, clock.nowMillis(), max));
    }

    @Override
    public CompletableFuture<StoredMessage> readMessage(PartitionId id, long seq) {
        return call(p -> p.readMessage(id, seq));
    }

    /**
     * Retention and window sweeps, as a replicated shard's leader does them: an {@code Expire} to each partition that
     * one would change now, and nothing to the others (an idle shard writes nothing).
     *
     * @return how many partitions were due
     */
    public CompletableFuture<Integer> sweep() {
        return call(p -> p.partitionsToSweep(clock.nowMillis())).thenApply(due -> {
            due.forEach(id -> submit(id, new PartitionCommand.Expire(1000)));
            return due.size();
        });
    }

    /** Registers for the effects of every command, and for wake-ups at deadlines (armed with the first listener). */
    @Override
    public void addListener(EffectListener listener) {
        listeners.add(listener);
        wakeUps.arm();
    }

    private void publish(List<Effect> effects) {
        if (effects.isEmpty()) {
            return;
        }
        for (EffectListener l : listeners) {
            try {
                l.onEffects(effects);
            } catch (RuntimeException e) {
                LOG.warn("effect listener failed", e);
            }
        }
    }

    /** Runs a read on the shard thread, after every command queued before it. */
    private <T> CompletableFuture<T> call(Function<ShardPartitions, T> read) {
        CompletableFuture<T> done = new CompletableFuture<>();
        enqueue(new Read<>(read, done));
        return done;
    }

    private void enqueue(Task task) {
        if (!running) {
            task.done().completeExceptionally(new IllegalStateException("shard is closed"));
            return;
        }
        queue.add(task);
    }

    private void run() {
        List<Task> group = new ArrayList<>(MAX_GROUP);
        List<Command> entry = new ArrayList<>(MAX_GROUP);
        List<Runnable> release = new ArrayList<>(MAX_GROUP);
        while (running || !queue.isEmpty()) {
            try {
                Task first = queue.poll(100, TimeUnit.MILLISECONDS);
                if (first == null) {
                    continue;
                }
                group.add(first);
                queue.drainTo(group, MAX_GROUP - 1);
                long indexBefore = logIndex;
                for (Task t : group) {
                    if (t instanceof Command c) {
                        entry.add(c);
                    } else {
                        applyEntry(entry, release); // a read sees every command queued before it
                        release.add(((Read<?>) t).run(partitions));
                    }
                }
                applyEntry(entry, release);
                if (logIndex != indexBefore) {
                    store.syncWal();
                    configWaits.check(partitions::configVersion); // configured and on disk
                }
                List<Runnable> ready = List.copyOf(release);
                completions.execute(() -> ready.forEach(Runnable::run));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (RuntimeException e) {
                // A storage failure: memory may no longer match the disk. Fail everything and stop taking work;
                // a restart rebuilds the state from what is on disk.
                LOG.error("shard {} failed; stopping it", store.dir(), e);
                running = false;
                group.forEach(t -> t.done().completeExceptionally(e));
                queue.forEach(t -> t.done().completeExceptionally(e));
                queue.clear();
                return;
            } finally {
                group.clear();
                entry.clear();
                release.clear();
            }
        }
    }

    /** Applies the commands gathered so far as one entry; their outcomes (receives with bodies) join the release. */
    private void applyEntry(List<Command> entry, List<Runnable> release) {
        if (entry.isEmpty()) {
            return;
        }
        List<CommandCodec.Addressed> batch = new ArrayList<>(entry.size());
        entry.forEach(c -> batch.add(c.command()));
        List<PartitionOutcome> outcomes = partitions.apply(batch, clock.nowMillis(), ++logIndex, false);
        for (int i = 0; i < entry.size(); i++) {
            Command c = entry.get(i);
            PartitionOutcome outcome = partitions.withBodies(c.command().partition(), outcomes.get(i));
            release.add(() -> {
                publish(outcome.effects());
                wakeUps.onApplied(outcome.effects());
                c.done().complete(outcome);
            });
        }
        entry.clear();
    }

    /** Stops after the queued work is done; the store stays open (its owner closes it). */
    @Override
    public void close() {
        running = false;
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
