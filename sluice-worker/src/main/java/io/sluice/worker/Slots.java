package io.sluice.worker;

import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * The handler slots a worker takes before a receive (one per lane it may start) and gives back as lanes end: its own
 * ({@link #of}), or its share of a budget several workers draw on ({@link ConcurrencyBudget}).
 */
interface Slots {
    /** One slot, waiting up to {@code timeoutMillis}; whether it was granted. */
    boolean acquire(long timeoutMillis) throws InterruptedException;

    /** Up to {@code n} more slots at once, without waiting; how many were granted. */
    int tryAcquireUpTo(int n);

    void release(int n);

    /** Whether other workers draw on the same slots (then an idle worker polls with one slot only). */
    boolean shared();

    /** What the last receive showed: messages waiting ({@code true}) or none. */
    default void demand(boolean messagesWaiting) {
    }

    static Slots of(int concurrency) {
        Semaphore semaphore = new Semaphore(concurrency);
        return new Slots() {
            @Override
            public boolean acquire(long timeoutMillis) throws InterruptedException {
                return semaphore.tryAcquire(timeoutMillis, TimeUnit.MILLISECONDS);
            }

            @Override
            public int tryAcquireUpTo(int n) {
                int k = Math.min(n, semaphore.availablePermits());
                return k > 0 && semaphore.tryAcquire(k) ? k : 0;
            }

            @Override
            public void release(int n) {
                if (n > 0) {
                    semaphore.release(n);
                }
            }

            @Override
            public boolean shared() {
                return false;
            }
        };
    }
}
