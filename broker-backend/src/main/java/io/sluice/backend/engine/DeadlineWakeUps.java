package io.sluice.backend.engine;

import io.sluice.partition.Effect;
import io.sluice.partition.PartitionId;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * A shard primary's wake-ups at its partitions' deadlines. When a delayed message comes due or a lease expires,
 * nothing is applied, so no {@code MessagesAvailable} effect announces it; this schedules one timer per partition at
 * its earliest deadline and, when it fires, tells {@code visible} how many messages are visible then (if any) and
 * schedules the partition's next deadline. A new earliest deadline reaches it as a {@link Effect.VisibleAt} effect of
 * an applied command ({@link #onApplied}).
 *
 * <p>Both shards run it: a replicated shard's leader answers its frontends' parked {@code AWAIT}s with what it tells,
 * a one-replica shard in {@code sluice dev} publishes it to its listeners as {@code MessagesAvailable} effects. It
 * runs only while armed ({@link #arm}: a leader once someone waits, dev from its first listener), so an idle replica
 * keeps no timers; arming learns every open partition's deadline, since the schedule of a previous leader is gone
 * with it.
 */
public final class DeadlineWakeUps {
    /** What the wake-ups read from the shard's partitions, in its own turn (nothing once the shard is closed). */
    public interface Deadlines {
        /** A partition at {@code nowMillis}: its visible messages and its first deadline after that moment. */
        CompletableFuture<Due> dueAt(PartitionId partition, long nowMillis);

        /** Every open partition's earliest deadline. */
        CompletableFuture<Map<PartitionId, Long>> nextDeadlines();
    }

    /** A partition at a moment: its visible messages, and its first deadline after that moment (0: none). */
    public record Due(int visible, long nextDeadline) {
        public static final Due NOTHING = new Due(0, 0);
    }

    private final Deadlines deadlines;
    private final LongSupplier nowMillis;
    private final ScheduledExecutorService timer;
    private final Consumer<Map<PartitionId, Integer>> visible;
    /** Per partition, the deadline a wake-up is scheduled for. */
    private final Map<PartitionId, Long> scheduled = new ConcurrentHashMap<>();
    private volatile boolean armed;

    /**
     * @param nowMillis the shard's time
     * @param timer     where the wake-ups run (one thread; they only schedule and read)
     * @param visible   told the partition and its visible count at a deadline that made messages visible
     */
    public DeadlineWakeUps(Deadlines deadlines, LongSupplier nowMillis, ScheduledExecutorService timer,
                           Consumer<Map<PartitionId, Integer>> visible) {
        this.deadlines = deadlines;
        this.nowMillis = nowMillis;
        this.timer = timer;
        this.visible = visible;
    }

    /** Starts waking up: learns every open partition's earliest deadline (once until {@link #disarm}). */
    public void arm() {
        synchronized (this) {
            if (armed) {
                return;
            }
            armed = true;
        }
        deadlines.nextDeadlines().thenAccept(next -> next.forEach(this::schedule));
    }

    /** Stops (this replica no longer leads): scheduled wake-ups fire and do nothing. */
    public void disarm() {
        armed = false;
        scheduled.clear();
    }

    /** The effects of a command applied on this primary: a partition's new earliest deadline is scheduled. */
    public void onApplied(List<Effect> effects) {
        for (Effect e : effects) {
            if (e instanceof Effect.VisibleAt at) {
                schedule(at.partition(), at.atMillis());
            }
        }
    }

    private void schedule(PartitionId partition, long atMillis) {
        if (!armed) {
            return;
        }
        Long[] replaced = new Long[1];
        scheduled.compute(partition, (p, at) -> {
            replaced[0] = at;
            return at != null && at <= atMillis ? at : atMillis;
        });
        if (replaced[0] != null && replaced[0] <= atMillis) {
            return; // an earlier wake-up is coming, and schedules the next deadline when it fires
        }
        long delay = Math.max(0, atMillis - nowMillis.getAsLong());
        try {
            timer.schedule(() -> wakeUp(partition, atMillis), delay, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException closing) {
            scheduled.remove(partition, atMillis);
        }
    }

    /** A partition's deadline came: tell if messages are visible, then schedule its next deadline. */
    private void wakeUp(PartitionId partition, long atMillis) {
        if (!scheduled.remove(partition, atMillis) || !armed) {
            return; // superseded by an earlier one (which took over the chain), or disarmed
        }
        long now = Math.max(atMillis, nowMillis.getAsLong());
        deadlines.dueAt(partition, now).thenAccept(due -> {
            if (due.visible() > 0) {
                visible.accept(Map.of(partition, due.visible()));
            }
            if (due.nextDeadline() > 0) {
                schedule(partition, due.nextDeadline());
            }
        });
    }
}
