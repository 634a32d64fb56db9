package io.sluice.worker;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Metrics;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.opentelemetry.api.OpenTelemetry;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
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
 *       than there are free handler slots: the worker never holds a message it cannot start, except a FIFO group's
 *       later messages, which wait for the ones before them.</li>
 *   <li><b>FIFO order.</b> On a FIFO queue (its URL ends in {@code .fifo}) the messages of one group run one at a
 *       time, in order; groups run in parallel up to the concurrency. A message that does not succeed (failed, retried
 *       later, given back) stops its group here: the group's later messages this worker holds are given back unhandled,
 *       and the server delivers them only after that message (SQS keeps a group locked while a message of it is in
 *       flight). Other groups go on.</li>
 *   <li><b>Visibility heartbeat.</b> While a message is held, its visibility is extended ahead of expiry (once a third
 *       of the lease has run, checked every sixth of the timeout), up to {@code maxExtension} after the receive.</li>
 *   <li><b>Handler control</b> ({@link ContextHandler}, {@link BatchHandler}, {@link MessageContext}): every system
 *       attribute, extending the lease, retrying after a set time, dead-lettering a poison message at once,
 *       acknowledging early, per-message outcomes of a batch.</li>
 *   <li><b>Failures back off.</b> A failed message is left undeleted (the queue's redrive policy decides when it is
 *       dead-lettered) and visible again after a jittered exponential {@link Backoff}.</li>
 *   <li><b>Batched deletes</b> of handled messages, up to 10 per request, flushed every 50 ms.</li>
 *   <li><b>A circuit breaker that protects the downstream</b> (resilience4j): it counts only downstream failures
 *       ({@link DownstreamException} in the cause chain, or {@link Builder#downstreamFailure}), against successes, over
 *       a 30 s window; a failure of one message (a poison message) only backs that message off. Open, the worker stops
 *       receiving and gives back (visibility 0) what it holds but has not started; half-open, it receives one message
 *       at a time as probes, and closes when they succeed.</li>
 *   <li><b>Graceful shutdown</b> ({@link #close()}): stop receiving (an outstanding long poll is waited for, and what
 *       it brings is given back), let running handlers finish within the grace period, give back the rest with
 *       visibility 0, flush the deletes.</li>
 *   <li><b>Logging</b> (SLF4J, logger {@code io.sluice.worker.SluiceWorker}, every line names the queue): start, stop
 *       and drain at INFO; breaker transitions at WARN; handler failures at WARN, at most one line per 10 s with the
 *       count of those not logged.</li>
 *   <li><b>Metrics</b> (Micrometer, tag {@code queue}): {@code sluice.worker.processed}, {@code .failed},
 *       {@code .retried}, {@code .dead_lettered}, {@code .extended}, {@code .released}, {@code .handler} (latency),
 *       {@code .inflight}, {@code .breaker.state} (0 closed, 1 open, 2 half-open).</li>
 * </ul>
 */
public final class SluiceWorker implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(SluiceWorker.class);
    static final long DELETE_FLUSH_MILLIS = 50;
    private static final int BATCH = 10;

    private final SqsAsyncClient sqs;
    private final String queueUrl;
    private final String queue;
    private final boolean fifo;
    private final ContextHandler handler; // one of handler and batchHandler
    private final BatchHandler batchHandler;
    private final int concurrency;
    private final int visibilitySeconds;
    private final Duration maxExtension;
    private final int waitSeconds;
    private final Backoff backoff;
    private final CircuitBreaker breaker;
    private final Predicate<Throwable> downstream;
    private final Duration shutdownGrace;
    private final DeadLetters deadLetters;
    private final FailureLog failureLog;
    private final HandlerTracing tracing;

    /** Free handler slots: one per lane (a message; a FIFO group's run; a batch). */
    private final Slots slots;
    /** The last receive brought nothing: with a shared budget, the next one holds a single slot while it waits. */
    private boolean lastEmpty;
    private final ExecutorService handlers;
    private final ScheduledExecutorService timers;
    private final Thread poller;
    private final Map<Long, Held> held = new ConcurrentHashMap<>();
    private final AtomicLong heldKeys = new AtomicLong();
    /** FIFO queues: the lane of each group with messages held here. */
    private final Map<String, Lane> groups = new ConcurrentHashMap<>();
    private final ConcurrentLinkedQueue<Held> toDelete = new ConcurrentLinkedQueue<>();
    private final List<CompletableFuture<?>> calls = new CopyOnWriteArrayList<>();
    private final AtomicBoolean started = new AtomicBoolean();
    private volatile boolean running;
    private final MessageContext.Actions actions = new ContextActions();

    /** For the log: the meters may be no-ops (Micrometer's global registry without a registry added). */
    private final AtomicLong handledTotal = new AtomicLong();
    private final AtomicLong releasedTotal = new AtomicLong();
    private final Counter processed;
    private final Counter failed;
    private final Counter retried;
    private final Counter deadLettered;
    private final Counter extended;
    private final Counter released;
    private final Timer handlerLatency;

    /**
     * Messages run one unit after another on one handler slot: a standard queue's message (or a batch's messages), or
     * the messages of one FIFO group this worker holds, in order.
     */
    private static final class Lane {
        final String group; // null: not a FIFO group's
        final ArrayDeque<Held> waiting = new ArrayDeque<>();
        boolean closed;

        Lane(String group) {
            this.group = group;
        }
    }

    private SluiceWorker(Builder b) {
        this.sqs = b.sqs;
        this.queueUrl = b.queueUrl;
        this.queue = queueUrl.substring(queueUrl.lastIndexOf('/') + 1);
        this.fifo = queue.endsWith(".fifo");
        this.handler = b.handler;
        this.batchHandler = b.batchHandler;
        this.concurrency = b.concurrency;
        this.visibilitySeconds = (int) b.visibilityTimeout.toSeconds();
        this.maxExtension = b.maxExtension;
        this.waitSeconds = (int) b.waitTime.toSeconds();
        this.backoff = b.backoff;
        this.downstream = b.downstream;
        this.breaker = b.breaker != null ? b.breaker : CircuitBreaker.of("sluice-worker-" + queue,
                CircuitBreakerConfig.custom()
                        .slidingWindowType(CircuitBreakerConfig.SlidingWindowType.TIME_BASED)
                        .slidingWindowSize(30).minimumNumberOfCalls(10).failureRateThreshold(50)
                        .waitDurationInOpenState(Duration.ofSeconds(30)).permittedNumberOfCallsInHalfOpenState(3)
                        .automaticTransitionFromOpenToHalfOpenEnabled(true).build());
        this.shutdownGrace = b.shutdownGrace;
        this.deadLetters = new DeadLetters(sqs, queueUrl);
        this.failureLog = new FailureLog(LOG, queue, b.failureLogIntervalMillis);
        this.tracing = HandlerTracing.detect(b.openTelemetry);
        this.slots = b.slots != null ? b.slots : Slots.of(concurrency);
        this.handlers = Executors.newFixedThreadPool(concurrency, named("sluice-worker-" + queue + "-handler"));
        // two: the heartbeat is never queued behind a delete flush
        this.timers = Executors.newScheduledThreadPool(2, named("sluice-worker-" + queue + "-timer"));
        this.poller = named("sluice-worker-" + queue + "-poller").newThread(this::poll);
        breaker.getEventPublisher().onStateTransition(e -> LOG.warn("queue {}: circuit breaker from {} to {} (failure"
                + " rate {}% of the last calls; it counts downstream failures only){}", queue,
                e.getStateTransition().getFromState(), e.getStateTransition().getToState(),
                breaker.getMetrics().getFailureRate(), e.getStateTransition().getToState() == CircuitBreaker.State.OPEN
                        ? ": receiving stops" : ""));

        MeterRegistry registry = b.registry;
        Tags tags = Tags.of("queue", queue);
        processed = Counter.builder("sluice.worker.processed").description("messages handled and deleted")
                .tags(tags).register(registry);
        failed = Counter.builder("sluice.worker.failed").description("handler failures (message backed off)")
                .tags(tags).register(registry);
        retried = Counter.builder("sluice.worker.retried").description("messages the handler asked to retry later")
                .tags(tags).register(registry);
        deadLettered = Counter.builder("sluice.worker.dead_lettered")
                .description("messages the handler sent to the dead-letter queue").tags(tags).register(registry);
        extended = Counter.builder("sluice.worker.extended").description("visibility extensions by the heartbeat")
                .tags(tags).register(registry);
        released = Counter.builder("sluice.worker.released")
                .description("messages given back unhandled (visibility 0): breaker open, shutdown, FIFO group stopped")
                .tags(tags).register(registry);
        handlerLatency = Timer.builder("sluice.worker.handler").description("handler run time")
                .tags(tags).register(registry);
        Gauge.builder("sluice.worker.inflight", held, Map::size).description("messages held")
                .tags(tags).register(registry);
        Gauge.builder("sluice.worker.breaker.state", breaker, SluiceWorker::stateCode)
                .description("0 closed, 1 open, 2 half-open, 3 disabled or forced").tags(tags).register(registry);
    }

    /** A worker whose handler takes the bare message. */
    public static Builder builder(SqsAsyncClient sqs, String queueUrl, MessageHandler handler) {
        Objects.requireNonNull(handler, "handler");
        return new Builder(sqs, queueUrl, context -> handler.handle(context.message()), null);
    }

    /** A worker whose handler takes the message's {@link MessageContext}. */
    public static Builder contextBuilder(SqsAsyncClient sqs, String queueUrl, ContextHandler handler) {
        return new Builder(sqs, queueUrl, Objects.requireNonNull(handler, "handler"), null);
    }

    /** A worker whose handler takes the messages of a receive at once. */
    public static Builder batchBuilder(SqsAsyncClient sqs, String queueUrl, BatchHandler handler) {
        return new Builder(sqs, queueUrl, null, Objects.requireNonNull(handler, "handler"));
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
        LOG.info("queue {}: worker started ({}concurrency {}, visibility {} s, wait {} s{})", queue,
                fifo ? "FIFO, one message of a group at a time, " : "", concurrency, visibilitySeconds, waitSeconds,
                batchHandler != null ? ", batch handler" : "");
        return this;
    }

    public CircuitBreaker circuitBreaker() {
        return breaker;
    }

    /** The queue this worker consumes. */
    public String queueUrl() {
        return queueUrl;
    }

    /** Messages held now (running, waiting behind their FIFO group, or received and about to run). */
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
                LOG.warn("queue {}: the poller failed; it goes on: {}", queue, e.toString());
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
        if (!slots.acquire(200)) {
            return;
        }
        boolean probe = state == CircuitBreaker.State.HALF_OPEN;
        int permits = 1;
        if (!probe && !(slots.shared() && lastEmpty)) { // an idle queue does not hold a shared budget's slots
            permits += slots.tryAcquireUpTo(BATCH - 1);
        }
        // each message may be a lane of its own (a standard queue's, or a new FIFO group's): no more than the slots;
        // a standard queue's batch handler takes a whole receive on one slot
        int asked = batchHandler != null && !fifo ? (probe ? 1 : BATCH) : permits;
        List<Message> got;
        long sentNanos = System.nanoTime();
        try {
            ReceiveMessageResponse response = sqs.receiveMessage(r -> r.queueUrl(queueUrl)
                    .maxNumberOfMessages(asked).waitTimeSeconds(waitSeconds).visibilityTimeout(visibilitySeconds)
                    .messageSystemAttributeNames(MessageSystemAttributeName.ALL)
                    .messageAttributeNames("All")).get();
            got = response.messages();
            lastEmpty = got.isEmpty();
            slots.demand(!lastEmpty);
        } catch (InterruptedException e) {
            slots.release(permits);
            throw e;
        } catch (ExecutionException | RuntimeException e) {
            slots.release(permits);
            LOG.warn("queue {}: receive failed: {}", queue, (e instanceof ExecutionException ? e.getCause() : e)
                    .toString());
            pause(1000);
            return;
        }
        List<Held> received = new ArrayList<>(got.size());
        for (Message m : got) {
            Held h = new Held(heldKeys.incrementAndGet(), m, sentNanos, visibilitySeconds);
            h.context = new MessageContext(h, actions, queueUrl);
            held.put(h.key, h);
            received.add(h);
        }
        if (!running) {
            slots.release(permits);
            giveBack(received); // shutting down: what the last poll brought goes back at once
            return;
        }
        int used = 0;
        for (Lane lane : lanes(received)) {
            used++;
            start(lane);
        }
        slots.release(permits - used);
    }

    /**
     * The new lanes of what one receive brought (each to run on a slot of its own): a lane per message, or per batch,
     * or per FIFO group; a FIFO group whose lane is still running here gets the messages appended to it instead.
     */
    private List<Lane> lanes(List<Held> received) {
        List<Lane> out = new ArrayList<>();
        if (!fifo) {
            if (batchHandler != null) {
                Lane lane = new Lane(null);
                lane.waiting.addAll(received);
                if (!received.isEmpty()) {
                    out.add(lane);
                }
                return out;
            }
            for (Held h : received) {
                Lane lane = new Lane(null);
                lane.waiting.add(h);
                out.add(lane);
            }
            return out;
        }
        Map<String, List<Held>> byGroup = new LinkedHashMap<>();
        for (Held h : received) {
            byGroup.computeIfAbsent(Objects.requireNonNullElse(h.group(), ""), g -> new ArrayList<>()).add(h);
        }
        byGroup.forEach((group, messages) -> {
            Lane running = groups.get(group);
            if (running != null) {
                synchronized (running) {
                    if (!running.closed) { // a group locked here should not come again; if it does, keep its order
                        running.waiting.addAll(messages);
                        return;
                    }
                }
            }
            Lane lane = new Lane(group);
            lane.waiting.addAll(messages);
            groups.put(group, lane);
            out.add(lane);
        });
        return out;
    }

    private void start(Lane lane) {
        try {
            handlers.execute(() -> runLane(lane));
        } catch (RejectedExecutionException closed) {
            giveBack(closeLane(lane));
            slots.release(1);
        }
    }

    /** Closes a lane; what was still waiting in it. */
    private List<Held> closeLane(Lane lane) {
        List<Held> rest;
        synchronized (lane) {
            lane.closed = true;
            rest = new ArrayList<>(lane.waiting);
            lane.waiting.clear();
        }
        if (lane.group != null) {
            groups.remove(lane.group, lane);
        }
        return rest;
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    // ---- handling --------------------------------------------------------------------------------------------

    /** Runs a lane's units in order until it is empty or one of them does not succeed; then frees its slot. */
    private void runLane(Lane lane) {
        try {
            while (true) {
                List<Held> unit;
                synchronized (lane) {
                    if (lane.waiting.isEmpty()) {
                        lane.closed = true; // what a receive brings of this group from now on starts a lane of its own
                        break;
                    }
                    if (batchHandler != null) {
                        unit = new ArrayList<>(lane.waiting);
                        lane.waiting.clear();
                    } else {
                        unit = List.of(lane.waiting.poll());
                    }
                }
                boolean succeeded;
                try {
                    succeeded = runUnit(unit);
                } catch (RuntimeException e) { // not the handler's (it is caught): never strand a held message
                    LOG.warn("queue {}: running a handler failed; its messages go back: {}", queue, e.toString());
                    giveBack(unit);
                    succeeded = false;
                }
                if (!succeeded) {
                    break; // its later messages are given back below, so the group's order holds
                }
            }
        } finally {
            giveBack(closeLane(lane));
            slots.release(1);
        }
    }

    /** Runs the handler on one message (or one batch) and applies the outcomes; whether every message left the queue. */
    private boolean runUnit(List<Held> unit) {
        if (!running || !breaker.tryAcquirePermission()) {
            giveBack(unit); // shutting down, or the breaker opened since the receive: not started
            return false;
        }
        long start = System.nanoTime();
        Throwable thrown = null;
        HandlerTracing.Run span = tracing.start(queue, unit.stream().map(h -> h.message).toList());
        try {
            if (batchHandler != null) {
                batchHandler.handle(unit.stream().map(h -> h.context).toList());
            } else {
                handler.handle(unit.get(0).context);
            }
        } catch (Throwable t) {
            thrown = t;
        } finally {
            Throwable failure = thrown;
            for (Held h : unit) {
                Held.Outcome chosen = h.chosen.get();
                if (failure == null && chosen != null && chosen.kind() == Held.Outcome.Kind.FAILED) {
                    failure = chosen.cause();
                }
            }
            if (failure != null) {
                span.failed(failure);
            }
            span.end();
        }
        long took = System.nanoTime() - start;
        handlerLatency.record(took, TimeUnit.NANOSECONDS);
        // the interrupt is the shutdown's, past its grace; cleared here: the SDK calls below must not see it
        boolean interrupted = Thread.interrupted() || thrown instanceof InterruptedException;
        if (!running && interrupted) {
            breaker.releasePermission(); // stopped by the shutdown, not a failure of its downstream
            giveBack(unit.stream().filter(h -> h.chosen.get() != Held.Outcome.ACKNOWLEDGED).toList());
            unit.forEach(this::done);
            return false;
        }
        boolean allLeft = true;
        Throwable downstreamFailure = thrown != null && isDownstream(thrown) ? thrown : null;
        List<Held> givenBack = new ArrayList<>();
        for (Held h : unit) {
            Held.Outcome outcome = h.outcome(thrown);
            if (!allLeft && fifo && h.chosen.get() == null) {
                givenBack.add(h); // after one that did not succeed in its group: not done, whatever the call did
                continue;
            }
            if (outcome.kind() == Held.Outcome.Kind.FAILED && downstreamFailure == null && isDownstream(outcome.cause())) {
                downstreamFailure = outcome.cause();
            }
            if (!apply(h, outcome)) {
                allLeft = false;
            }
        }
        giveBack(givenBack);
        if (downstreamFailure != null) {
            breaker.onError(took, TimeUnit.NANOSECONDS, downstreamFailure);
        } else if (allLeft) {
            breaker.onSuccess(took, TimeUnit.NANOSECONDS);
        } else {
            breaker.releasePermission(); // a message's own failure: not the downstream's, not counted
        }
        return allLeft;
    }

    private boolean isDownstream(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (downstream.test(c)) {
                return true;
            }
        }
        return false;
    }

    /** Carries out one message's outcome; whether it left the queue. */
    private boolean apply(Held h, Held.Outcome outcome) {
        switch (outcome.kind()) {
            case SUCCESS -> {
                if (h.settle()) {
                    processed.increment();
                    handledTotal.incrementAndGet();
                    toDelete.add(h);
                    if (toDelete.size() >= BATCH) {
                        try {
                            timers.execute(this::flushDeletes);
                        } catch (RejectedExecutionException closed) {
                            // shutting down: close() flushes what is left
                        }
                    }
                }
                done(h);
                return true;
            }
            case ACKNOWLEDGED -> {
                done(h); // counted and deleted when acknowledged
                return true;
            }
            case RETRY -> {
                if (h.settle()) {
                    retried.increment();
                    later(h, (int) Math.min(Backoff.LONGEST.toSeconds(), outcome.after().toSeconds()));
                }
                done(h);
                return false;
            }
            case DEAD_LETTER -> {
                if (h.settle()) {
                    try { // waited for: a FIFO group's next message runs only once this one is out of the queue
                        deadLetters.move(h.message, outcome.reason()).get(30, TimeUnit.SECONDS);
                        deadLettered.increment();
                        LOG.info("queue {}: message {} sent to the dead-letter queue by its handler: {}", queue,
                                h.message.messageId(), outcome.reason());
                        done(h);
                        return true;
                    } catch (InterruptedException e) { // the shutdown, past its grace: back to the queue as it was
                        h.finalVisibility = 0;
                        released.increment();
                        releasedTotal.incrementAndGet();
                        changeVisibility(List.of(h), 0);
                        done(h);
                        return false;
                    } catch (ExecutionException | TimeoutException e) {
                        Throwable cause = e instanceof ExecutionException ? e.getCause() : e;
                        LOG.warn("queue {}: message {} could not be dead-lettered ({}); backed off instead", queue,
                                h.message.messageId(), cause.toString());
                        failed(h, cause);
                    }
                }
                done(h);
                return false;
            }
            default -> { // FAILED
                if (h.settle()) {
                    failed(h, outcome.cause());
                }
                done(h);
                return false;
            }
        }
    }

    private void failed(Held h, Throwable cause) {
        failed.increment();
        int seconds = backoff.visibilitySeconds(h.receiveCount());
        failureLog.failed(h.message.messageId(), h.receiveCount(), seconds, cause);
        later(h, seconds);
    }

    /** Makes a settled message visible again after {@code seconds}. */
    private void later(Held h, int seconds) {
        h.finalVisibility = seconds;
        track(sqs.changeMessageVisibility(r -> r.queueUrl(queueUrl).receiptHandle(h.message.receiptHandle())
                .visibilityTimeout(seconds)).whenComplete((ok, e) -> {
                    if (e != null) {
                        LOG.warn("queue {}: making message {} visible in {} s failed: {}", queue,
                                h.message.messageId(), seconds, e.toString());
                    }
                }));
    }

    private void done(Held h) {
        held.remove(h.key, h);
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
        releasedTotal.addAndGet(mine.size());
        return changeVisibility(mine, 0);
    }

    /** What a handler does through its {@link MessageContext}. */
    private final class ContextActions implements MessageContext.Actions {
        @Override
        public void extend(Held h, Duration visibility) throws Exception {
            int seconds = (int) Math.min(Backoff.LONGEST.toSeconds(), Math.max(0, visibility.toSeconds()));
            long sent = System.nanoTime();
            await(sqs.changeMessageVisibility(r -> r.queueUrl(queueUrl).receiptHandle(h.message.receiptHandle())
                    .visibilityTimeout(seconds)));
            h.leaseEndNanos = sent + TimeUnit.SECONDS.toNanos(seconds);
        }

        @Override
        public void acknowledge(Held h) throws Exception {
            await(sqs.deleteMessage(r -> r.queueUrl(queueUrl).receiptHandle(h.message.receiptHandle())));
            if (h.settle()) {
                processed.increment();
                handledTotal.incrementAndGet();
            }
        }

        private void await(CompletableFuture<?> call) throws Exception {
            try {
                call.get(30, TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                throw e.getCause() instanceof Exception cause ? cause : e;
            }
        }
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
                if (!h.isSettled() && h.leaseEndNanos - now <= 2 * third
                        && now - h.receivedNanos < maxExtension.toNanos()) {
                    due.add(h);
                }
            }
            if (!due.isEmpty()) {
                changeVisibility(due, visibilitySeconds);
            }
        } catch (RuntimeException e) {
            LOG.warn("queue {}: heartbeat failed", queue, e);
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
                            LOG.warn("queue {}: changing the visibility of {} messages failed: {}", queue, batch.size(),
                                    e.toString());
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
                        response.failed().forEach(f -> LOG.warn("queue {}: visibility of message {} not changed: {} {}",
                                queue, batch.get(Integer.parseInt(f.id())).message.messageId(), f.code(), f.message()));
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
                        LOG.warn("queue {}: deleting {} handled messages failed (they will be delivered again): {}",
                                queue, batch.size(), e.toString());
                    } else {
                        response.failed().forEach(f -> LOG.warn("queue {}: handled message {} not deleted: {} {}",
                                queue, batch.get(Integer.parseInt(f.id())).message.messageId(), f.code(), f.message()));
                    }
                }));
            }
        } catch (RuntimeException e) {
            LOG.warn("queue {}: delete flush failed", queue, e);
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
        LOG.info("queue {}: worker stopping: no more receives; {} messages held, up to {} ms for running handlers",
                queue, held.size(), shutdownGrace.toMillis());
        long releasedBefore = releasedTotal.get();
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
            LOG.warn("queue {}: the worker's shutdown did not finish cleanly: {}", queue, e.toString());
        } finally {
            timers.shutdownNow();
        }
        LOG.info("queue {}: worker stopped and drained: {} messages handled in all, {} given back unhandled at"
                + " shutdown", queue, handledTotal.get(), releasedTotal.get() - releasedBefore);
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
        private final ContextHandler handler;
        private final BatchHandler batchHandler;
        private int concurrency = 10;
        private Duration visibilityTimeout = Duration.ofSeconds(30);
        private Duration maxExtension = Duration.ofHours(1);
        private Duration waitTime = Duration.ofSeconds(20);
        private Backoff backoff = Backoff.defaults();
        private CircuitBreaker breaker;
        private Duration shutdownGrace = Duration.ofSeconds(30);
        private MeterRegistry registry = Metrics.globalRegistry;
        private Predicate<Throwable> downstream = DownstreamException.class::isInstance;
        private long failureLogIntervalMillis = 10_000;
        private Slots slots;
        private Object openTelemetry; // an io.opentelemetry.api.OpenTelemetry, or null for the global one

        private Builder(SqsAsyncClient sqs, String queueUrl, ContextHandler handler, BatchHandler batchHandler) {
            this.sqs = Objects.requireNonNull(sqs, "sqs");
            this.queueUrl = Objects.requireNonNull(queueUrl, "queueUrl");
            this.handler = handler;
            this.batchHandler = batchHandler;
        }

        /**
         * Handlers running at once (default 10): on a standard queue also the most messages held (a batch handler: the
         * most batches); on a FIFO queue the most groups held, each with what one receive brought of it.
         */
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

        /**
         * The OpenTelemetry whose tracer makes the handler spans (see {@link HandlerTracing}); default: the global one,
         * when OpenTelemetry's API is on the class path.
         */
        public Builder openTelemetry(OpenTelemetry o) {
            openTelemetry = Objects.requireNonNull(o);
            return this;
        }

        /** Slots shared with other workers ({@link SluiceWorkers}); by default the worker's own. */
        Builder slots(Slots s) {
            slots = Objects.requireNonNull(s);
            return this;
        }

        /**
         * A breaker of your own settings; default: 50 % of the calls of the last 30 s (10 at least) failed with a
         * downstream failure, open 30 s, then 3 probes. Only downstream failures count either way.
         */
        public Builder circuitBreaker(CircuitBreaker b) {
            breaker = Objects.requireNonNull(b);
            return this;
        }

        /** How long {@link SluiceWorker#close()} lets running handlers finish (default 30 s). */
        public Builder shutdownGrace(Duration d) {
            shutdownGrace = Objects.requireNonNull(d);
            return this;
        }

        /**
         * Which handler failures are the downstream's, the only ones the circuit breaker counts (tested on the failure
         * and each of its causes). Default: {@link DownstreamException}. {@code t -> true} counts every failure, as a
         * breaker around the handler would: then a run of poison messages stops the worker too.
         */
        public Builder downstreamFailure(Predicate<Throwable> p) {
            downstream = Objects.requireNonNull(p);
            return this;
        }

        /** At most one handler-failure line per this long (default 10 s); the next one counts those not logged. */
        public Builder failureLogInterval(Duration d) {
            failureLogIntervalMillis = Math.max(0, d.toMillis());
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
