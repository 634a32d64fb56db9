package io.sluice.worker;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Metrics;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.services.sqs.SqsAsyncClient;
import software.amazon.awssdk.services.sqs.model.ChangeMessageVisibilityBatchRequestEntry;
import software.amazon.awssdk.services.sqs.model.ChangeMessageVisibilityBatchResponse;
import software.amazon.awssdk.services.sqs.model.DeleteMessageBatchRequestEntry;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.MessageSystemAttributeName;
import software.amazon.awssdk.services.sqs.model.ReceiveMessageResponse;

/**
 * A consumer of one queue that works against Amazon SQS and Sluice alike (the AWS SDK for Java v2, nothing else):
 *
 * <ul>
 *   <li><b>Bounded concurrency.</b> At most {@code concurrency} handlers run at once, and a receive asks for no more
 *       messages than there are free handler slots: the worker never holds a message it cannot start.</li>
 *   <li><b>Visibility heartbeat.</b> While a handler runs, its message's visibility is extended ahead of expiry (once
 *       a third of the lease has run, checked every sixth of the timeout), up to {@code maxExtension} after the
 *       receive; a handler that takes longer than the timeout is not redelivered to another worker meanwhile.</li>
 *   <li><b>Failures back off.</b> A handler that throws leaves its message undeleted (the queue's redrive policy
 *       decides when it is dead-lettered) and makes it visible again after a jittered exponential {@link Backoff}.</li>
 *   <li><b>Batched deletes</b> of handled messages, up to 10 per request, flushed every 50 ms.</li>
 *   <li><b>Circuit breaker</b> (resilience4j) around the handler: failures open it; while open the worker stops
 *       receiving and gives back (visibility 0) what it holds but has not started; half-open, it receives one message
 *       at a time as probes, and closes when they succeed.</li>
 *   <li><b>Graceful shutdown</b> ({@link #close()}): stop receiving (an outstanding long poll is waited for, and what
 *       it brings is given back), let running handlers finish within the grace period, give back the rest with
 *       visibility 0, flush the deletes.</li>
 *   <li><b>Metrics</b> (Micrometer, tag {@code queue}): {@code sluice.worker.processed}, {@code .failed},
 *       {@code .extended}, {@code .released}, {@code .handler} (latency), {@code .inflight},
 *       {@code .breaker.state} (0 closed, 1 open, 2 half-open).</li>
 * </ul>
 */
public final class SluiceWorker implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(SluiceWorker.class);
    static final long DELETE_FLUSH_MILLIS = 50;
    private static final int BATCH = 10;

    private final SqsAsyncClient sqs;
    private final String queueUrl;
    private final MessageHandler handler;
    private final int concurrency;
    private final int visibilitySeconds;
    private final Duration maxExtension;
    private final int waitSeconds;
    private final Backoff backoff;
    private final CircuitBreaker breaker;
    private final Duration shutdownGrace;

    private final Semaphore slots;
    private final ExecutorService handlers;
    private final ScheduledExecutorService timers;
    private final Thread poller;
    /** By a key of each receive's own (one message received twice while its first handler runs is held twice). */
    private final Map<Long, Held> held = new ConcurrentHashMap<>();
    private final java.util.concurrent.atomic.AtomicLong heldKeys = new java.util.concurrent.atomic.AtomicLong();
    private final ConcurrentLinkedQueue<Held> toDelete = new ConcurrentLinkedQueue<>();
    private final List<CompletableFuture<?>> calls = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final AtomicBoolean started = new AtomicBoolean();
    private volatile boolean running;

    private final Counter processed;
    private final Counter failed;
    private final Counter extended;
    private final Counter released;
    private final Timer handlerLatency;

    /** One message this worker holds, from its receive until it is deleted, backed off or given back. */
    private static final class Held {
        final long key;
        final Message message;
        /** When the receive was sent: the server's lease began after it, so the lease is counted from here. */
        final long receivedNanos;
        volatile long leaseEndNanos;
        /**
         * The visibility the worker left it with when it gave it back (0) or backed it off, or -1 while it runs: a
         * heartbeat extension that lands after that is undone with this value.
         */
        volatile int finalVisibility = -1;
        private final AtomicBoolean settled = new AtomicBoolean();

        Held(long key, Message message, long receiveSentNanos, int visibilitySeconds) {
            this.key = key;
            this.message = message;
            this.receivedNanos = receiveSentNanos;
            this.leaseEndNanos = receiveSentNanos + TimeUnit.SECONDS.toNanos(visibilitySeconds);
        }

        /** True for the one caller that decides this message's outcome. */
        boolean settle() {
            return settled.compareAndSet(false, true);
        }

        int receiveCount() {
            String n = message.attributes().get(MessageSystemAttributeName.APPROXIMATE_RECEIVE_COUNT);
            try {
                return n == null ? 1 : Integer.parseInt(n);
            } catch (NumberFormatException e) {
                return 1;
            }
        }
    }

    private SluiceWorker(Builder b) {
        this.sqs = b.sqs;
        this.queueUrl = b.queueUrl;
        this.handler = b.handler;
        this.concurrency = b.concurrency;
        this.visibilitySeconds = (int) b.visibilityTimeout.toSeconds();
        this.maxExtension = b.maxExtension;
        this.waitSeconds = (int) b.waitTime.toSeconds();
        this.backoff = b.backoff;
        String queue = queueUrl.substring(queueUrl.lastIndexOf('/') + 1);
        this.breaker = b.breaker != null ? b.breaker : CircuitBreaker.of("sluice-worker-" + queue,
                CircuitBreakerConfig.custom()
                        .slidingWindowType(CircuitBreakerConfig.SlidingWindowType.COUNT_BASED)
                        .slidingWindowSize(20).minimumNumberOfCalls(10).failureRateThreshold(50)
                        .waitDurationInOpenState(Duration.ofSeconds(30)).permittedNumberOfCallsInHalfOpenState(3)
                        .automaticTransitionFromOpenToHalfOpenEnabled(true).build());
        this.shutdownGrace = b.shutdownGrace;
        this.slots = new Semaphore(concurrency);
        this.handlers = Executors.newFixedThreadPool(concurrency, named("sluice-worker-" + queue + "-handler"));
        // two: the heartbeat is never queued behind a delete flush
        this.timers = Executors.newScheduledThreadPool(2, named("sluice-worker-" + queue + "-timer"));
        this.poller = named("sluice-worker-" + queue + "-poller").newThread(this::poll);

        MeterRegistry registry = b.registry;
        Tags tags = Tags.of("queue", queue);
        processed = Counter.builder("sluice.worker.processed").description("messages handled and deleted")
                .tags(tags).register(registry);
        failed = Counter.builder("sluice.worker.failed").description("handler failures (message backed off)")
                .tags(tags).register(registry);
        extended = Counter.builder("sluice.worker.extended").description("visibility extensions by the heartbeat")
                .tags(tags).register(registry);
        released = Counter.builder("sluice.worker.released")
                .description("messages given back unhandled (visibility 0): breaker open or shutdown")
                .tags(tags).register(registry);
        handlerLatency = Timer.builder("sluice.worker.handler").description("handler run time")
                .tags(tags).register(registry);
        Gauge.builder("sluice.worker.inflight", held, Map::size).description("messages held")
                .tags(tags).register(registry);
        Gauge.builder("sluice.worker.breaker.state", breaker, SluiceWorker::stateCode)
                .description("0 closed, 1 open, 2 half-open, 3 disabled or forced").tags(tags).register(registry);
    }

    public static Builder builder(SqsAsyncClient sqs, String queueUrl, MessageHandler handler) {
        return new Builder(sqs, queueUrl, handler);
    }

    /** Starts receiving. */
    public SluiceWorker start() {
        if (!started.compareAndSet(false, true)) {
            throw new IllegalStateException("already started");
        }
        running = true;
        long tick = Math.max(100, TimeUnit.SECONDS.toMillis(visibilitySeconds) / 6);
        timers.scheduleWithFixedDelay(this::heartbeat, tick, tick, TimeUnit.MILLISECONDS);
        timers.scheduleWithFixedDelay(this::flushDeletes, DELETE_FLUSH_MILLIS, DELETE_FLUSH_MILLIS,
                TimeUnit.MILLISECONDS);
        poller.start();
        return this;
    }

    public CircuitBreaker circuitBreaker() {
        return breaker;
    }

    /** Messages held now (running, or received and about to run). */
    public int inFlight() {
        return held.size();
    }

    // ---- receiving -------------------------------------------------------------------------------------------

    private void poll() {
        while (running) {
            try {
                pollOnce();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (RuntimeException e) { // never let the poller die: the worker would stop receiving for good
                LOG.warn("the poller of {} failed; it goes on: {}", queueUrl, e.toString());
                pause(1000);
            }
        }
    }

    private void pollOnce() throws InterruptedException {
        CircuitBreaker.State state = breaker.getState();
        if (state == CircuitBreaker.State.OPEN) {
            // a breaker without automatic transition leaves OPEN only when asked for a permission after its wait
            if (!breaker.tryAcquirePermission()) {
                pause(200);
                return;
            }
            breaker.releasePermission(); // half-open now: the probe is the receive below
            state = breaker.getState();
        }
        if (state == CircuitBreaker.State.FORCED_OPEN
                || (state == CircuitBreaker.State.HALF_OPEN && !held.isEmpty())) {
            pause(200); // forced open: receive nothing; half-open: one probe at a time
            return;
        }
        // a free handler slot, then as many more as are free (a receive takes up to 10)
        if (!slots.tryAcquire(200, TimeUnit.MILLISECONDS)) {
            return;
        }
        int want = 1;
        int more = state == CircuitBreaker.State.HALF_OPEN ? 0 : Math.min(BATCH - 1, slots.availablePermits());
        if (more > 0 && slots.tryAcquire(more)) {
            want += more;
        }
        List<Message> got;
        int asked = want;
        long sentNanos = System.nanoTime();
        try {
            ReceiveMessageResponse response = sqs.receiveMessage(r -> r.queueUrl(queueUrl)
                    .maxNumberOfMessages(asked).waitTimeSeconds(waitSeconds).visibilityTimeout(visibilitySeconds)
                    .messageSystemAttributeNames(MessageSystemAttributeName.APPROXIMATE_RECEIVE_COUNT)
                    .messageAttributeNames("All")).get();
            got = response.messages();
        } catch (InterruptedException e) {
            slots.release(want);
            throw e;
        } catch (ExecutionException | RuntimeException e) {
            slots.release(want);
            LOG.warn("receive from {} failed: {}", queueUrl, (e instanceof ExecutionException ? e.getCause() : e)
                    .toString());
            pause(1000);
            return;
        }
        slots.release(Math.max(0, want - got.size()));
        for (Message m : got) {
            Held h = new Held(heldKeys.incrementAndGet(), m, sentNanos, visibilitySeconds);
            held.put(h.key, h);
            if (!running) {
                giveBack(List.of(h)); // shutting down: what the last poll brought goes back at once
                continue;
            }
            try {
                handlers.execute(() -> run(h));
            } catch (java.util.concurrent.RejectedExecutionException closed) {
                giveBack(List.of(h));
            }
        }
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    // ---- handling --------------------------------------------------------------------------------------------

    private void run(Held h) {
        if (!running || !breaker.tryAcquirePermission()) {
            giveBack(List.of(h)); // shutting down, or the breaker opened since the receive: not started
            return;
        }
        long start = System.nanoTime();
        try {
            handler.handle(h.message);
            long took = System.nanoTime() - start;
            breaker.onSuccess(took, TimeUnit.NANOSECONDS);
            handlerLatency.record(took, TimeUnit.NANOSECONDS);
            if (h.settle()) {
                processed.increment();
                toDelete.add(h);
                if (toDelete.size() >= BATCH) {
                    try {
                        timers.execute(this::flushDeletes);
                    } catch (java.util.concurrent.RejectedExecutionException closed) {
                        // shutting down: close() flushes what is left
                    }
                }
            }
        } catch (Throwable t) {
            long took = System.nanoTime() - start;
            handlerLatency.record(took, TimeUnit.NANOSECONDS);
            if (!running && (t instanceof InterruptedException || Thread.currentThread().isInterrupted())) {
                breaker.releasePermission(); // stopped by the shutdown, not a failure of its downstream
                giveBack(List.of(h));
                return;
            }
            breaker.onError(took, TimeUnit.NANOSECONDS, t);
            if (h.settle()) {
                failed.increment();
                int seconds = backoff.visibilitySeconds(h.receiveCount());
                h.finalVisibility = seconds;
                LOG.debug("message {} failed (receive {}), visible again in {} s: {}", h.message.messageId(),
                        h.receiveCount(), seconds, t.toString());
                track(sqs.changeMessageVisibility(r -> r.queueUrl(queueUrl)
                        .receiptHandle(h.message.receiptHandle()).visibilityTimeout(seconds))
                        .whenComplete((ok, e) -> {
                            if (e != null) {
                                LOG.warn("backing off message {} failed: {}", h.message.messageId(), e.toString());
                            }
                        }));
            }
        } finally {
            done(h);
        }
    }

    private void done(Held h) {
        if (held.remove(h.key, h)) {
            slots.release();
        }
    }

    /** Makes unstarted or abandoned messages visible again at once (visibility 0). */
    private CompletableFuture<?> giveBack(List<Held> messages) {
        List<Held> mine = messages.stream().filter(Held::settle).toList();
        mine.forEach(h -> h.finalVisibility = 0);
        messages.forEach(this::done);
        if (mine.isEmpty()) {
            return CompletableFuture.completedFuture(null);
        }
        released.increment(mine.size());
        return changeVisibility(mine, 0);
    }

    // ---- heartbeat and deletes ---------------------------------------------------------------------------------

    /**
     * Extends the leases a third of whose timeout has passed (checked every sixth: an extension goes out with at
     * least half the lease left), for messages held less than maxExtension.
     */
    private void heartbeat() {
        try {
            long now = System.nanoTime();
            long third = TimeUnit.SECONDS.toNanos(visibilitySeconds) / 3;
            List<Held> due = new ArrayList<>();
            for (Held h : held.values()) {
                if (!h.settled.get() && h.leaseEndNanos - now <= 2 * third
                        && now - h.receivedNanos < maxExtension.toNanos()) {
                    due.add(h);
                }
            }
            if (!due.isEmpty()) {
                changeVisibility(due, visibilitySeconds);
            }
        } catch (RuntimeException e) {
            LOG.warn("heartbeat failed", e);
        }
    }

    /** ChangeMessageVisibilityBatch in batches of 10; a lease extended is moved forward in {@link Held}. */
    private CompletableFuture<?> changeVisibility(List<Held> messages, int seconds) {
        List<CompletableFuture<?>> sent = new ArrayList<>();
        for (int from = 0; from < messages.size(); from += BATCH) {
            List<Held> batch = messages.subList(from, Math.min(messages.size(), from + BATCH));
            List<ChangeMessageVisibilityBatchRequestEntry> entries = new ArrayList<>();
            for (int i = 0; i < batch.size(); i++) {
                entries.add(ChangeMessageVisibilityBatchRequestEntry.builder().id(Integer.toString(i))
                        .receiptHandle(batch.get(i).message.receiptHandle()).visibilityTimeout(seconds).build());
            }
            long sentAt = System.nanoTime();
            sent.add(track(sqs.changeMessageVisibilityBatch(r -> r.queueUrl(queueUrl).entries(entries))
                    .whenComplete((ChangeMessageVisibilityBatchResponse response, Throwable e) -> {
                        if (e != null) {
                            LOG.warn("changing the visibility of {} messages failed: {}", batch.size(), e.toString());
                            return;
                        }
                        List<Held> overtaken = new ArrayList<>();
                        response.successful().forEach(ok -> {
                            Held h = batch.get(Integer.parseInt(ok.id()));
                            h.leaseEndNanos = sentAt + TimeUnit.SECONDS.toNanos(seconds);
                            if (seconds > 0 && h.finalVisibility >= 0) {
                                overtaken.add(h); // given back or backed off while this extension was on its way
                            }
                        });
                        if (seconds > 0) {
                            extended.increment(response.successful().size());
                        }
                        overtaken.forEach(h -> track(sqs.changeMessageVisibility(r -> r.queueUrl(queueUrl)
                                .receiptHandle(h.message.receiptHandle()).visibilityTimeout(h.finalVisibility))));
                        response.failed().forEach(f -> LOG.warn("visibility of message {} not changed: {} {}",
                                batch.get(Integer.parseInt(f.id())).message.messageId(), f.code(), f.message()));
                    })));
        }
        return CompletableFuture.allOf(sent.toArray(CompletableFuture[]::new));
    }

    private void flushDeletes() {
        try {
            while (!toDelete.isEmpty()) {
                List<Held> batch = new ArrayList<>(BATCH);
                Held h;
                while (batch.size() < BATCH && (h = toDelete.poll()) != null) {
                    batch.add(h);
                }
                if (batch.isEmpty()) {
                    return;
                }
                List<DeleteMessageBatchRequestEntry> entries = new ArrayList<>();
                for (int i = 0; i < batch.size(); i++) {
                    entries.add(DeleteMessageBatchRequestEntry.builder().id(Integer.toString(i))
                            .receiptHandle(batch.get(i).message.receiptHandle()).build());
                }
                track(sqs.deleteMessageBatch(r -> r.queueUrl(queueUrl).entries(entries)).whenComplete((response, e) -> {
                    if (e != null) {
                        LOG.warn("deleting {} handled messages failed (they will be delivered again): {}",
                                batch.size(), e.toString());
                    } else {
                        response.failed().forEach(f -> LOG.warn("handled message {} not deleted: {} {}",
                                batch.get(Integer.parseInt(f.id())).message.messageId(), f.code(), f.message()));
                    }
                }));
            }
        } catch (RuntimeException e) {
            LOG.warn("delete flush failed", e);
        }
    }

    /**
     * Remembers an outstanding call (with its completion callback, so that what the callback issues is tracked before
     * it completes) so that shutdown can wait for it.
     */
    private <T> CompletableFuture<T> track(CompletableFuture<T> call) {
        calls.add(call);
        call.whenComplete((r, e) -> calls.remove(call));
        return call;
    }

    // ---- shutdown --------------------------------------------------------------------------------------------

    /**
     * Stops receiving; waits for the outstanding long poll (what it brings is given back at once) and for running
     * handlers up to the grace period; gives back (visibility 0) what is still held; flushes the deletes.
     */
    @Override
    public void close() {
        if (!started.get() || !running) {
            return;
        }
        running = false;
        try {
            poller.join(TimeUnit.SECONDS.toMillis(waitSeconds + 10L));
            handlers.shutdown(); // the heartbeat goes on meanwhile: long handlers keep their leases
            if (!handlers.awaitTermination(shutdownGrace.toMillis(), TimeUnit.MILLISECONDS)) {
                handlers.shutdownNow(); // interrupted handlers give their message back themselves
                handlers.awaitTermination(5, TimeUnit.SECONDS);
            }
            giveBack(new ArrayList<>(held.values())); // handlers that ignored the interrupt
            timers.submit(this::flushDeletes).get(30, TimeUnit.SECONDS);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!calls.isEmpty() && System.nanoTime() < deadline) { // and what their callbacks issued in turn
                CompletableFuture.allOf(calls.stream().map(c -> c.handle((r, e) -> null))
                        .toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            LOG.warn("shutdown of the worker of {} did not finish cleanly: {}", queueUrl, e.toString());
        } finally {
            timers.shutdownNow();
        }
    }

    private static int stateCode(CircuitBreaker breaker) {
        return switch (breaker.getState()) {
            case CLOSED -> 0;
            case OPEN -> 1;
            case HALF_OPEN -> 2;
            default -> 3;
        };
    }

    private static ThreadFactory named(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    /** The worker's settings; every one has a default but the client, queue and handler. */
    public static final class Builder {
        private final SqsAsyncClient sqs;
        private final String queueUrl;
        private final MessageHandler handler;
        private int concurrency = 10;
        private Duration visibilityTimeout = Duration.ofSeconds(30);
        private Duration maxExtension = Duration.ofHours(1);
        private Duration waitTime = Duration.ofSeconds(20);
        private Backoff backoff = Backoff.defaults();
        private CircuitBreaker breaker;
        private Duration shutdownGrace = Duration.ofSeconds(30);
        private MeterRegistry registry = Metrics.globalRegistry;

        private Builder(SqsAsyncClient sqs, String queueUrl, MessageHandler handler) {
            this.sqs = Objects.requireNonNull(sqs, "sqs");
            this.queueUrl = Objects.requireNonNull(queueUrl, "queueUrl");
            this.handler = Objects.requireNonNull(handler, "handler");
        }

        /** Handlers running at once, and so the most messages held (default 10). */
        public Builder concurrency(int n) {
            if (n < 1) {
                throw new IllegalArgumentException("concurrency must be at least 1");
            }
            concurrency = n;
            return this;
        }

        /** The lease each receive and each heartbeat asks for, whole seconds, 1 s to 12 h (default 30 s). */
        public Builder visibilityTimeout(Duration d) {
            if (d.toSeconds() < 1 || d.compareTo(Backoff.LONGEST) > 0) {
                throw new IllegalArgumentException("visibility timeout must be 1 s to 12 h: " + d);
            }
            visibilityTimeout = d;
            return this;
        }

        /** How long after its receive a message's lease is still extended while its handler runs (default 1 h). */
        public Builder maxExtension(Duration d) {
            maxExtension = Objects.requireNonNull(d);
            return this;
        }

        /** Long-poll wait, 0-20 s (default 20 s). */
        public Builder waitTime(Duration d) {
            if (d.isNegative() || d.toSeconds() > 20) {
                throw new IllegalArgumentException("wait time must be 0-20 s: " + d);
            }
            waitTime = d;
            return this;
        }

        public Builder backoff(Backoff b) {
            backoff = Objects.requireNonNull(b);
            return this;
        }

        /** A breaker of your own settings; default: 50 % of the last 20 calls failed (10 at least), open 30 s. */
        public Builder circuitBreaker(CircuitBreaker b) {
            breaker = Objects.requireNonNull(b);
            return this;
        }

        /** How long {@link SluiceWorker#close()} lets running handlers finish (default 30 s). */
        public Builder shutdownGrace(Duration d) {
            shutdownGrace = Objects.requireNonNull(d);
            return this;
        }

        public Builder meterRegistry(MeterRegistry r) {
            registry = Objects.requireNonNull(r);
            return this;
        }

        public SluiceWorker build() {
            return new SluiceWorker(this);
        }
    }
}
