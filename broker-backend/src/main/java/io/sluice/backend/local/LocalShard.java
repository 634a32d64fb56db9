package io.sluice.backend.local;

import io.sluice.backend.engine.PartitionEngine;
import io.sluice.backend.storage.ShardStore;
import io.sluice.common.Clock;
import io.sluice.common.SqsError;
import io.sluice.partition.Effect;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionConfig;
import io.sluice.partition.PartitionId;
import io.sluice.partition.PartitionOutcome;
import io.sluice.partition.PartitionResponse;
import io.sluice.partition.PartitionService;
import io.sluice.partition.QueueCounts;
import io.sluice.partition.StoredMessage;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A shard on one machine, without replication: the partitions of one {@link ShardStore}, applied by one
 * thread. It is what {@code sluice dev} runs (replication factor 1) and has the same contract as a replicated
 * shard: an outcome is released only once it is forced to disk.
 *
 * <p>Group commit: the shard thread takes every queued command (up to {@link #MAX_GROUP}), applies each with an
 * unsynced WAL write, then forces the WAL once and releases all their outcomes. Under load one fsync serves many
 * requests; an idle shard pays one fsync per request.
 *
 * <p>Time: each command is stamped with the clock when it is applied, the same role the Raft leader's
 * timestamp plays in the replicated shard.
 */
public final class LocalShard implements PartitionService, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LocalShard.class);
    static final int MAX_GROUP = 256;

    private final ShardStore store;
    private final Clock clock;
    private final Map<PartitionId, PartitionEngine> partitions = new HashMap<>();
    private final LinkedBlockingQueue<Task> queue = new LinkedBlockingQueue<>();
    private final List<EffectListener> listeners = new CopyOnWriteArrayList<>();
    private final Thread thread;
    /** Where outcomes are released: callers' continuations must not run on (and slow) the shard thread. */
    private final java.util.concurrent.Executor completions;
    private volatile boolean running = true;
    private long logIndex;

    /** Work for the shard thread: runs there and returns what to release after the WAL sync. */
    private record Task(Function<LocalShard, Runnable> work, CompletableFuture<?> done) {
    }

    public LocalShard(ShardStore store, Clock clock) {
        this(store, clock, Runnable::run);
    }

    /**
     * @param completions runs the completion of each outcome's future (and so the caller's continuations);
     *                    {@code Runnable::run} completes on the shard thread itself
     */
    public LocalShard(ShardStore store, Clock clock, java.util.concurrent.Executor completions) {
        this.store = store;
        this.clock = clock;
        this.completions = completions;
        this.logIndex = store.appliedIndex();
        this.thread = new Thread(this::run, "sluice-shard-" + store.dir().getFileName());
        this.thread.setDaemon(true);
        this.thread.start();
    }

    /** Every partition the store holds, with its config and retired flag (read on the shard thread). */
    public CompletableFuture<List<PartitionEngine.Stored>> storedPartitions() {
        return call(shard -> PartitionEngine.storedPartitions(store));
    }

    /** Reopens a partition stored here (at start-up). */
    public CompletableFuture<Boolean> openPartition(PartitionId id) {
        return call(shard -> {
            boolean found = partitions.containsKey(id);
            if (!found) {
                var engine = PartitionEngine.open(store, id);
                engine.ifPresent(e -> partitions.put(id, e));
                found = engine.isPresent();
            }
            return found;
        });
    }

    @Override
    public CompletableFuture<Void> createPartition(PartitionId id, PartitionConfig config) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        enqueue(shard -> {
            PartitionEngine existing = engine(id);
            List<Effect> effects = List.of();
            if (existing == null) {
                partitions.put(id, PartitionEngine.create(store, id, config, clock.nowMillis(), ++logIndex));
            } else {
                effects = existing.apply(new PartitionCommand.Configure(config), clock.nowMillis(), ++logIndex, false)
                        .effects();
            }
            List<Effect> released = effects;
            return () -> {
                publish(released);
                done.complete(null);
            };
        }, done);
        return done;
    }

    /** Forgets a partition after its {@code Retire} (its keys are already deleted or handed off). */
    @Override
    public CompletableFuture<Void> dropPartition(PartitionId id) {
        return call(shard -> {
            partitions.remove(id);
            return null;
        });
    }

    /**
     * The partition's engine (shard thread only): opened, or read from the store; null if neither (a
     * {@code Configure} then creates it, as a replicated shard does).
     */
    private PartitionEngine engine(PartitionId id) {
        PartitionEngine engine = partitions.get(id);
        if (engine == null) {
            engine = PartitionEngine.open(store, id).orElse(null);
            if (engine != null) {
                partitions.put(id, engine);
            }
        }
        return engine;
    }

    @Override
    public CompletableFuture<PartitionOutcome> submit(PartitionId id, PartitionCommand command) {
        CompletableFuture<PartitionOutcome> done = new CompletableFuture<>();
        enqueue(shard -> {
            PartitionEngine engine = engine(id);
            PartitionOutcome outcome;
            if (engine == null && command instanceof PartitionCommand.Configure c) {
                partitions.put(id, PartitionEngine.create(store, id, c.config(), clock.nowMillis(), ++logIndex));
                outcome = new PartitionOutcome(new PartitionResponse.Done(), List.of(), List.of());
            } else {
                outcome = engine == null ? new PartitionOutcome(new PartitionResponse.Rejected(
                        SqsError.QUEUE_DOES_NOT_EXIST.failure()), List.of(), List.of())
                        : engine.apply(command, clock.nowMillis(), ++logIndex, false);
            }
            return () -> {
                publish(outcome.effects());
                done.complete(outcome);
            };
        }, done);
        return done;
    }

    @Override
    public CompletableFuture<QueueCounts> counts(PartitionId id) {
        return call(shard -> {
            PartitionEngine engine = partitions.get(id);
            return engine == null ? new QueueCounts(0, 0, 0, 0, -1) : engine.state().countsAt(clock.nowMillis());
        });
    }

    /** Counts and totals of every partition here (for metrics). */
    public CompletableFuture<List<io.sluice.backend.engine.PartitionStats>> stats() {
        return call(shard -> {
            List<io.sluice.backend.engine.PartitionStats> out = new java.util.ArrayList<>();
            partitions.forEach((id, engine) -> {
                if (!engine.state().retired()) {
                    out.add(new io.sluice.backend.engine.PartitionStats(id,
                            engine.state().countsAt(clock.nowMillis()), engine.state().totals()));
                }
            });
            return out;
        });
    }

    /** Visible messages at this moment, counting deadlines passed since the last command. */
    @Override
    public CompletableFuture<Integer> visibleNow(PartitionId id) {
        return call(shard -> {
            PartitionEngine engine = partitions.get(id);
            return engine == null ? 0 : engine.state().visibleCountAt(clock.nowMillis());
        });
    }

    /** When the next delayed or in-flight message of a partition becomes visible (-1: none). */
    @Override
    public CompletableFuture<Long> nextDeadlineMillis(PartitionId id) {
        return call(shard -> {
            PartitionEngine engine = partitions.get(id);
            return engine == null ? -1L : engine.state().nextDeadlineMillis();
        });
    }

    /** Dead-letter hand-offs not yet acknowledged, for every partition. */
    @Override
    public CompletableFuture<List<Effect.DeadLetter>> pendingDeadLetters() {
        return call(shard -> {
            List<Effect.DeadLetter> out = new ArrayList<>();
            partitions.values().forEach(e -> out.addAll(e.state().pendingDeadLetters()));
            return out;
        });
    }

    @Override
    public CompletableFuture<StoredMessage> readMessage(PartitionId id, long seq) {
        return call(shard -> {
            PartitionEngine engine = partitions.get(id);
            try {
                return engine == null ? null : engine.readMessage(seq);
            } catch (IllegalStateException e) {
                return null;
            }
        });
    }

    @Override
    public void addListener(EffectListener listener) {
        listeners.add(listener);
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

    /** Runs a read on the shard thread (no write, no sync needed beyond the group's). */
    private <T> CompletableFuture<T> call(Function<LocalShard, T> read) {
        CompletableFuture<T> done = new CompletableFuture<>();
        enqueue(shard -> {
            T value = read.apply(shard);
            return () -> done.complete(value);
        }, done);
        return done;
    }

    private void enqueue(Function<LocalShard, Runnable> work, CompletableFuture<?> done) {
        if (!running) {
            done.completeExceptionally(new IllegalStateException("shard is closed"));
            return;
        }
        queue.add(new Task(shard -> {
            try {
                return work.apply(shard);
            } catch (IllegalArgumentException | IllegalStateException e) {
                return () -> done.completeExceptionally(e); // a bad request, not a storage fault
            }
        }, done));
    }

    private void run() {
        List<Task> group = new ArrayList<>(MAX_GROUP);
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
                    release.add(t.work().apply(this));
                }
                if (logIndex != indexBefore) {
                    store.syncWal();
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
                release.clear();
            }
        }
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
