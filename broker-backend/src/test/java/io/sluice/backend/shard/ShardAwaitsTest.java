package io.sluice.backend.shard;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.backend.engine.DeadlineWakeUps;
import io.sluice.partition.Effect;
import io.sluice.partition.PartitionId;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** A shard leader's parked long polls: answered by arrivals, by a deadline that makes messages visible, or empty. */
class ShardAwaitsTest {
    private static final PartitionId P = new PartitionId(7, 0);
    private static final PartitionId Q = new PartitionId(8, 1);

    /** Partitions whose messages turn visible at a deadline (wall-clock milliseconds). */
    static final class Deadlines implements DeadlineWakeUps.Deadlines {
        final Map<PartitionId, Long> due = new ConcurrentHashMap<>();
        final Map<PartitionId, Integer> visibleThen = new ConcurrentHashMap<>();

        @Override
        public CompletableFuture<DeadlineWakeUps.Due> dueAt(PartitionId partition, long nowMillis) {
            Long at = due.get(partition);
            return CompletableFuture.completedFuture(at == null ? DeadlineWakeUps.Due.NOTHING
                    : nowMillis >= at ? new DeadlineWakeUps.Due(visibleThen.getOrDefault(partition, 0), 0)
                    : new DeadlineWakeUps.Due(0, at));
        }

        @Override
        public CompletableFuture<Map<PartitionId, Long>> nextDeadlines() {
            return CompletableFuture.completedFuture(Map.copyOf(due));
        }
    }

    @Test
    void anArrivalAnswersEveryParkedAwaitWithItsCount() throws Exception {
        try (ShardAwaits awaits = new ShardAwaits(new Deadlines(), System::currentTimeMillis)) {
            CompletableFuture<Map<PartitionId, Integer>> one = awaits.park(10_000);
            CompletableFuture<Map<PartitionId, Integer>> two = awaits.park(10_000);
            awaits.onApplied(List.of(new Effect.MessagesAvailable(P, 1), new Effect.MessagesAvailable(P, 3)));
            assertEquals(Map.of(P, 3), one.get(1, TimeUnit.SECONDS), "the entry's last count for a partition");
            assertEquals(Map.of(P, 3), two.get(1, TimeUnit.SECONDS));
            assertEquals(0, awaits.parked());
        }
    }

    /**
     * Arrivals announced while a frontend is between two awaits are not lost: its next await, parked from the cursor
     * of the answer it had, is answered at once with the partitions announced since (and only those).
     */
    @Test
    void anAwaitBehindTheAnnouncementsIsAnsweredAtOnceWithWhatItMissed() throws Exception {
        try (ShardAwaits awaits = new ShardAwaits(new Deadlines(), System::currentTimeMillis)) {
            CompletableFuture<ShardAwaits.Answer> first = awaits.park(10_000, ShardAwaits.Cursor.NONE);
            awaits.onApplied(List.of(new Effect.MessagesAvailable(P, 1)));
            ShardAwaits.Answer heard = first.get(1, TimeUnit.SECONDS);
            assertEquals(Map.of(P, 1), heard.available());
            // between the answer and the next await: two more arrivals, nobody parked
            awaits.onApplied(List.of(new Effect.MessagesAvailable(Q, 2)));
            awaits.onApplied(List.of(new Effect.MessagesAvailable(Q, 5)));
            CompletableFuture<ShardAwaits.Answer> next = awaits.park(10_000, heard.cursor());
            assertTrue(next.isDone(), "answered at once: it missed announcements");
            ShardAwaits.Answer missed = next.get();
            assertEquals(Map.of(Q, 5), missed.available(), "what came after its cursor, at the latest count");
            CompletableFuture<ShardAwaits.Answer> current = awaits.park(10_000, missed.cursor());
            assertFalse(current.isDone(), "nothing missed: it parks");
            CompletableFuture<ShardAwaits.Answer> otherLeader = awaits.park(10_000, new ShardAwaits.Cursor(
                    missed.cursor().epoch() + 1, 0));
            assertFalse(otherLeader.isDone(), "a cursor of another leader says nothing about this one: it parks");
            awaits.onApplied(List.of(new Effect.MessagesAvailable(P, 4)));
            assertEquals(Map.of(P, 4), current.get(1, TimeUnit.SECONDS).available());
            assertEquals(Map.of(P, 4), otherLeader.get(1, TimeUnit.SECONDS).available());
        }
    }

    @Test
    void withNothingArrivingAnAwaitIsAnsweredEmptyAtItsTimeout() throws Exception {
        try (ShardAwaits awaits = new ShardAwaits(new Deadlines(), System::currentTimeMillis)) {
            long start = System.nanoTime();
            CompletableFuture<Map<PartitionId, Integer>> parked = awaits.park(200);
            awaits.onApplied(List.of(new Effect.VisibleAt(P, System.currentTimeMillis() + 60_000))); // far later
            assertEquals(Map.of(), parked.get(5, TimeUnit.SECONDS));
            assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(200), "not before its timeout");
        }
    }

    @Test
    void aDeadlineKnownBeforeTheFirstAwaitWakesIt() throws Exception {
        Deadlines deadlines = new Deadlines();
        deadlines.due.put(P, System.currentTimeMillis() + 300); // a delayed message, sent before this replica led
        deadlines.visibleThen.put(P, 2);
        try (ShardAwaits awaits = new ShardAwaits(deadlines, System::currentTimeMillis)) {
            long start = System.nanoTime();
            CompletableFuture<Map<PartitionId, Integer>> parked = awaits.park(10_000);
            assertEquals(Map.of(P, 2), parked.get(5, TimeUnit.SECONDS));
            long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertTrue(waited >= 250 && waited < 5_000, "at the deadline, not at the timeout: " + waited + " ms");
        }
    }

    @Test
    void aNewEarliestDeadlineFromAnEntryWakesTheAwaitsThen() throws Exception {
        Deadlines deadlines = new Deadlines();
        try (ShardAwaits awaits = new ShardAwaits(deadlines, System::currentTimeMillis)) {
            CompletableFuture<Map<PartitionId, Integer>> parked = awaits.park(10_000);
            long at = System.currentTimeMillis() + 300;
            deadlines.due.put(Q, at);
            deadlines.visibleThen.put(Q, 1);
            awaits.onApplied(List.of(new Effect.VisibleAt(Q, at))); // a lease taken now expires then
            assertFalse(parked.isDone(), "nothing is visible yet");
            assertEquals(Map.of(Q, 1), parked.get(5, TimeUnit.SECONDS));
            assertTrue(System.currentTimeMillis() >= at, "not before the deadline");
        }
    }

    @Test
    void losingTheLeadAnswersEveryAwaitEmpty() throws Exception {
        try (ShardAwaits awaits = new ShardAwaits(new Deadlines(), System::currentTimeMillis)) {
            CompletableFuture<Map<PartitionId, Integer>> one = awaits.park(10_000);
            CompletableFuture<Map<PartitionId, Integer>> two = awaits.park(10_000);
            awaits.leadershipLost();
            assertEquals(Map.of(), one.get(1, TimeUnit.SECONDS), "its frontend asks the new leader");
            assertEquals(Map.of(), two.get(1, TimeUnit.SECONDS));
            assertEquals(0, awaits.parked());
        }
    }
}
