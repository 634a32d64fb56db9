package io.sluice.frontend.service;

import io.sluice.common.Clock;
import io.sluice.partition.Effect;
import io.sluice.partition.PartitionId;
import io.sluice.partition.PartitionService;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Parked long polls. A waiting {@code ReceiveMessage} holds no thread: it is a future registered on its
 * partitions, completed by the first of
 * <ul>
 *   <li>a {@code MessagesAvailable} effect from one of its partitions (a send, a released lease, ...; or the
 *       shard's wake-up at a deadline that made messages visible, {@code DeadlineWakeUps}),</li>
 *   <li>the earliest deadline of a delayed or in-flight message in its partitions when it parked
 *       ({@link #wakeAt}), or</li>
 *   <li>the poll's own deadline, or shutdown.</li>
 * </ul>
 * The caller registers <em>before</em> its receive attempt, so an arrival between an empty receive and parking
 * is never missed. Completing a waiter leases nothing: the caller then tries to receive, if its client is still
 * connected.
 */
public final class LongPolls implements PartitionService.EffectListener, AutoCloseable {
    private final Clock clock;
    private final Map<PartitionId, Set<CompletableFuture<Void>>> waiters = new ConcurrentHashMap<>();
    private final ScheduledExecutorService timer;
    private volatile boolean closing;

    public LongPolls(Clock clock) {
        this.clock = clock;
        ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1,
                r -> {
                    Thread t = new Thread(r, "sluice-long-poll-timer");
                    t.setDaemon(true);
                    return t;
                });
        executor.setRemoveOnCancelPolicy(true); // a woken poll's other timers leave the queue with it
        this.timer = executor;
    }

    /** A waiter on these partitions, completed at the latest at {@code deadlineMillis}. */
    public CompletableFuture<Void> register(List<PartitionId> partitions, long deadlineMillis) {
        CompletableFuture<Void> waiter = new CompletableFuture<>();
        if (closing) {
            waiter.complete(null);
            return waiter;
        }
        for (PartitionId p : partitions) {
            waiters.computeIfAbsent(p, k -> ConcurrentHashMap.newKeySet()).add(waiter);
        }
        wakeAt(waiter, deadlineMillis);
        waiter.whenComplete((v, e) -> {
            for (PartitionId p : partitions) {
                Set<CompletableFuture<Void>> set = waiters.get(p);
                if (set != null) {
                    set.remove(waiter);
                }
            }
        });
        return waiter;
    }

    /** Also wake this waiter at {@code atMillis} (e.g. when a delayed message becomes visible). */
    public void wakeAt(CompletableFuture<Void> waiter, long atMillis) {
        long delay = Math.max(0, atMillis - clock.nowMillis());
        var scheduled = timer.schedule(() -> waiter.complete(null), delay, TimeUnit.MILLISECONDS);
        waiter.whenComplete((v, e) -> scheduled.cancel(false));
    }

    public boolean closing() {
        return closing;
    }

    public int parked() {
        return waiters.values().stream().mapToInt(Set::size).sum();
    }

    /**
     * Wakes as many of the partition's parked polls as it has visible messages (each woken poll leases at least one
     * unless another took them first), not all of them: with many consumers parked on one queue, waking every one for
     * each arrival makes each of them try, and all but a few find nothing. A count that is not known is
     * {@link Integer#MAX_VALUE} and wakes them all.
     */
    @Override
    public void onEffects(List<Effect> effects) {
        for (Effect e : effects) {
            if (e instanceof Effect.MessagesAvailable available) {
                Set<CompletableFuture<Void>> set = waiters.get(available.partition());
                if (set != null) {
                    int wake = Math.max(1, available.visibleCount());
                    for (CompletableFuture<Void> w : set) {
                        if (wake <= 0) {
                            break;
                        }
                        if (w.complete(null)) {
                            wake--;
                        }
                    }
                }
            }
        }
    }

    /** Answers every parked poll now (they return empty) and refuses to park new ones. */
    public void wakeAllForShutdown() {
        closing = true;
        waiters.values().forEach(set -> set.forEach(w -> w.complete(null)));
    }

    @Override
    public void close() {
        wakeAllForShutdown();
        timer.shutdownNow();
    }
}
