package io.sluice.backend.agent;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.sluice.catalog.QueueMetadata;
import io.sluice.common.SqsLimits;
import io.sluice.common.validation.QueueArn;
import io.sluice.common.validation.QueueAttributesValidator;
import io.sluice.common.validation.RedrivePolicy;
import io.sluice.metadata.image.ClusterImage;
import io.sluice.partition.Effect;
import io.sluice.partition.NewMessage;
import io.sluice.partition.OutcomeCodec;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionId;
import io.sluice.partition.PartitionResponse;
import io.sluice.partition.PartitionService;
import io.sluice.partition.StoredMessage;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Executes the dead-letter hand-offs of the partitions this process is the primary of (in a cluster, the shards it
 * leads; in {@code sluice dev}, its one shard): copies the messages into their queue's dead-letter queue with their
 * history, and only once the copies are durable acknowledges the hand-offs, which removes the source copies. One owner
 * per hand-off, where its data lives: frontends take no part.
 *
 * <ul>
 *   <li>In batches: a source partition's pending hand-offs move up to {@link #BATCH} at a time, oldest first, as one
 *       send per dead-letter partition (at most {@link #BATCH_BYTES} of bodies each, one after another) and one
 *       acknowledgement; batches of different source partitions run side by side, at most {@link #MAX_IN_FLIGHT} at
 *       once, and a partition's next batch starts as soon as its last one is done. One source partition's hand-offs
 *       are never copied out of order, so two messages of one FIFO group reach the dead-letter queue in their
 *       order.</li>
 *   <li>A batch starts as soon as the primary applies a hand-off (the state machine's effect) and, until
 *       acknowledged, on every scan of the primary's pending hand-offs ({@link #SCAN_MILLIS}): after a restart or a
 *       leader change the new primary re-derives them from its state.</li>
 *   <li>At least once, idempotent at the dead-letter queue: every copy carries the hand-off's key (source queue id,
 *       partition and seq) and the dead-letter queue stores one copy per key within its deduplication window, so a
 *       retry, or an old and a new leader executing one hand-off at once, store one copy.</li>
 *   <li>Never into a queue that is gone: before acknowledging, the dead-letter queue is looked up at the metadata group
 *       (not the cached catalog, which lags a deletion by up to its refresh period); copies made into a queue deleted
 *       meanwhile are not acknowledged, so the messages stay pending at the source.</li>
 *   <li>Bounded retries: a batch that failed (dead-letter shard unreachable, target queue missing) makes its source
 *       partition wait {@link #FIRST_RETRY_MILLIS}, doubling up to {@link #MAX_RETRY_MILLIS}, before it is tried
 *       again. A hand-off stays pending (and counted in the queue metrics) until it succeeds, its redrive policy is
 *       removed (it returns to the source queue), or the source's retention period has passed since it was handed off
 *       (the primary drops it). The partition holds a bounded number pending and stops making more at the bound.</li>
 *   <li>Never acknowledged without its copy: a body that cannot be read (the message gone, this process no longer
 *       the primary) leaves it to a later batch.</li>
 * </ul>
 */
public final class DeadLetterHandOffs implements PartitionService.EffectListener, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(DeadLetterHandOffs.class);
    static final long SCAN_MILLIS = 1_000;
    static final long FIRST_RETRY_MILLIS = 1_000;
    static final long MAX_RETRY_MILLIS = 30_000;
    /** Hand-offs of one source partition moved by one batch, at most. */
    static final int BATCH = 1000;
    /**
     * Message bytes ({@code OutcomeCodec.sizeOf}) one batch reads before it stops taking more (plus at most
     * {@link #READ_AHEAD} messages).
     */
    static final long BATCH_READ_BYTES = 4L * SqsLimits.MAX_BATCH_TOTAL_BYTES;
    /** Bodies read at once. */
    static final int READ_AHEAD = 32;
    /** Bodies and attributes in one send to a dead-letter partition (a send's limit; a larger message goes alone). */
    static final int BATCH_BYTES = SqsLimits.MAX_BATCH_TOTAL_BYTES;
    /** Source partitions with a batch running at once (each holds at most about {@link #BATCH_READ_BYTES}). */
    static final int MAX_IN_FLIGHT = 4;

    private final Supplier<ClusterImage> catalog;
    private final Supplier<ClusterImage> freshCatalog;
    private final PartitionService partitions;
    private final Supplier<List<Effect.DeadLetter>> pending;
    private final LongSupplier nanoTime;
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "sluice-dead-letters");
        t.setDaemon(true);
        return t;
    });
    /** Metadata lookups before acknowledging (they block), one after another, off {@link #scheduler}. */
    private final ExecutorService catalogLookups = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "sluice-dead-letters-catalog");
        t.setDaemon(true);
        return t;
    });
    /** Source partitions with a batch running now. */
    private final Set<PartitionId> inProgress = ConcurrentHashMap.newKeySet();
    /** Source partitions whose last batch failed: failures so far and when they may run again. */
    private final Map<PartitionId, Retry> retries = new ConcurrentHashMap<>();
    private final AtomicBoolean scanQueued = new AtomicBoolean();
    private final AtomicLong moved = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();

    private record Retry(int failures, long notBeforeNanos) {
    }

    /** What a batch did: hand-offs copied and acknowledged, and those left pending (with why). */
    private record Result(int moved, int leftPending, Throwable cause) {
    }

    /**
     * @param catalog      the cached catalog: the source queue's redrive policy and the dead-letter queue's partitions
     * @param freshCatalog the catalog as the metadata group has it now (blocking; called on a thread of this driver's
     *                     own before each acknowledgement)
     * @param partitions   the data plane: reads the messages, stores their copies in the dead-letter queue (wherever
     *                     that lives) and acknowledges the hand-offs at their source
     * @param pending      the pending hand-offs of the partitions this process is the primary of now, oldest first
     *                     within each partition
     */
    public DeadLetterHandOffs(Supplier<ClusterImage> catalog, Supplier<ClusterImage> freshCatalog,
                              PartitionService partitions, Supplier<List<Effect.DeadLetter>> pending,
                              LongSupplier nanoTime) {
        this.catalog = catalog;
        this.freshCatalog = freshCatalog;
        this.partitions = partitions;
        this.pending = pending;
        this.nanoTime = nanoTime;
    }

    /** Starts the periodic scan of pending hand-offs (the first right away). */
    public DeadLetterHandOffs start() {
        scheduler.scheduleWithFixedDelay(this::scan, 0, SCAN_MILLIS, TimeUnit.MILLISECONDS);
        return this;
    }

    /** Hand-offs the primary just applied: a scan soon (called on the applying thread: only schedules). */
    @Override
    public void onEffects(List<Effect> effects) {
        for (Effect e : effects) {
            if (e instanceof Effect.DeadLetter) {
                requestScan();
                return;
            }
        }
    }

    /** One scan queued on the driver's thread, however many ask before it runs. */
    private void requestScan() {
        if (scanQueued.compareAndSet(false, true)) {
            try {
                scheduler.execute(() -> {
                    scanQueued.set(false);
                    scan();
                });
            } catch (RejectedExecutionException closed) {
                scanQueued.set(false);
            }
        }
    }

    /** Its counters: hand-offs moved, attempts failed. */
    public void bindMetrics(MeterRegistry registry) {
        FunctionCounter.builder("sluice.dead_letter.handoffs.moved", this, DeadLetterHandOffs::moved)
                .description("Dead-letter hand-offs this process copied to their dead-letter queue and acknowledged at"
                        + " their source, as the source's primary").register(registry);
        FunctionCounter.builder("sluice.dead_letter.handoffs.failed_attempts", this, DeadLetterHandOffs::failedAttempts)
                .description("Dead-letter hand-off attempts that failed (each is retried later, with a growing delay)")
                .register(registry);
    }

    /** Hand-offs copied and acknowledged by this process since it started. */
    public long moved() {
        return moved.get();
    }

    /** Hand-off attempts that failed (each is retried later): a failed batch counts each hand-off it left pending. */
    public long failedAttempts() {
        return failed.get();
    }

    /** One pass over the pending hand-offs: starts a batch for each source partition not busy and not backing off. */
    void scan() {
        try {
            Map<PartitionId, List<Effect.DeadLetter>> bySource = new LinkedHashMap<>();
            for (Effect.DeadLetter d : pending.get()) {
                bySource.computeIfAbsent(d.partition(), p -> new ArrayList<>()).add(d);
            }
            retries.keySet().retainAll(bySource.keySet()); // drained, or no longer ours
            long now = nanoTime.getAsLong();
            for (Map.Entry<PartitionId, List<Effect.DeadLetter>> e : bySource.entrySet()) {
                Retry r = retries.get(e.getKey());
                if (inProgress.size() >= MAX_IN_FLIGHT) {
                    break; // the next scan, or a batch's end, starts the rest
                }
                if ((r == null || now - r.notBeforeNanos() >= 0) && inProgress.add(e.getKey())) {
                    List<Effect.DeadLetter> all = e.getValue();
                    start(e.getKey(), List.copyOf(all.subList(0, Math.min(BATCH, all.size()))));
                }
            }
        } catch (RuntimeException e) {
            LOG.warn("scanning pending dead-letter hand-offs failed (retried on the next scan)", e);
        }
    }

    private void start(PartitionId source, List<Effect.DeadLetter> batch) {
        CompletableFuture<Result> done;
        try {
            done = move(source, batch);
        } catch (RuntimeException e) {
            done = CompletableFuture.failedFuture(e);
        }
        done.whenComplete((result, e) -> {
            Result r = e != null ? new Result(0, batch.size(), e) : result;
            moved.addAndGet(r.moved());
            if (r.leftPending() == 0) {
                retries.remove(source);
                inProgress.remove(source);
                if (r.moved() > 0) {
                    requestScan(); // its next batch, if it has more (nothing moved: the periodic scan looks again)
                }
                return;
            }
            Retry previous = retries.get(source);
            int failures = previous == null ? 1 : previous.failures() + 1;
            long delay = Math.min(MAX_RETRY_MILLIS, FIRST_RETRY_MILLIS << Math.min(failures - 1, 20));
            retries.put(source, new Retry(failures, nanoTime.getAsLong() + TimeUnit.MILLISECONDS.toNanos(delay)));
            inProgress.remove(source);
            failed.addAndGet(r.leftPending()); // last: a failed attempt counted is fully booked
            if (failures == 1 || failures % 10 == 0) {
                Throwable cause = r.cause() instanceof CompletionException && r.cause().getCause() != null
                        ? r.cause().getCause() : r.cause();
                LOG.warn("dead-letter hand-offs of partition {}: {} of {} left pending ({} failure(s) in a row), next"
                        + " try in {} ms: {}", source, r.leftPending(), batch.size(), failures, delay,
                        String.valueOf(cause));
            }
        });
    }

    /**
     * Copies then acknowledges one batch of a source partition; completes with nothing left pending when there is
     * nothing to do for it (its queue or redrive policy gone: the primary's own commands decide its fate).
     */
    private CompletableFuture<Result> move(PartitionId source, List<Effect.DeadLetter> batch) {
        ClusterImage image = catalog.get();
        QueueMetadata sourceQueue = image.queueById(source.queueId()).orElse(null);
        if (sourceQueue == null) {
            return CompletableFuture.completedFuture(new Result(0, 0, null)); // the reconciler retires its partitions
        }
        var attributes = QueueAttributesValidator.forCreate(sourceQueue.name(), sourceQueue.attributes());
        RedrivePolicy policy = attributes.isOk() ? attributes.value().redrivePolicy() : null;
        Optional<QueueArn> targetArn = policy == null ? Optional.empty() : policy.targetArn();
        if (targetArn.isEmpty()) {
            // no redrive policy any more: configuring the partition without one returns its hand-offs to the queue
            return CompletableFuture.completedFuture(new Result(0, 0, null));
        }
        QueueArn arn = targetArn.get();
        QueueMetadata target = image.queues().get(arn.queueName());
        if (target == null) {
            return CompletableFuture.completedFuture(new Result(0, batch.size(),
                    new IllegalStateException("its dead-letter queue " + arn.queueName() + " does not exist")));
        }
        // a redrive target is in the source's account and region: the source's ARN is the target's with its name
        String sourceArn = "arn:" + arn.partition() + ":sqs:" + arn.region() + ":" + arn.accountId() + ":"
                + sourceQueue.name();
        return readPrefix(source, batch, new ArrayList<>(), 0).thenCompose(read -> {
            // the copies by dead-letter partition, in seq order: a prefix of the batch (see readPrefix)
            Map<PartitionId, List<Copy>> byDestination = new LinkedHashMap<>();
            for (int i = 0; i < read.messages().size(); i++) {
                Copy c = copy(target, read.messages().get(i), batch.get(i), sourceArn);
                byDestination.computeIfAbsent(c.to(), p -> new ArrayList<>()).add(c);
            }
            // an unreadable body counts as a failed attempt; the hand-offs after it were not attempted
            int attempted = read.messages().size() + (read.unreadable() == null ? 0 : 1);
            return sendAll(byDestination).thenCompose(copied -> acknowledge(source, target, copied, attempted,
                    read.unreadable()));
        });
    }

    /** The bodies read, in the batch's order, and why reading stopped early (null: it did not, or at its budget). */
    private record Read(List<StoredMessage> messages, Throwable unreadable) {
    }

    /**
     * Reads the batch's bodies from {@code read.size()} on, {@link #READ_AHEAD} at a time, until {@link #BATCH_READ_BYTES}
     * are held or the first body that cannot be read (acknowledged meanwhile, or this process no longer the primary):
     * what is copied is a prefix of the batch, so one source partition's messages are never copied out of order.
     */
    private CompletableFuture<Read> readPrefix(PartitionId source, List<Effect.DeadLetter> batch,
                                               List<StoredMessage> read, long bytes) {
        if (read.size() >= batch.size() || bytes >= BATCH_READ_BYTES) {
            return CompletableFuture.completedFuture(new Read(read, null));
        }
        List<CompletableFuture<StoredMessage>> reads = new ArrayList<>(READ_AHEAD);
        for (int i = read.size(); i < Math.min(batch.size(), read.size() + READ_AHEAD); i++) {
            reads.add(partitions.readMessage(source, batch.get(i).seq()));
        }
        return CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new)).thenCompose(v -> {
            long total = bytes;
            for (CompletableFuture<StoredMessage> r : reads) {
                StoredMessage m = r.join();
                if (m == null) {
                    return CompletableFuture.completedFuture(new Read(read, new IllegalStateException(
                            "the body of seq " + batch.get(read.size()).seq() + " could not be read")));
                }
                read.add(m);
                total += OutcomeCodec.sizeOf(m);
            }
            return readPrefix(source, batch, read, total);
        });
    }

    /** A message's copy and the dead-letter partition it goes to. */
    private record Copy(long seq, PartitionId to, NewMessage message, long bytes) {
    }

    private static Copy copy(QueueMetadata target, StoredMessage m, Effect.DeadLetter d, String sourceArn) {
        NewMessage copy = new NewMessage(m.messageId(), m.body(), m.attributes(), m.systemAttributes(), 0, m.groupId(),
                m.deduplicationId(), m.senderId(), new NewMessage.Provenance(m.sentTimestampMillis(), d.receiveCount(),
                d.firstReceiveTimestampMillis(), sourceArn, NewMessage.Provenance.handOffKey(d.partition(), d.seq(),
                d.reason())));
        return new Copy(d.seq(), new PartitionId(target.queueId(), CopyRouting.destinationPartition(target, m)), copy,
                OutcomeCodec.sizeOf(m));
    }

    /** Each dead-letter partition's copies in sends one after another; completes with the seqs copied (and why not all). */
    private CompletableFuture<Copied> sendAll(Map<PartitionId, List<Copy>> byDestination) {
        List<CompletableFuture<Copied>> chains = new ArrayList<>();
        for (Map.Entry<PartitionId, List<Copy>> e : byDestination.entrySet()) {
            chains.add(sendChunks(e.getKey(), e.getValue(), 0, new ArrayList<>()));
        }
        return CompletableFuture.allOf(chains.toArray(CompletableFuture[]::new)).thenApply(v -> {
            List<Long> seqs = new ArrayList<>();
            Throwable cause = null;
            for (CompletableFuture<Copied> c : chains) {
                seqs.addAll(c.join().seqs());
                cause = cause != null ? cause : c.join().cause();
            }
            return new Copied(seqs, cause);
        });
    }

    private record Copied(List<Long> seqs, Throwable cause) {
    }

    /** Sends {@code copies} from {@code from} on, a chunk at a time; stops at the first chunk that fails. */
    private CompletableFuture<Copied> sendChunks(PartitionId to, List<Copy> copies, int from, List<Long> copied) {
        if (from >= copies.size()) {
            return CompletableFuture.completedFuture(new Copied(copied, null));
        }
        int end = from;
        long bytes = 0;
        while (end < copies.size() && (end == from || bytes + copies.get(end).bytes() <= BATCH_BYTES)) {
            bytes += copies.get(end++).bytes();
        }
        List<Copy> chunk = copies.subList(from, end);
        int next = end;
        return partitions.submit(to, new PartitionCommand.Send(chunk.stream().map(Copy::message).toList()))
                .handle((o, e) -> {
                    Throwable cause = e != null ? e : o.response() instanceof PartitionResponse.Rejected r
                            ? new IllegalStateException("the dead-letter queue refused the copies: " + r.failure())
                            : null;
                    return cause;
                }).thenCompose(cause -> {
                    if (cause != null) {
                        return CompletableFuture.completedFuture(new Copied(copied, cause));
                    }
                    chunk.forEach(c -> copied.add(c.seq()));
                    return sendChunks(to, copies, next, copied);
                });
    }

    /**
     * Acknowledges the hand-offs whose copies are durable, once the metadata group confirms that their dead-letter
     * queue still exists (copies into a queue deleted meanwhile went nowhere: they stay pending).
     */
    private CompletableFuture<Result> acknowledge(PartitionId source, QueueMetadata target, Copied copied, int batch,
                                                  Throwable unreadable) {
        Throwable cause = copied.cause() != null ? copied.cause() : unreadable;
        if (copied.seqs().isEmpty()) {
            return CompletableFuture.completedFuture(new Result(0, batch, cause));
        }
        return CompletableFuture.supplyAsync(() -> freshCatalog.get().queueById(target.queueId()).isPresent(),
                catalogLookups).thenCompose(exists -> {
                    if (!exists) {
                        return CompletableFuture.completedFuture(new Result(0, batch, new IllegalStateException(
                                "its dead-letter queue " + target.name() + " was deleted")));
                    }
                    return partitions.submit(source, new PartitionCommand.AcknowledgeDeadLetters(copied.seqs()))
                            .thenApply(o -> {
                                if (o.response() instanceof PartitionResponse.Rejected r) {
                                    throw new IllegalStateException("the source refused the acknowledgement: "
                                            + r.failure());
                                }
                                int acknowledged = copied.seqs().size();
                                return new Result(acknowledged, batch - acknowledged, cause);
                            });
                });
    }

    @Override
    public void close() {
        scheduler.shutdownNow();
        catalogLookups.shutdownNow();
    }
}
