package io.sluice.frontend.service;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sluice.catalog.QueueMetadata;
import io.sluice.common.SqsError;
import io.sluice.common.SqsException;
import io.sluice.common.SqsFailure;
import io.sluice.common.validation.QueueAttributes;
import io.sluice.partition.DeliveredMessage;
import io.sluice.partition.NewMessage;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionId;
import io.sluice.partition.PartitionResponse;
import io.sluice.partition.StoredMessage;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Dead-letter redrive (StartMessageMoveTask and friends, spec 8.2). A task receives from the dead-letter queue in
 * batches, sends each message to its destination (the task's, or the queue it was dead-lettered from) with its
 * id, body, attributes and send time, and deletes it from the dead-letter queue only after that send is durable:
 * at least once. The rate is kept by scheduling the next batch, never by sleeping. Tasks live in this process's
 * memory: after a restart the history is gone and a running task must be started again.
 */
public final class MoveTasks {
    private static final int BATCH = 10;

    public enum Status { RUNNING, COMPLETED, CANCELLING, CANCELLED, FAILED }

    /** One task; mutable fields are only written by its own schedule and by cancel. */
    public static final class Task {
        final String id = UUID.randomUUID().toString();
        final String sourceArn;
        final String destinationArn;
        final Integer ratePerSecond;
        final long startedMillis;
        final long toMove;
        final AtomicLong moved = new AtomicLong();
        final AtomicLong steps = new AtomicLong();
        /** Consecutive steps that found nothing: a full round of empty partitions completes the task. */
        final AtomicLong emptySteps = new AtomicLong();
        volatile Status status = Status.RUNNING;
        volatile String failureReason;

        Task(String sourceArn, String destinationArn, Integer ratePerSecond, long startedMillis, long toMove) {
            this.sourceArn = sourceArn;
            this.destinationArn = destinationArn;
            this.ratePerSecond = ratePerSecond;
            this.startedMillis = startedMillis;
            this.toMove = toMove;
        }

        public String handle() {
            String raw = id + "|" + sourceArn;
            return Base64.getUrlEncoder().withoutPadding().encodeToString(raw.getBytes(StandardCharsets.UTF_8));
        }
    }

    private final SqsServices services;
    private final ScheduledExecutorService scheduler;
    private final Map<String, Task> tasks = new ConcurrentHashMap<>();

    public MoveTasks(SqsServices services, ScheduledExecutorService scheduler) {
        this.services = services;
        this.scheduler = scheduler;
    }

    public CompletableFuture<Task> start(String sourceArn, String destinationArn, Integer rate) {
        QueueMetadata source = services.queueByArn(sourceArn).orElseThrow(() -> new SqsException(
                SqsError.RESOURCE_NOT_FOUND, "The resource that you specified for the SourceArn parameter doesn't exist."));
        if (deadLetterSources(sourceArn).isEmpty()) {
            throw new SqsException(SqsError.INVALID_PARAMETER_VALUE, "Source queue must be configured as a Dead Letter"
                    + " Queue.");
        }
        if (destinationArn != null) {
            QueueMetadata destination = services.queueByArn(destinationArn).orElseThrow(() -> new SqsException(
                    SqsError.RESOURCE_NOT_FOUND, "The resource that you specified for the DestinationArn parameter"
                    + " doesn't exist."));
            if (destination.fifo() != source.fifo()) { // the destination would refuse every copy
                throw new SqsException(SqsError.INVALID_PARAMETER_VALUE, "The source queue and the destination queue"
                        + " must be of the same queue type.");
            }
        }
        if (rate != null && (rate < 1 || rate > 500)) {
            throw new SqsException(SqsError.INVALID_PARAMETER_VALUE, "Value " + rate + " for parameter"
                    + " MaxNumberOfMessagesPerSecond is invalid. Reason: Must be between 1 and 500.");
        }
        synchronized (this) {
            if (tasks.values().stream().anyMatch(t -> t.sourceArn.equals(sourceArn) && t.status == Status.RUNNING)) {
                throw new SqsException(SqsError.INVALID_PARAMETER_VALUE, "There is already a task running. Only one"
                        + " active task is allowed for a source queue arn at a given time.");
            }
        }
        return visible(source).thenApply(toMove -> {
            Task task = new Task(sourceArn, destinationArn, rate, services.nowMillis(), toMove);
            tasks.put(task.id, task);
            pruneFinished(sourceArn);
            scheduler.execute(() -> step(task));
            return task;
        });
    }

    /** The names of the queues whose RedrivePolicy targets {@code dlqArn}: where a redrive without destination writes. */
    public List<String> deadLetterSources(String dlqArn) {
        return services.catalog().list("").stream().filter(q -> {
            QueueAttributes a = services.attributes(q);
            return a.redrivePolicy() != null && dlqArn.equals(a.redrivePolicy().deadLetterTargetArn());
        }).map(QueueMetadata::name).toList();
    }

    /** Tasks kept per source: ListMessageMoveTasks shows at most this many (SQS: 10). */
    static final int KEPT_PER_SOURCE = 10;

    /** Forgets finished tasks of a source beyond its {@link #KEPT_PER_SOURCE} newest, so the map stays bounded. */
    private void pruneFinished(String sourceArn) {
        List<Task> newestFirst = tasks.values().stream().filter(t -> t.sourceArn.equals(sourceArn))
                .sorted(Comparator.comparingLong((Task t) -> t.startedMillis).reversed()).toList();
        for (Task old : newestFirst.subList(Math.min(KEPT_PER_SOURCE, newestFirst.size()), newestFirst.size())) {
            if (old.status != Status.RUNNING && old.status != Status.CANCELLING) {
                tasks.remove(old.id);
            }
        }
    }

    private CompletableFuture<Long> visible(QueueMetadata queue) {
        List<CompletableFuture<Integer>> parts = services.partitionIds(queue).stream()
                .map(id -> services.partitions().visibleNow(id)).toList();
        return CompletableFuture.allOf(parts.toArray(CompletableFuture[]::new))
                .thenApply(v -> parts.stream().mapToLong(CompletableFuture::join).sum());
    }

    /** Tasks of a source, newest first. */
    public List<Task> list(String sourceArn, int max) {
        if (services.queueByArn(sourceArn).isEmpty()) {
            throw new SqsException(SqsError.RESOURCE_NOT_FOUND,
                    "The resource that you specified for the SourceArn parameter doesn't exist.");
        }
        return tasks.values().stream().filter(t -> t.sourceArn.equals(sourceArn))
                .sorted(Comparator.comparingLong((Task t) -> t.startedMillis).reversed().thenComparing(t -> t.id))
                .limit(max).toList();
    }

    /** A task handle's parts, {@code base64url(id|sourceArn)} (what {@link Task#handle()} writes), if it decodes. */
    public record Handle(String taskId, String sourceArn) {
        public static java.util.Optional<Handle> parse(String handle) {
            if (handle == null) {
                return java.util.Optional.empty();
            }
            String raw;
            try {
                raw = new String(Base64.getUrlDecoder().decode(handle), StandardCharsets.UTF_8);
            } catch (IllegalArgumentException e) {
                return java.util.Optional.empty();
            }
            int bar = raw.indexOf('|');
            return bar > 0 && bar < raw.length() - 1
                    ? java.util.Optional.of(new Handle(raw.substring(0, bar), raw.substring(bar + 1)))
                    : java.util.Optional.empty();
        }
    }

    public long cancel(String handle) {
        Handle parsed = Handle.parse(handle).orElseThrow(() -> new SqsException(SqsError.INVALID_PARAMETER_VALUE,
                "Value for parameter TaskHandle is invalid."));
        Task task = tasks.get(parsed.taskId());
        if (task == null || !task.sourceArn.equals(parsed.sourceArn())) { // authorized on the handle's source
            throw new SqsException(SqsError.RESOURCE_NOT_FOUND, "Task does not exist.");
        }
        if (task.status != Status.RUNNING) {
            throw new SqsException(SqsError.INVALID_PARAMETER_VALUE, "Only active tasks can be cancelled.");
        }
        task.status = Status.CANCELLING;
        return task.moved.get();
    }

    public ObjectNode render(Task t) {
        ObjectNode n = io.sluice.frontend.action.Responses.object();
        if (t.status == Status.RUNNING) {
            n.put("TaskHandle", t.handle());
        }
        n.put("Status", t.status.name());
        n.put("SourceArn", t.sourceArn);
        if (t.destinationArn != null) {
            n.put("DestinationArn", t.destinationArn);
        }
        if (t.ratePerSecond != null) {
            n.put("MaxNumberOfMessagesPerSecond", t.ratePerSecond);
        }
        n.put("ApproximateNumberOfMessagesMoved", t.moved.get());
        n.put("ApproximateNumberOfMessagesToMove", t.toMove);
        if (t.failureReason != null) {
            n.put("FailureReason", t.failureReason);
        }
        n.put("StartedTimestamp", t.startedMillis);
        return n;
    }

    private void step(Task task) {
        if (task.status == Status.CANCELLING) {
            task.status = Status.CANCELLED;
            return;
        }
        long remaining = task.toMove - task.moved.get();
        Optional<QueueMetadata> source = services.queueByArn(task.sourceArn);
        if (remaining <= 0 || source.isEmpty()) {
            task.status = source.isEmpty() ? Status.FAILED : Status.COMPLETED;
            task.failureReason = source.isEmpty() ? "AWS.SimpleQueueService.NonExistentQueue" : null;
            return;
        }
        int batch = (int) Math.min(BATCH, Math.min(remaining, task.ratePerSecond == null ? BATCH : task.ratePerSecond));
        List<PartitionId> sourcePartitions = services.partitionIds(source.get());
        PartitionId from = sourcePartitions.get((int) (task.steps.getAndIncrement() % sourcePartitions.size()));
        services.partitions().submit(from, new PartitionCommand.Receive(batch, 60, null))
                .thenCompose(o -> moveAll(task, from, o.delivered()))
                .whenComplete((moved, e) -> {
                    if (e != null) {
                        task.status = Status.FAILED;
                        Throwable cause = e instanceof java.util.concurrent.CompletionException ? e.getCause() : e;
                        task.failureReason = cause instanceof SqsException s
                                ? s.failure().error().queryCode() : "AWS.SimpleQueueService.InternalError";
                    } else if (moved == 0 && task.emptySteps.incrementAndGet() >= sourcePartitions.size()) {
                        task.status = task.status == Status.CANCELLING ? Status.CANCELLED : Status.COMPLETED;
                    } else {
                        if (moved > 0) {
                            task.emptySteps.set(0);
                        }
                        long delayMillis = task.ratePerSecond == null ? 0 : moved * 1000L / task.ratePerSecond;
                        scheduler.schedule(() -> step(task), delayMillis, TimeUnit.MILLISECONDS);
                    }
                });
    }

    /**
     * Copies each leased message to its destination and deletes the source copy only once the destination has
     * stored it. A copy the destination refuses (it is gone, full, or of the other type) fails the task: the messages
     * not moved are released at once (visibility 0) and stay in the source, none is deleted without its copy.
     *
     * @return how many messages were moved
     */
    private CompletableFuture<Integer> moveAll(Task task, PartitionId from, List<DeliveredMessage> batch) {
        List<CompletableFuture<Void>> moves = new ArrayList<>();
        for (DeliveredMessage d : batch) {
            moves.add(moveOne(task, from, d));
        }
        return CompletableFuture.allOf(moves.toArray(CompletableFuture[]::new)).handle((v, e) -> {
            List<PartitionCommand.VisibilityChange> release = new ArrayList<>();
            java.util.concurrent.CompletionException failure = null;
            int moved = 0;
            for (int i = 0; i < moves.size(); i++) {
                try {
                    moves.get(i).join();
                    moved++;
                } catch (java.util.concurrent.CompletionException refused) {
                    release.add(new PartitionCommand.VisibilityChange(batch.get(i).delivery().receiptHandle(), 0));
                    failure = failure == null ? refused : failure;
                }
            }
            if (!release.isEmpty()) { // best effort: a lost release only keeps them leased to the end of the 60 s
                services.partitions().submit(from, new PartitionCommand.ChangeVisibility(release));
            }
            if (failure != null) {
                throw failure;
            }
            return moved;
        });
    }

    private CompletableFuture<Void> moveOne(Task task, PartitionId from, DeliveredMessage d) {
        StoredMessage m = d.message();
        String destArn = task.destinationArn != null ? task.destinationArn : m.deadLetterSourceArn();
        QueueMetadata dest = destArn == null ? null : services.queueByArn(destArn).orElse(null);
        if (dest == null) {
            return CompletableFuture.failedFuture(new SqsException(SqsError.QUEUE_DOES_NOT_EXIST,
                    "destination " + destArn + " does not exist"));
        }
        NewMessage copy = new NewMessage(m.messageId(), m.body(), m.attributes(), m.systemAttributes(), 0,
                m.groupId(), m.deduplicationId(), m.senderId(), new NewMessage.Provenance(m.sentTimestampMillis(),
                0, 0, null)); // a redriven message starts its receive count afresh, or it would bounce straight back
        int partition = dest.fifo() && m.groupId() != null && dest.partitions() > 1
                ? Math.floorMod(m.groupId().hashCode(), dest.partitions()) : 0;
        return services.partitions().submit(new PartitionId(dest.queueId(), partition),
                        new PartitionCommand.Send(List.of(copy)))
                .thenCompose(o -> {
                    if (!(o.response() instanceof PartitionResponse.Sent)) {
                        SqsFailure refused = o.response() instanceof PartitionResponse.Rejected r ? r.failure()
                                : SqsError.INTERNAL_FAILURE.failure();
                        throw new SqsException(refused);
                    }
                    return services.partitions().submit(from,
                            new PartitionCommand.Delete(List.of(d.delivery().receiptHandle())));
                })
                .thenRun(task.moved::incrementAndGet);
    }
}
