package io.sluice.backend.agent;

import io.sluice.catalog.QueueMetadata;
import io.sluice.common.validation.QueueArn;
import io.sluice.common.validation.QueueAttributesValidator;
import io.sluice.common.validation.RedrivePolicy;
import io.sluice.metadata.image.ClusterImage;
import io.sluice.partition.Effect;
import io.sluice.partition.NewMessage;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionId;
import io.sluice.partition.PartitionResponse;
import io.sluice.partition.PartitionService;
import io.sluice.partition.StoredMessage;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Executes the dead-letter hand-offs of the partitions this process is the primary of (in a cluster, the shards it
 * leads; in {@code sluice dev}, its one shard): copies the message into its queue's dead-letter queue with its
 * history, and only once that copy is durable acknowledges the hand-off, which removes the source copy. One owner per
 * hand-off, where its data lives: frontends take no part.
 *
 * <ul>
 *   <li>A hand-off starts as soon as the primary applies it (the state machine's effect) and, until acknowledged, on
 *       every scan of the primary's pending hand-offs ({@link #SCAN_MILLIS}): after a restart or a leader change the
 *       new primary re-derives them from its state.</li>
 *   <li>At least once, idempotent at the dead-letter queue: every copy carries the hand-off's key (source queue id,
 *       partition and seq) and the dead-letter queue stores one copy per key within its deduplication window, so a
 *       retry, or an old and a new leader executing one hand-off at once, store one copy.</li>
 *   <li>Bounded retries: a hand-off that failed (dead-letter shard unreachable, target queue missing) waits
 *       {@link #FIRST_RETRY_MILLIS}, doubling up to {@link #MAX_RETRY_MILLIS}, before it is tried again; at most
 *       {@link #MAX_IN_FLIGHT} run at once. It stays pending (and counted in the queue metrics) until it succeeds, its
 *       redrive policy is removed (it returns to the source queue), or the source's retention period has passed since
 *       it was handed off (the primary drops it).</li>
 *   <li>Never acknowledged without its copy: a body that cannot be read (the message gone, this process no longer
 *       the primary) leaves it to the next scan.</li>
 * </ul>
 */
public final class DeadLetterHandOffs implements PartitionService.EffectListener, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(DeadLetterHandOffs.class);
    static final long SCAN_MILLIS = 1_000;
    static final long FIRST_RETRY_MILLIS = 1_000;
    static final long MAX_RETRY_MILLIS = 30_000;
    static final int MAX_IN_FLIGHT = 64;

    private final Supplier<ClusterImage> catalog;
    private final PartitionService partitions;
    private final Supplier<List<Effect.DeadLetter>> pending;
    private final LongSupplier nanoTime;
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "sluice-dead-letters");
        t.setDaemon(true);
        return t;
    });
    /** Hand-offs running now. */
    private final Set<String> inProgress = ConcurrentHashMap.newKeySet();
    /** Hand-offs that failed: their failures so far and when they may run again. */
    private final Map<String, Retry> retries = new ConcurrentHashMap<>();
    private final AtomicLong moved = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();

    private record Retry(int failures, long notBeforeNanos) {
    }

    /**
     * @param catalog    the cached catalog: the source queue's redrive policy and the dead-letter queue's partitions
     * @param partitions the data plane: reads the message, stores its copy in the dead-letter queue (wherever that
     *                   lives) and acknowledges the hand-off at its source
     * @param pending    the pending hand-offs of the partitions this process is the primary of now
     */
    public DeadLetterHandOffs(Supplier<ClusterImage> catalog, PartitionService partitions,
                              Supplier<List<Effect.DeadLetter>> pending, LongSupplier nanoTime) {
        this.catalog = catalog;
        this.partitions = partitions;
        this.pending = pending;
        this.nanoTime = nanoTime;
    }

    /** Starts the periodic scan of pending hand-offs (the first right away). */
    public DeadLetterHandOffs start() {
        scheduler.scheduleWithFixedDelay(this::scan, 0, SCAN_MILLIS, TimeUnit.MILLISECONDS);
        return this;
    }

    /** Hand-offs the primary just applied: started at once (called on the applying thread: only schedules). */
    @Override
    public void onEffects(List<Effect> effects) {
        for (Effect e : effects) {
            if (e instanceof Effect.DeadLetter d) {
                scheduler.execute(() -> start(d));
            }
        }
    }

    /** Its counters: hand-offs moved, attempts failed. */
    public void bindMetrics(io.micrometer.core.instrument.MeterRegistry registry) {
        io.micrometer.core.instrument.FunctionCounter.builder("sluice.dead_letter.handoffs.moved", this,
                DeadLetterHandOffs::moved).description("Dead-letter hand-offs this process copied to their dead-letter"
                        + " queue and acknowledged at their source, as the source's primary").register(registry);
        io.micrometer.core.instrument.FunctionCounter.builder("sluice.dead_letter.handoffs.failed_attempts", this,
                DeadLetterHandOffs::failedAttempts).description("Dead-letter hand-off attempts that failed (each is"
                        + " retried later, with a growing delay)").register(registry);
    }

    /** Hand-offs copied and acknowledged by this process since it started. */
    public long moved() {
        return moved.get();
    }

    /** Attempts that failed (each is retried later). */
    public long failedAttempts() {
        return failed.get();
    }

    /** One pass over the pending hand-offs: starts those not running and not waiting out a retry delay. */
    void scan() {
        try {
            List<Effect.DeadLetter> all = pending.get();
            Set<String> keys = new HashSet<>();
            for (Effect.DeadLetter d : all) {
                keys.add(key(d));
            }
            retries.keySet().retainAll(keys); // acknowledged, returned or dropped meanwhile, or no longer ours
            long now = nanoTime.getAsLong();
            for (Effect.DeadLetter d : all) {
                Retry r = retries.get(key(d));
                if (r == null || now - r.notBeforeNanos() >= 0) {
                    start(d);
                }
            }
        } catch (RuntimeException e) {
            LOG.warn("scanning pending dead-letter hand-offs failed (retried on the next scan)", e);
        }
    }

    private static String key(Effect.DeadLetter d) {
        return NewMessage.Provenance.handOffKey(d.partition(), d.seq());
    }

    private void start(Effect.DeadLetter d) {
        String key = key(d);
        if (inProgress.size() >= MAX_IN_FLIGHT || !inProgress.add(key)) {
            return; // running already, or too many at once: the next scan starts it
        }
        CompletableFuture<Void> done;
        try {
            done = move(d);
        } catch (RuntimeException e) {
            done = CompletableFuture.failedFuture(e);
        }
        done.whenComplete((v, e) -> {
            if (e == null) {
                retries.remove(key);
                inProgress.remove(key);
                return;
            }
            Retry previous = retries.get(key);
            int failures = previous == null ? 1 : previous.failures() + 1;
            long delay = Math.min(MAX_RETRY_MILLIS, FIRST_RETRY_MILLIS << Math.min(failures - 1, 20));
            retries.put(key, new Retry(failures, nanoTime.getAsLong() + TimeUnit.MILLISECONDS.toNanos(delay)));
            inProgress.remove(key);
            failed.incrementAndGet(); // last: a failed attempt counted is fully booked
            Throwable cause = e instanceof java.util.concurrent.CompletionException && e.getCause() != null
                    ? e.getCause() : e;
            if (failures == 1 || failures % 10 == 0) {
                LOG.warn("dead-letter hand-off {} failed ({} time(s)); it stays pending, next try in {} ms: {}", key,
                        failures, delay, cause.toString());
            }
        });
    }

    /**
     * Copies then acknowledges; completes at once when there is nothing to do for it (its queue or redrive policy
     * gone: the primary's own commands decide its fate), fails when it is to be retried.
     */
    private CompletableFuture<Void> move(Effect.DeadLetter d) {
        ClusterImage image = catalog.get();
        QueueMetadata source = image.queueById(d.partition().queueId()).orElse(null);
        if (source == null) {
            return CompletableFuture.completedFuture(null); // deleted: the reconciler retires its partitions
        }
        var attributes = QueueAttributesValidator.forCreate(source.name(), source.attributes());
        RedrivePolicy policy = attributes.isOk() ? attributes.value().redrivePolicy() : null;
        Optional<QueueArn> targetArn = policy == null ? Optional.empty() : policy.targetArn();
        if (targetArn.isEmpty()) {
            // no redrive policy any more: configuring the partition without one returns its hand-offs to the queue
            return CompletableFuture.completedFuture(null);
        }
        QueueArn arn = targetArn.get();
        QueueMetadata target = image.queues().get(arn.queueName());
        if (target == null) {
            return CompletableFuture.failedFuture(new IllegalStateException("its dead-letter queue "
                    + arn.queueName() + " does not exist"));
        }
        // a redrive target is in the source's account and region: the source's ARN is the target's with its name
        String sourceArn = "arn:" + arn.partition() + ":sqs:" + arn.region() + ":" + arn.accountId() + ":"
                + source.name();
        return partitions.readMessage(d.partition(), d.seq()).thenCompose(m -> {
            if (m == null) { // acknowledged meanwhile, or this process no longer the primary: never acknowledge
                throw new IllegalStateException("its body could not be read");
            }
            return copy(target, m, d, sourceArn);
        }).thenCompose(v -> partitions.submit(d.partition(),
                new PartitionCommand.AcknowledgeDeadLetters(List.of(d.seq())))).thenAccept(o -> {
                    if (o.response() instanceof PartitionResponse.Rejected r) {
                        throw new IllegalStateException("the source refused the acknowledgement: " + r.failure());
                    }
                    moved.incrementAndGet();
                });
    }

    private CompletableFuture<Void> copy(QueueMetadata target, StoredMessage m, Effect.DeadLetter d, String sourceArn) {
        NewMessage copy = new NewMessage(m.messageId(), m.body(), m.attributes(), m.systemAttributes(), 0, m.groupId(),
                m.deduplicationId(), m.senderId(), new NewMessage.Provenance(m.sentTimestampMillis(), d.receiveCount(),
                d.firstReceiveTimestampMillis(), sourceArn, NewMessage.Provenance.handOffKey(d.partition(), d.seq(),
                d.reason())));
        PartitionId to = new PartitionId(target.queueId(), CopyRouting.destinationPartition(target, m));
        return partitions.submit(to, new PartitionCommand.Send(List.of(copy)))
                .thenAccept(o -> {
                    if (o.response() instanceof PartitionResponse.Rejected r) {
                        throw new IllegalStateException("the dead-letter queue refused the copy: " + r.failure());
                    }
                });
    }

    @Override
    public void close() {
        scheduler.shutdownNow();
    }
}
