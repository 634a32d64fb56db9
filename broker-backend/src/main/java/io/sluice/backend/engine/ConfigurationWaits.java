package io.sluice.backend.engine;

import io.sluice.partition.PartitionId;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.ToLongFunction;

/**
 * Callers waiting for partitions to be configured from a given catalog version (a frontend after it wrote the catalog:
 * CreateQueue, SetQueueAttributes, a raised partition count). The shard's primary configures partitions from the
 * catalog ({@code PartitionReconciler}); it is asked to do so at once through {@link Requests}, and each wait completes
 * when the partition's applied configuration reaches the version, or {@code false} at its timeout.
 *
 * <p>Not thread-safe: its owner calls {@link #await} and {@link #check} under the lock (or on the thread) that applies
 * commands, so a configuration applied between the check and the registration cannot be missed.
 */
public final class ConfigurationWaits {
    /** How long a wait lasts: the primary then answers "not yet" and its periodic reconcile finishes the job. */
    public static final long TIMEOUT_MILLIS = 5_000;

    /** Asks the primary's reconciler to configure a partition from the catalog now (must not block). */
    @FunctionalInterface
    public interface Requests {
        Requests NONE = (partition, version) -> { };

        void configure(PartitionId partition, long configVersion);
    }

    private record Waiter(PartitionId partition, long version, CompletableFuture<Boolean> done) {
    }

    private final List<Waiter> waiters = new ArrayList<>();
    private final ScheduledExecutorService timer;

    public ConfigurationWaits(ScheduledExecutorService timer) {
        this.timer = timer;
    }

    /**
     * @param current the partition's applied configuration version (-1: no such partition, or retired)
     * @return true once configured from {@code version} or later (at once if it is already)
     */
    public CompletableFuture<Boolean> await(PartitionId partition, long version, ToLongFunction<PartitionId> current) {
        waiters.removeIf(w -> w.done().isDone());
        if (current.applyAsLong(partition) >= version) {
            return CompletableFuture.completedFuture(true);
        }
        Waiter w = new Waiter(partition, version, new CompletableFuture<>());
        waiters.add(w);
        timer.schedule(() -> w.done().complete(false), TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
        return w.done();
    }

    /** After commands were applied: completes the waits they satisfied. */
    public void check(ToLongFunction<PartitionId> current) {
        if (!waiters.isEmpty()) {
            waiters.removeIf(w -> w.done().isDone()
                    || current.applyAsLong(w.partition()) >= w.version() && w.done().complete(true));
        }
    }
}
