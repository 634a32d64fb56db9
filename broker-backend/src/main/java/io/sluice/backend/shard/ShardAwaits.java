package io.sluice.backend.shard;

import io.sluice.backend.engine.DeadlineWakeUps;
import io.sluice.partition.Effect;
import io.sluice.partition.PartitionId;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * A shard leader's parked {@code AWAIT} queries: the frontends' long polls waiting for arrivals in any of the shard's
 * partitions. An await is answered by the first entry applied on the leader whose effects say messages are available
 * ({@link #onApplied}), at a partition's deadline that makes messages visible ({@link DeadlineWakeUps}, armed by the
 * first await since this replica last led), or empty at its timeout. Losing the lead ({@link #leadershipLost})
 * answers every parked await empty, so its frontend asks the new leader.
 */
public final class ShardAwaits implements AutoCloseable {
    /** The longest an await stays parked, whatever its query asks. */
    public static final long MAX_WAIT_MILLIS = 60_000;

    /** One thread; a cancelled timeout leaves its queue at once (an answered AWAIT's, hundreds a second under load). */
    private final ScheduledThreadPoolExecutor timer;
    private final DeadlineWakeUps wakeUps;
    private final Set<CompletableFuture<Map<PartitionId, Integer>>> awaiting = ConcurrentHashMap.newKeySet();

    /** @param nowMillis the shard's time (its leader clock) */
    public ShardAwaits(DeadlineWakeUps.Deadlines deadlines, LongSupplier nowMillis) {
        this.timer = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "sluice-shard-await");
            t.setDaemon(true);
            return t;
        });
        timer.setRemoveOnCancelPolicy(true);
        this.wakeUps = new DeadlineWakeUps(deadlines, nowMillis, timer, this::answerAll);
    }

    /** The timer the shard's other waits share (configuration waits). */
    public ScheduledExecutorService timer() {
        return timer;
    }

    /**
     * Parks an await: it completes with the partitions that have messages available and how many (empty at its
     * timeout, or when this replica stops leading).
     */
    public CompletableFuture<Map<PartitionId, Integer>> park(long timeoutMillis) {
        wakeUps.arm();
        CompletableFuture<Map<PartitionId, Integer>> parked = new CompletableFuture<>();
        awaiting.add(parked);
        long wait = Math.max(1, Math.min(timeoutMillis, MAX_WAIT_MILLIS));
        ScheduledFuture<?> timeout;
        try {
            timeout = timer.schedule(() -> answer(parked, Map.of()), wait, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException closing) {
            answer(parked, Map.of());
            return parked;
        }
        parked.whenComplete((answer, e) -> timeout.cancel(false)); // answered by an arrival: no timer left behind
        return parked;
    }

    /** Number of awaits parked now. */
    public int parked() {
        return awaiting.size();
    }

    /** The effects of an entry this replica applied as the leader: answer awaits, schedule new earliest deadlines. */
    public void onApplied(List<Effect> effects) {
        Map<PartitionId, Integer> available = new LinkedHashMap<>();
        for (Effect e : effects) {
            if (e instanceof Effect.MessagesAvailable m) {
                available.put(m.partition(), m.visibleCount()); // the entry's last count for a partition is current
            }
        }
        if (!available.isEmpty()) {
            answerAll(Map.copyOf(available));
        }
        wakeUps.onApplied(effects);
    }

    /** This replica no longer leads: its awaits are answered empty, its deadlines are the new leader's to schedule. */
    public void leadershipLost() {
        wakeUps.disarm();
        answerAll(Map.of());
    }

    private void answerAll(Map<PartitionId, Integer> available) {
        for (CompletableFuture<Map<PartitionId, Integer>> f : List.copyOf(awaiting)) {
            answer(f, available);
        }
    }

    private void answer(CompletableFuture<Map<PartitionId, Integer>> parked, Map<PartitionId, Integer> available) {
        if (awaiting.remove(parked)) {
            parked.complete(available);
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
        answerAll(Map.of());
    }
}
