package io.sluice.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Several queues' workers on one budget: shares by weight, idle shares lent out, owed slots given back first. */
class ConcurrencyBudgetTest {
    @Test
    void sharesFollowTheWeightsByLargestRemainder() {
        ConcurrencyBudget b = new ConcurrencyBudget(8, List.of(3, 1));
        assertEquals(6, b.owed(0));
        assertEquals(2, b.owed(1));
        ConcurrencyBudget even = new ConcurrencyBudget(5, List.of(1, 1, 1));
        assertEquals(5, even.owed(0) + even.owed(1) + even.owed(2));
        assertTrue(even.owed(0) >= 1 && even.owed(1) >= 1 && even.owed(2) >= 1);
        assertThrows(IllegalArgumentException.class, () -> new ConcurrencyBudget(1, List.of(1, 1)),
                "each queue needs a slot to poll with");
    }

    @Test
    void anIdleQueuesShareIsLentOut() throws Exception {
        ConcurrencyBudget b = new ConcurrencyBudget(8, List.of(3, 1));
        Slots busy = b.slots(0);
        assertTrue(busy.acquire(0));
        assertEquals(7, busy.tryAcquireUpTo(20), "queue 1 is idle: queue 0 may take all 8");
        assertFalse(busy.acquire(10), "no more than the budget");
    }

    @Test
    void aSlotComingFreeGoesToTheQueueOwedIt() throws Exception {
        ConcurrencyBudget b = new ConcurrencyBudget(8, List.of(3, 1));
        Slots big = b.slots(0);
        Slots small = b.slots(1);
        assertTrue(big.acquire(0));
        assertEquals(7, big.tryAcquireUpTo(7)); // queue 0 borrowed queue 1's share while it was idle
        CompletableFuture<Boolean> waiting = CompletableFuture.supplyAsync(() -> {
            try {
                return small.acquire(10_000);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (b.waiting(1) == 0 && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        big.release(1);
        // whether queue 1 has taken it yet or still waits for it: the slot is its, not queue 0's
        assertEquals(0, big.tryAcquireUpTo(1), "queue 1 waits below its share");
        assertTrue(waiting.get(1, TimeUnit.SECONDS), "queue 1 got the slot");
        small.demand(true); // messages waiting: its share stays its own even while it is not asking
        big.release(1);
        assertEquals(0, big.tryAcquireUpTo(1), "queue 1 is owed it: it has messages waiting");
        assertEquals(1, small.tryAcquireUpTo(1));
        small.release(1);
        small.demand(false); // idle again: lent out
        assertEquals(1, big.tryAcquireUpTo(1));
        assertEquals(0, big.tryAcquireUpTo(1), "the budget is full again");
        small.release(1);
        assertEquals(1, big.tryAcquireUpTo(1), "nobody owed waits: queue 0 may borrow again");
    }
}
