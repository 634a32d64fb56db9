package io.sluice.worker;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * Workers of several queues with one concurrency budget: at most {@code concurrency} handlers run at once over all of
 * them, shared by weight. Each queue is owed {@code concurrency × weight / Σweights} slots; a queue may use slots
 * another leaves idle, but while a queue below its share waits for a slot, the slots that come free go to it, so under
 * load the shares follow the weights. A queue whose last receive brought nothing polls holding a single slot. Every
 * queue keeps its own settings (handler, visibility, back-off, breaker, metrics tag), as in {@link SluiceWorker}.
 *
 * <pre>{@code
 * try (SluiceWorkers workers = SluiceWorkers.builder(16)
 *         .add(SluiceWorker.builder(sqs, ordersUrl, orders::handle), 3)
 *         .add(SluiceWorker.builder(sqs, emailsUrl, emails::handle), 1)
 *         .build().start()) { ... }
 * }</pre>
 */
public final class SluiceWorkers implements AutoCloseable {
    private final List<SluiceWorker> workers;

    private SluiceWorkers(List<SluiceWorker> workers) {
        this.workers = List.copyOf(workers);
    }

    /** @param concurrency handlers running at once over every queue (at least one per queue) */
    public static Builder builder(int concurrency) {
        return new Builder(concurrency);
    }

    public SluiceWorkers start() {
        workers.forEach(SluiceWorker::start);
        return this;
    }

    /** The workers, in the order they were added. */
    public List<SluiceWorker> workers() {
        return workers;
    }

    /** Closes every worker at once (each as {@link SluiceWorker#close()}), so their grace periods overlap. */
    @Override
    public void close() {
        CompletableFuture.allOf(workers.stream().map(w -> CompletableFuture.runAsync(w::close))
                .toArray(CompletableFuture[]::new)).join();
    }

    public static final class Builder {
        private final int concurrency;
        private final List<SluiceWorker.Builder> queues = new ArrayList<>();
        private final List<Integer> weights = new ArrayList<>();

        private Builder(int concurrency) {
            if (concurrency < 1) {
                throw new IllegalArgumentException("concurrency must be at least 1");
            }
            this.concurrency = concurrency;
        }

        /**
         * A queue's worker (its own concurrency setting is replaced by the shared budget) and its weight (1 or more).
         */
        public Builder add(SluiceWorker.Builder worker, int weight) {
            if (weight < 1) {
                throw new IllegalArgumentException("weight must be at least 1: " + weight);
            }
            queues.add(Objects.requireNonNull(worker));
            weights.add(weight);
            return this;
        }

        public SluiceWorkers build() {
            if (queues.isEmpty()) {
                throw new IllegalStateException("no queue added");
            }
            ConcurrencyBudget budget = new ConcurrencyBudget(concurrency, weights);
            List<SluiceWorker> built = new ArrayList<>();
            for (int q = 0; q < queues.size(); q++) {
                built.add(queues.get(q).concurrency(concurrency).slots(budget.slots(q)).build());
            }
            return new SluiceWorkers(built);
        }
    }
}
