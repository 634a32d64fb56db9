package io.sluice.backend.shard;

import io.sluice.backend.engine.ShardPartitions;
import io.sluice.backend.storage.ShardStore;
import io.sluice.partition.CommandCodec;
import io.sluice.partition.Effect;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionId;
import io.sluice.partition.PartitionOutcome;
import io.sluice.partition.PartitionResponse;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The log under a one-replica shard in this process ({@code sluice dev}): a group-commit thread over the shard's
 * {@link ShardCore}, whose store keeps a synced WAL. It is only the log; applying, answering queries, parking awaits
 * and the leader's housekeeping are the core's, as under a Raft log.
 *
 * <p>Group commit: the thread takes every queued task (up to {@link #MAX_GROUP}); consecutive commands form one
 * entry (one stamp, one unsynced WriteBatch with the entry's index, the role a Raft log entry plays) and a read sees
 * every command queued before it; then the WAL is forced once, the core is told the entries are durable (the same
 * call a Raft leader makes at commit) and their outcomes are released. Under load one fsync serves many requests; an
 * idle shard pays one fsync per request. An outcome is never released before it is on disk.
 *
 * <p>A receive's outcome carries its bodies, read from the store right after its entry is written, as a Raft leader's
 * reply to a client in its own process does. A storage failure fails every waiting request and stops the log
 * (memory may no longer match the disk); a restart rebuilds the state from what is on disk.
 */
public final class LocalLog implements ShardChannel {
    private static final Logger LOG = LoggerFactory.getLogger(LocalLog.class);
    static final int MAX_GROUP = 256;

    private final ShardCore core;
    private final LinkedBlockingQueue<Task> queue = new LinkedBlockingQueue<>();
    private final Thread thread;
    /** Where outcomes are released: callers' continuations must not run on (and slow) the log thread. */
    private final Executor completions;
    private volatile boolean running = true;
    private long logIndex;
    private long entries;
    private long commands;

    /** Work for the log thread: a command (part of the next entry), or a read run in its turn. */
    private sealed interface Task permits Command, Read {
        CompletableFuture<?> done();
    }

    private record Command(CommandCodec.Addressed command, CompletableFuture<PartitionOutcome> done) implements Task {
    }

    private record Read(byte[] query, CompletableFuture<byte[]> done) implements Task {
    }

    /**
     * @param core        an open shard whose store has {@link ShardStore.Durability#SYNC_WAL}
     * @param completions runs the completion of each outcome's future (and so the caller's continuations)
     */
    public LocalLog(ShardCore core, Executor completions) {
        this.core = core;
        this.completions = completions;
        this.logIndex = core.appliedIndex();
        this.thread = new Thread(this::run, "sluice-local-log-" + core.name());
        this.thread.setDaemon(true);
        this.thread.start();
    }

    /** The shard this log orders entries for. */
    public ShardCore core() {
        return core;
    }

    @Override
    public CompletableFuture<PartitionOutcome> submit(PartitionId partition, PartitionCommand command) {
        CompletableFuture<PartitionOutcome> done = new CompletableFuture<>();
        enqueue(new Command(new CommandCodec.Addressed(partition, command), done));
        return done;
    }

    /** Runs in the log's turn, after every command queued before it; a parked query completes on its own. */
    @Override
    public CompletableFuture<byte[]> read(byte[] query) {
        CompletableFuture<byte[]> done = new CompletableFuture<>();
        enqueue(new Read(query, done));
        return done;
    }

    @Override
    public CompletableFuture<byte[]> probe(byte[] query) {
        return read(query);
    }

    @Override
    public boolean ledHere() {
        return true; // the one replica is in this process
    }

    @Override
    public synchronized long[] stats() {
        return new long[] {entries, commands};
    }

    private void enqueue(Task task) {
        if (!running) {
            task.done().completeExceptionally(new IllegalStateException("shard " + core.name() + " is closed"));
            return;
        }
        queue.add(task);
    }

    private void run() {
        List<Task> group = new ArrayList<>(MAX_GROUP);
        List<Command> entry = new ArrayList<>(MAX_GROUP);
        List<Runnable> release = new ArrayList<>(MAX_GROUP);
        List<Effect> effects = new ArrayList<>();
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
                        applyEntry(entry, release, effects); // a read sees every command queued before it
                        release.add(read((Read) t));
                    }
                }
                applyEntry(entry, release, effects);
                if (logIndex != indexBefore) {
                    core.syncWal();
                    core.durable(List.copyOf(effects), true); // on disk: the same call a Raft leader makes at commit
                }
                List<Runnable> ready = List.copyOf(release);
                completions.execute(() -> ready.forEach(Runnable::run));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (RuntimeException e) {
                // A storage failure: memory may no longer match the disk. Fail everything and stop taking work;
                // a restart rebuilds the state from what is on disk.
                LOG.error("shard {} failed; stopping its log", core.name(), e);
                running = false;
                group.forEach(t -> t.done().completeExceptionally(e));
                queue.forEach(t -> t.done().completeExceptionally(e));
                queue.clear();
                return;
            } finally {
                group.clear();
                entry.clear();
                release.clear();
                effects.clear();
            }
        }
    }

    /** A read's answer, released with the group (or when a parked one completes): never on the log thread. */
    private Runnable read(Read r) {
        CompletableFuture<byte[]> answer;
        try {
            answer = core.query(ByteBuffer.wrap(r.query()));
        } catch (RuntimeException e) { // a bad query: nothing was changed
            answer = CompletableFuture.failedFuture(e);
        }
        CompletableFuture<byte[]> a = answer;
        return () -> a.whenCompleteAsync((value, error) -> {
            if (error != null) {
                r.done().completeExceptionally(error);
            } else {
                r.done().complete(value);
            }
        }, completions);
    }

    /** Applies the commands gathered so far as one entry; their outcomes (receives with bodies) join the release. */
    private void applyEntry(List<Command> entry, List<Runnable> release, List<Effect> effects) {
        if (entry.isEmpty()) {
            return;
        }
        List<CommandCodec.Addressed> batch = new ArrayList<>(entry.size());
        entry.forEach(c -> batch.add(c.command()));
        List<PartitionOutcome> outcomes = core.apply(batch, core.stamp(), ++logIndex);
        synchronized (this) {
            entries++;
            commands += batch.size();
        }
        effects.addAll(ShardPartitions.effectsOf(outcomes));
        for (int i = 0; i < entry.size(); i++) {
            Command c = entry.get(i);
            PartitionOutcome applied = outcomes.get(i);
            PartitionOutcome outcome = applied.response() instanceof PartitionResponse.Received r
                    && !r.deliveries().isEmpty() ? core.withBodies(c.command().partition(), applied) : applied;
            release.add(() -> c.done().complete(outcome));
        }
        entry.clear();
    }

    /** Stops after the queued work is done; the core stays open (its owner closes it). */
    @Override
    public void close() {
        running = false;
        if (Thread.currentThread() != thread) {
            try {
                thread.join(10_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
