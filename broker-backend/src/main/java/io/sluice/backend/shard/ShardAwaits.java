package io.sluice.backend.shard;

import io.sluice.backend.engine.DeadlineWakeUps;
import io.sluice.partition.Effect;
import io.sluice.partition.PartitionId;
import java.util.Iterator;
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
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * A shard leader's parked {@code AWAIT} queries: the frontends' long polls waiting for arrivals in any of the shard's
 * partitions. An await is answered by the first entry applied on the leader whose effects say messages are available
 * ({@link #onApplied}), at a partition's deadline that makes messages visible ({@link DeadlineWakeUps}, armed by the
 * first await since this replica last led), or empty at its timeout. Losing the lead ({@link #leadershipLost})
 * answers every parked await empty, so its frontend asks the new leader.
 *
 * <p>Nothing announced is lost between a frontend's awaits: every announcement has a number ({@link Cursor}), each
 * answer says the number it reached, and a frontend parks its next await from there. An await whose cursor is behind
 * (arrivals came while the frontend was between two awaits) is answered at once with the partitions announced since.
 */
public final class ShardAwaits implements AutoCloseable {
    /** The longest an await stays parked, whatever its query asks. */
    public static final long MAX_WAIT_MILLIS = 60_000;
    /**
     * Partitions whose last announcement is remembered for awaits that are behind (those announced longest ago are
     * forgotten: a reader further behind than that hears of the latest ones only).
     */
    static final int REMEMBERED = 4_096;

    /**
     * Where a frontend's view of a leader's announcements stands: the leader's tenure ({@code epoch}, this object's
     * own random number) and the last announcement it has heard of there.
     */
    public record Cursor(long epoch, long seq) {
        /** No announcement heard yet (an await with it is parked as before cursors). */
        public static final Cursor NONE = new Cursor(0, -1);
    }

    /** An answer: the partitions with messages available and how many each, and the cursor it brings its reader to. */
    public record Answer(Map<PartitionId, Integer> available, Cursor cursor) {
    }

    /** One thread; a cancelled timeout leaves its queue at once (an answered AWAIT's, hundreds a second under load). */
    private final ScheduledThreadPoolExecutor timer;
    private final DeadlineWakeUps wakeUps;
    private final Set<CompletableFuture<Answer>> awaiting = ConcurrentHashMap.newKeySet();
    private final long epoch = ThreadLocalRandom.current().nextLong(1, Long.MAX_VALUE);
    /** Guarded by this: the last announcement's number and, per partition, its last announcement (number, count). */
    private long seq;
    private final LinkedHashMap<PartitionId, long[]> announced = new LinkedHashMap<>();

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
        return park(timeoutMillis, Cursor.NONE).thenApply(Answer::available);
    }

    /**
     * Parks an await from {@code since}: answered at once with what was announced after it when this leader
     * announced anything since (its reader was between two awaits then), else as {@link #park(long)}.
     */
    public CompletableFuture<Answer> park(long timeoutMillis, Cursor since) {
        wakeUps.arm();
        CompletableFuture<Answer> parked = new CompletableFuture<>();
        synchronized (this) { // against answerAll: an announcement is either before the check or after the parking
            Answer missed = since(since);
            if (missed != null) {
                parked.complete(missed);
                return parked;
            }
            awaiting.add(parked);
        }
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

    /** Caller holds the lock. What was announced after {@code since} on this leader, or null if nothing was. */
    private Answer since(Cursor since) {
        if (since.epoch() != epoch || since.seq() >= seq) {
            return null; // another leader's (or none): nothing here is known to be missed
        }
        Map<PartitionId, Integer> missed = new LinkedHashMap<>(); // never empty: the last announcement is remembered
        announced.forEach((p, last) -> {
            if (last[0] > since.seq()) {
                missed.put(p, (int) last[1]);
            }
        });
        return new Answer(Map.copyOf(missed), new Cursor(epoch, seq));
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
        List<CompletableFuture<Answer>> parked;
        Answer answer;
        synchronized (this) {
            if (!available.isEmpty()) {
                seq++;
                available.forEach((p, count) -> {
                    announced.remove(p); // to the end: the map is in order of last announcement
                    announced.put(p, new long[] {seq, count});
                });
                for (Iterator<long[]> it = announced.values().iterator(); announced.size() > REMEMBERED; ) {
                    it.next();
                    it.remove();
                }
            }
            answer = new Answer(available, new Cursor(epoch, seq));
            parked = List.copyOf(awaiting);
            awaiting.clear();
        }
        for (CompletableFuture<Answer> f : parked) {
            f.complete(answer);
        }
    }

    private void answer(CompletableFuture<Answer> parked, Map<PartitionId, Integer> available) {
        Cursor at;
        synchronized (this) {
            if (!awaiting.remove(parked)) {
                return;
            }
            at = new Cursor(epoch, seq);
        }
        parked.complete(new Answer(available, at));
    }

    @Override
    public void close() {
        timer.shutdownNow();
        answerAll(Map.of());
    }
}
