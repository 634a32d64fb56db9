package io.sluice.worker;

import java.util.List;

/**
 * One concurrency budget shared by the workers of several queues ({@link SluiceWorkers}), split by weight: each queue
 * is owed {@code total × weight / Σweights} slots (rounded by largest remainder). A queue may take a free slot beyond its
 * share only while every queue below its share is idle (its last receive brought nothing, and it is not waiting for a
 * slot): an idle queue's share is lent out, and comes back as the borrowers' handlers end, because a queue with
 * messages waiting gets the slots that come free until it has its share. Handlers are never interrupted to make room.
 */
final class ConcurrencyBudget {
    private final int total;
    private final int[] owed;
    private final int[] inUse;
    private final int[] waiting;
    private final boolean[] hungry;
    private int used;

    ConcurrencyBudget(int total, List<Integer> weights) {
        if (total < weights.size()) {
            throw new IllegalArgumentException("concurrency " + total + " is below the number of queues " + weights.size()
                    + ": every queue needs a slot to poll with");
        }
        this.total = total;
        int n = weights.size();
        owed = new int[n];
        inUse = new int[n];
        waiting = new int[n];
        hungry = new boolean[n];
        long sum = weights.stream().mapToLong(Integer::longValue).sum();
        double[] remainder = new double[n];
        int given = 0;
        for (int q = 0; q < n; q++) {
            double exact = (double) total * weights.get(q) / sum;
            owed[q] = (int) Math.floor(exact);
            remainder[q] = exact - owed[q];
            given += owed[q];
        }
        while (given < total) {
            int best = 0;
            for (int q = 1; q < n; q++) {
                if (remainder[q] > remainder[best]) {
                    best = q;
                }
            }
            owed[best]++;
            remainder[best] = -1;
            given++;
        }
    }

    /** The slots of queue {@code q}. */
    Slots slots(int q) {
        return new Slots() {
            @Override
            public boolean acquire(long timeoutMillis) throws InterruptedException {
                return ConcurrencyBudget.this.acquire(q, timeoutMillis);
            }

            @Override
            public int tryAcquireUpTo(int n) {
                return ConcurrencyBudget.this.tryAcquireUpTo(q, n);
            }

            @Override
            public void release(int n) {
                ConcurrencyBudget.this.release(q, n);
            }

            @Override
            public boolean shared() {
                return true;
            }

            @Override
            public void demand(boolean messagesWaiting) {
                ConcurrencyBudget.this.demand(q, messagesWaiting);
            }
        };
    }

    int owed(int q) {
        return owed[q];
    }

    synchronized int waiting(int q) {
        return waiting[q];
    }

    private boolean grantable(int q) {
        if (used >= total) {
            return false;
        }
        if (inUse[q] < owed[q]) {
            return true;
        }
        for (int j = 0; j < owed.length; j++) {
            if (j != q && (waiting[j] > 0 || hungry[j]) && inUse[j] < owed[j]) {
                return false; // a queue with messages waiting is owed the slot
            }
        }
        return true;
    }

    private void grant(int q) {
        used++;
        inUse[q]++;
    }

    synchronized boolean acquire(int q, long timeoutMillis) throws InterruptedException {
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000L;
        waiting[q]++;
        try {
            while (!grantable(q)) {
                long left = (deadline - System.nanoTime()) / 1_000_000L;
                if (left <= 0) {
                    return false;
                }
                wait(left);
            }
            grant(q);
            return true;
        } finally {
            waiting[q]--;
        }
    }

    synchronized int tryAcquireUpTo(int q, int n) {
        int k = 0;
        while (k < n && grantable(q)) {
            grant(q);
            k++;
        }
        return k;
    }

    synchronized void demand(int q, boolean messagesWaiting) {
        hungry[q] = messagesWaiting;
        if (!messagesWaiting) {
            notifyAll(); // what it was owed may be lent out now
        }
    }

    synchronized void release(int q, int n) {
        if (n <= 0) {
            return;
        }
        used -= n;
        inUse[q] -= n;
        notifyAll();
    }
}
