package io.sluice.backend.agent;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.sluice.catalog.QueueMetadata;
import io.sluice.common.SqsError;
import io.sluice.common.SqsLimits;
import io.sluice.common.validation.QueueArn;
import io.sluice.metadata.image.ClusterImage;
import io.sluice.partition.DeliveredMessage;
import io.sluice.partition.MoveTask;
import io.sluice.partition.NewMessage;
import io.sluice.partition.OutcomeCodec;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionId;
import io.sluice.partition.PartitionOutcome;
import io.sluice.partition.PartitionResponse;
import io.sluice.partition.PartitionService;
import io.sluice.partition.StoredMessage;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Drives the message move tasks (StartMessageMoveTask) of the partitions this process is the primary of: the task
 * is replicated partition state ({@link MoveTask}), this is only its engine. A step leases a batch to the task, copies
 * each message to its destination (the task's, or the queue it was dead-lettered from) with its id, body, attributes
 * and send time, and finishes the batch, which removes the moved messages from the dead-letter queue and counts them.
 *
 * <ul>
 *   <li>Survives its process: a new primary finds the task in its state on its next scan ({@link #SCAN_MILLIS}) and
 *       finishes the batch the old one leased before it takes another. Copies carry a key (this partition and seq)
 *       the destination stores once within its deduplication window, so a batch copied twice is stored once.</li>
 *   <li>MaxNumberOfMessagesPerSecond holds cluster-wide: each of the queue's partitions moves its share of the rate,
 *       paced by scheduling the next batch, never by sleeping.</li>
 *   <li>A destination that refuses a copy (gone, full) fails the task: the moved part of the batch is removed, the
 *       rest becomes visible again in the dead-letter queue. A step that cannot reach a shard fails nothing: the
 *       batch stays leased and the next scan retries it. A destination this process's cached catalog does not list
 *       is looked up again at the metadata group before it counts as refused: a queue created just before the task
 *       (its creation not yet in this process's cache) is found.</li>
 *   <li>In batches: a step leases up to {@link #BATCH} messages and sends each destination partition's copies in
 *       chunks of at most {@link #SEND_BYTES}, one after another, in the order leased (so a FIFO group keeps its
 *       order), then finishes the batch with one command.</li>
 *   <li>Never into a queue that is gone: before finishing, the destinations are looked up at the metadata group (the
 *       cached catalog lags a deletion); copies made into a queue deleted meanwhile do not count as moved and fail the
 *       task, so the messages stay in the dead-letter queue.</li>
 * </ul>
 */
public final class MoveTaskDriver implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(MoveTaskDriver.class);
    static final long SCAN_MILLIS = 1_000;
    /**
     * Messages leased per step. The engine takes up to {@code MoveTasks.MAX_BATCH} (32) since 2026-12-06, but a replica
     * of an older release caps a lease at 10, and every replica must lease the same messages: raise this to 32 in a
     * release after every backend runs this one.
     */
    static final int BATCH = 10;
    /** Bodies and attributes in one send to a destination partition (a send's limit; a larger message goes alone). */
    static final int SEND_BYTES = SqsLimits.MAX_BATCH_TOTAL_BYTES;

    private final Supplier<ClusterImage> catalog;
    private final Supplier<ClusterImage> refreshCatalog;
    private final PartitionService partitions;
    private final Supplier<List<MoveTask.Located>> toDrive;
    private final Predicate<PartitionId> primaryOf;
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "sluice-move-tasks");
        t.setDaemon(true);
        return t;
    });
    /**
     * Catalog lookups for destinations the cache lacks: they block (a metadata read, retried for seconds while the
     * group has no leader), so they wait here, one after another, not on {@link #scheduler}, which keeps driving the
     * tasks whose destinations are known.
     */
    private final ExecutorService catalogLookups = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "sluice-move-tasks-catalog");
        t.setDaemon(true);
        return t;
    });
    /** Tasks (partition and id) with a step running or scheduled here. */
    private final Set<String> driving = ConcurrentHashMap.newKeySet();
    private final AtomicLong moved = new AtomicLong();

    /**
     * @param catalog        the cached catalog: destinations by ARN, the source queue's partition count
     * @param refreshCatalog brings the cached catalog up to the metadata group's now and returns it (blocking; called
     *                       on a thread of the driver's own when a leased message's destination is not in the cache)
     * @param partitions     the data plane: the task's commands to its own partition, copies to their destinations
     * @param toDrive        the move tasks with work to do in the partitions this process is the primary of now
     * @param primaryOf      whether this process is a partition's primary now (checked before each batch)
     */
    public MoveTaskDriver(Supplier<ClusterImage> catalog, Supplier<ClusterImage> refreshCatalog,
                          PartitionService partitions, Supplier<List<MoveTask.Located>> toDrive,
                          Predicate<PartitionId> primaryOf) {
        this.catalog = catalog;
        this.refreshCatalog = refreshCatalog;
        this.partitions = partitions;
        this.toDrive = toDrive;
        this.primaryOf = primaryOf;
    }

    /** Starts the periodic scan for tasks (the first right away). */
    public MoveTaskDriver start() {
        scheduler.scheduleWithFixedDelay(this::scan, 0, SCAN_MILLIS, TimeUnit.MILLISECONDS);
        return this;
    }

    /** Messages this process moved since it started. */
    public long moved() {
        return moved.get();
    }

    public void bindMetrics(MeterRegistry registry) {
        FunctionCounter.builder("sluice.move_tasks.moved", this, MoveTaskDriver::moved)
                .description("Messages this process moved for message move tasks (StartMessageMoveTask), as the"
                        + " primary of their dead-letter queue's partition").register(registry);
    }

    /** One pass: starts driving the tasks found that are not driven here yet. */
    void scan() {
        try {
            for (MoveTask.Located l : toDrive.get()) {
                String key = key(l.partition(), l.task().taskId());
                if (driving.add(key)) {
                    scheduler.execute(() -> step(l.partition(), l.task(), key));
                }
            }
        } catch (RuntimeException e) {
            LOG.warn("scanning message move tasks failed (retried on the next scan)", e);
        }
    }

    private static String key(PartitionId p, String taskId) {
        return p.queueId() + "/" + p.index() + "/" + taskId;
    }

    /**
     * One batch of a task while this process is its partition's primary; schedules the next at the task's pace. The
     * task's destination and rate never change; whether it still runs, the lease answers.
     */
    private void step(PartitionId partition, MoveTask task, String key) {
        boolean ours;
        try {
            ours = primaryOf.test(partition);
        } catch (RuntimeException e) {
            ours = false;
        }
        if (!ours) { // the new primary's scan takes it over
            driving.remove(key);
            return;
        }
        double rate = ratePerPartition(task, partition);
        int batch = rate <= 0 ? BATCH : (int) Math.max(1, Math.min(BATCH, Math.floor(rate)));
        CompletableFuture<Integer> done;
        try {
            done = partitions.submit(partition, new PartitionCommand.LeaseMoveBatch(task.taskId(), batch))
                    .thenCompose(o -> moveBatch(partition, task, o));
        } catch (RuntimeException e) {
            done = CompletableFuture.failedFuture(e);
        }
        done.whenComplete((n, e) -> {
            if (e != null || n == null) {
                driving.remove(key); // the batch stays leased; the next scan carries on with it
                if (e != null) {
                    LOG.info("move task {} on {}: a step failed, retried on the next scan: {}", task.taskId(),
                            partition, e.getCause() != null ? e.getCause().toString() : e.toString());
                }
                return;
            }
            long delayMillis = rate <= 0 ? 0 : (long) Math.ceil(n * 1000.0 / rate);
            try {
                scheduler.schedule(() -> step(partition, task, key), delayMillis, TimeUnit.MILLISECONDS);
            } catch (RejectedExecutionException closed) {
                driving.remove(key);
            }
        });
    }

    /** This partition's share of the task's rate (messages per second), or 0 for no limit. */
    private double ratePerPartition(MoveTask task, PartitionId partition) {
        if (task.ratePerSecond() <= 0) {
            return 0;
        }
        int count = catalog.get().queueById(partition.queueId()).map(QueueMetadata::partitions).orElse(1);
        return (double) task.ratePerSecond() / Math.max(1, count);
    }

    /**
     * Copies a leased batch and finishes it.
     *
     * @return how many messages it leased, or null when the lease answered none (the task completed, cancelled or
     *         refused here): the driving stops
     */
    private CompletableFuture<Integer> moveBatch(PartitionId from, MoveTask task, PartitionOutcome leased) {
        if (!(leased.response() instanceof PartitionResponse.Received received) || received.deliveries().isEmpty()) {
            return CompletableFuture.completedFuture(null); // completed, cancelled, refused: nothing to drive
        }
        ClusterImage cached = catalog.get();
        boolean lookUp = leased.delivered().stream()
                .anyMatch(d -> destinationArn(task, d) != null && destinationOf(task, d, cached) == null);
        if (!lookUp) {
            return copyBatch(from, task, leased, received, cached);
        }
        // a destination the cached catalog does not list may have been created since its last refresh (a queue made
        // through a frontend a moment ago): ask the metadata group before a missing destination counts as a refusal;
        // if the group does not answer, the step fails and the next scan retries the batch
        return CompletableFuture.supplyAsync(refreshCatalog, catalogLookups)
                .thenCompose(fresh -> copyBatch(from, task, leased, received, fresh));
    }

    /** The ARN a leased message is copied to: the task's destination, or the queue it was dead-lettered from. */
    private static String destinationArn(MoveTask task, DeliveredMessage d) {
        return task.destinationArn() != null ? task.destinationArn() : d.message().deadLetterSourceArn();
    }

    /** The queue of {@code destinationArn(task, d)} in {@code image}, or null. */
    private static QueueMetadata destinationOf(MoveTask task, DeliveredMessage d, ClusterImage image) {
        String arn = destinationArn(task, d);
        return arn == null ? null : QueueArn.parse(arn).map(a -> image.queues().get(a.queueName())).orElse(null);
    }

    private CompletableFuture<Integer> copyBatch(PartitionId from, MoveTask task, PartitionOutcome leased,
                                                 PartitionResponse.Received received, ClusterImage image) {
        // copies grouped by destination partition, each group in lease order
        Map<PartitionId, List<DeliveredMessage>> byDestination = new LinkedHashMap<>();
        Map<PartitionId, QueueMetadata> destinations = new LinkedHashMap<>();
        String refused = null;
        for (DeliveredMessage d : leased.delivered()) {
            QueueMetadata dest = destinationOf(task, d, image);
            if (dest == null) {
                refused = SqsError.QUEUE_DOES_NOT_EXIST.queryCode();
                continue;
            }
            PartitionId to = new PartitionId(dest.queueId(), CopyRouting.destinationPartition(dest, d.message()));
            byDestination.computeIfAbsent(to, k -> new ArrayList<>()).add(d);
            destinations.put(to, dest);
        }
        Map<PartitionId, CompletableFuture<Copied>> copies = new LinkedHashMap<>();
        byDestination.forEach((to, messages) ->
                copies.put(to, copyInOrder(from, to, messages, 0, new Copied(new ArrayList<>(), null))));
        String firstRefusal = refused;
        return CompletableFuture.allOf(copies.values().toArray(CompletableFuture[]::new))
                .thenCompose(v -> CompletableFuture.supplyAsync(refreshCatalog, catalogLookups))
                .thenCompose(fresh -> {
            List<Long> movedSeqs = new ArrayList<>();
            String failure = firstRefusal;
            for (Map.Entry<PartitionId, CompletableFuture<Copied>> c : copies.entrySet()) {
                Copied copied = c.getValue().join();
                if (!copied.seqs().isEmpty() && fresh.queueById(c.getKey().queueId()).isEmpty()) {
                    // its destination was deleted meanwhile (the cached catalog lags a deletion): copied nowhere
                    failure = failure != null ? failure : SqsError.QUEUE_DOES_NOT_EXIST.queryCode();
                    continue;
                }
                movedSeqs.addAll(copied.seqs());
                failure = failure != null ? failure : copied.refusal();
            }
            List<Long> batch = received.deliveries().stream().map(PartitionResponse.Delivery::seq).toList();
            if (failure != null) {
                LOG.info("move task {} on {}: a copy was refused ({}): the task fails after {} of this batch's {}",
                        task.taskId(), from, failure, movedSeqs.size(), batch.size());
            }
            return partitions.submit(from, new PartitionCommand.FinishMoveBatch(task.taskId(), batch, movedSeqs,
                            failure))
                    .thenApply(o -> {
                        if (o.response() instanceof PartitionResponse.Count count) {
                            moved.addAndGet(count.count());
                        }
                        return received.deliveries().size();
                    });
        });
    }

    private record Copied(List<Long> seqs, String refusal) {
    }

    /**
     * Sends {@code messages[i..]} in chunks of at most {@link #SEND_BYTES}, one chunk after another, in lease order;
     * stops at the first refusal (what follows is not moved).
     */
    private CompletableFuture<Copied> copyInOrder(PartitionId from, PartitionId to, List<DeliveredMessage> messages,
                                                  int i, Copied soFar) {
        if (i >= messages.size()) {
            return CompletableFuture.completedFuture(soFar);
        }
        List<NewMessage> chunk = new ArrayList<>();
        int end = i;
        long bytes = 0;
        while (end < messages.size()
                && (end == i || bytes + OutcomeCodec.sizeOf(messages.get(end).message()) <= SEND_BYTES)) {
            DeliveredMessage d = messages.get(end++);
            StoredMessage m = d.message();
            bytes += OutcomeCodec.sizeOf(m);
            // a redriven message starts its receive count afresh, or it would bounce straight back
            chunk.add(new NewMessage(m.messageId(), m.body(), m.attributes(), m.systemAttributes(), 0,
                    m.groupId(), m.deduplicationId(), m.senderId(), new NewMessage.Provenance(m.sentTimestampMillis(),
                    0, 0, null, NewMessage.Provenance.handOffKey(from, d.delivery().seq()))));
        }
        int next = end;
        return sendCopy(to, chunk).thenCompose(o -> {
            if (!(o.response() instanceof PartitionResponse.Sent)) {
                String code = o.response() instanceof PartitionResponse.Rejected r
                        ? r.failure().error().queryCode() : SqsError.INTERNAL_FAILURE.queryCode();
                return CompletableFuture.completedFuture(new Copied(soFar.seqs(), code));
            }
            for (int k = i; k < next; k++) {
                soFar.seqs().add(messages.get(k).delivery().seq());
            }
            return copyInOrder(from, to, messages, next, soFar);
        });
    }


    /**
     * Sends a copy; a destination partition the catalog lists that its shard has not created yet (its partition count
     * just raised) is waited for once, as a frontend's send does, before the answer counts as a refusal.
     */
    private CompletableFuture<PartitionOutcome> sendCopy(PartitionId to, List<NewMessage> copies) {
        PartitionCommand.Send send = new PartitionCommand.Send(copies);
        return partitions.submit(to, send).thenCompose(o -> {
            if (!(o.response() instanceof PartitionResponse.Rejected r)
                    || r.failure().error() != SqsError.QUEUE_DOES_NOT_EXIST) {
                return CompletableFuture.completedFuture(o);
            }
            QueueMetadata dest = catalog.get().queueById(to.queueId()).orElse(null);
            if (dest == null || to.index() >= dest.partitions()) {
                return CompletableFuture.completedFuture(o);
            }
            return partitions.awaitConfigured(to, dest.configVersion()).thenCompose(configured -> configured
                    ? partitions.submit(to, send) : CompletableFuture.completedFuture(o));
        });
    }

    @Override
    public void close() {
        scheduler.shutdownNow();
        catalogLookups.shutdownNow();
    }
}
