package io.sluice.frontend.service;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sluice.catalog.QueueMetadata;
import io.sluice.common.SqsError;
import io.sluice.common.SqsException;
import io.sluice.common.validation.QueueAttributes;
import io.sluice.frontend.action.Responses;
import io.sluice.partition.MoveTask;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionId;
import io.sluice.partition.PartitionOutcome;
import io.sluice.partition.PartitionResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

/**
 * Dead-letter redrive (StartMessageMoveTask and friends, spec 8.2) as the frontend sees it: validation, and the
 * task's commands to each partition of the dead-letter queue. The task itself is replicated partition state, moved by
 * each partition's primary (broker-backend's {@code MoveTaskDriver}), so it survives restarts and fail-overs of any
 * node; this class keeps nothing. ListMessageMoveTasks adds up the partitions' shares of a task.
 */
public final class MoveTasks {
    /** Tasks kept per source: ListMessageMoveTasks shows at most this many (SQS: 10). */
    static final int KEPT_PER_SOURCE = 10;

    /** A task as ListMessageMoveTasks shows it: its partitions' shares added up. */
    public record Task(String id, String sourceArn, String destinationArn, int ratePerSecond, long startedMillis,
                       long toMove, long moved, MoveTask.Status status, String failureReason) {
        public String handle() {
            String raw = id + "|" + sourceArn;
            return Base64.getUrlEncoder().withoutPadding().encodeToString(raw.getBytes(StandardCharsets.UTF_8));
        }
    }

    private final SqsServices services;

    public MoveTasks(SqsServices services) {
        this.services = services;
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
        String id = UUID.randomUUID().toString();
        long started = services.nowMillis();
        PartitionCommand.StartMoveTask command = new PartitionCommand.StartMoveTask(id, destinationArn,
                rate == null ? 0 : rate, started);
        List<PartitionId> parts = services.partitionIds(source);
        return list(source, sourceArn).thenCompose(existing -> {
            if (existing.stream().anyMatch(t -> t.status() == MoveTask.Status.RUNNING)) {
                throw alreadyRunning();
            }
            List<CompletableFuture<PartitionOutcome>> starts = parts.stream()
                    .map(p -> services.submitToQueue(source, p, command)).toList();
            return CompletableFuture.allOf(starts.toArray(CompletableFuture[]::new)).handle((v, e) -> {
                long toMove = 0;
                RuntimeException failure = null;
                List<PartitionId> accepted = new ArrayList<>();
                for (int i = 0; i < starts.size(); i++) {
                    PartitionOutcome o = starts.get(i).exceptionally(x -> null).join();
                    if (o != null && o.response() instanceof PartitionResponse.Count c) {
                        toMove += c.count();
                        accepted.add(parts.get(i));
                    } else if (failure == null) { // a task started meanwhile by another frontend, or unreachable
                        failure = o != null && o.response() instanceof PartitionResponse.Rejected r
                                ? new SqsException(r.failure()) : new SqsException(SqsError.SERVICE_UNAVAILABLE,
                                "The move task could not be started on every partition of the queue; retry.");
                    }
                }
                if (failure != null) { // all or nothing: the partitions that took it give it up (best effort)
                    accepted.forEach(p -> services.submitToQueue(source, p, new PartitionCommand.CancelMoveTask(id)));
                    throw failure;
                }
                return new Task(id, sourceArn, destinationArn, rate == null ? 0 : rate, started, toMove, 0,
                        MoveTask.Status.RUNNING, null);
            });
        });
    }

    private static SqsException alreadyRunning() {
        return new SqsException(SqsError.INVALID_PARAMETER_VALUE, "There is already a task running. Only one"
                + " active task is allowed for a source queue arn at a given time.");
    }

    /** The names of the queues whose RedrivePolicy targets {@code dlqArn}: where a redrive without destination writes. */
    public List<String> deadLetterSources(String dlqArn) {
        return services.catalog().list("").stream().filter(q -> {
            QueueAttributes a = services.attributes(q);
            return a.redrivePolicy() != null && dlqArn.equals(a.redrivePolicy().deadLetterTargetArn());
        }).map(QueueMetadata::name).toList();
    }

    /** Tasks of a source, newest first. */
    public CompletableFuture<List<Task>> list(String sourceArn, int max) {
        QueueMetadata source = services.queueByArn(sourceArn).orElseThrow(() -> new SqsException(
                SqsError.RESOURCE_NOT_FOUND, "The resource that you specified for the SourceArn parameter doesn't exist."));
        return list(source, sourceArn).thenApply(tasks -> tasks.stream().limit(max).toList());
    }

    /**
     * Every partition's tasks merged by id: counts added up; running while any partition is still moving, else failed
     * if any failed, cancelled if any was, completed otherwise.
     */
    private CompletableFuture<List<Task>> list(QueueMetadata source, String sourceArn) {
        List<CompletableFuture<List<MoveTask>>> parts = services.partitionIds(source).stream()
                .map(p -> services.partitions().moveTasks(p)).toList();
        return CompletableFuture.allOf(parts.toArray(CompletableFuture[]::new)).thenApply(v -> {
            Map<String, Task> merged = new LinkedHashMap<>();
            for (CompletableFuture<List<MoveTask>> part : parts) {
                for (MoveTask t : part.join()) {
                    merged.merge(t.taskId(), share(t, sourceArn), MoveTasks::add);
                }
            }
            List<Task> out = new ArrayList<>(merged.values());
            out.sort(Comparator.comparingLong(Task::startedMillis).reversed().thenComparing(Task::id));
            return out.subList(0, Math.min(out.size(), KEPT_PER_SOURCE));
        });
    }

    private static Task share(MoveTask t, String sourceArn) {
        return new Task(t.taskId(), sourceArn, t.destinationArn(), t.ratePerSecond(), t.startedMillis(), t.toMove(),
                t.moved(), t.status(), t.failureReason());
    }

    private static Task add(Task a, Task b) {
        MoveTask.Status status = rank(a.status()) >= rank(b.status()) ? a.status() : b.status();
        return new Task(a.id(), a.sourceArn(), a.destinationArn(), a.ratePerSecond(), a.startedMillis(),
                a.toMove() + b.toMove(), a.moved() + b.moved(), status,
                a.failureReason() != null ? a.failureReason() : b.failureReason());
    }

    private static int rank(MoveTask.Status s) {
        return switch (s) {
            case RUNNING -> 3;
            case FAILED -> 2;
            case CANCELLED -> 1;
            case COMPLETED -> 0;
        };
    }

    /** A task handle's parts, {@code base64url(id|sourceArn)} (what {@link Task#handle()} writes), if it decodes. */
    public record Handle(String taskId, String sourceArn) {
        public static Optional<Handle> parse(String handle) {
            if (handle == null) {
                return Optional.empty();
            }
            String raw;
            try {
                raw = new String(Base64.getUrlDecoder().decode(handle), StandardCharsets.UTF_8);
            } catch (IllegalArgumentException e) {
                return Optional.empty();
            }
            int bar = raw.indexOf('|');
            return bar > 0 && bar < raw.length() - 1
                    ? Optional.of(new Handle(raw.substring(0, bar), raw.substring(bar + 1)))
                    : Optional.empty();
        }
    }

    /**
     * Cancels the task on every partition of its source (the handle's: authorization checked that one).
     *
     * @return messages moved before the cancel
     */
    public CompletableFuture<Long> cancel(String handle) {
        Handle parsed = Handle.parse(handle).orElseThrow(() -> new SqsException(SqsError.INVALID_PARAMETER_VALUE,
                "Value for parameter TaskHandle is invalid."));
        QueueMetadata source = services.queueByArn(parsed.sourceArn()).orElseThrow(() -> new SqsException(
                SqsError.RESOURCE_NOT_FOUND, "Task does not exist."));
        return submitAll(source, new PartitionCommand.CancelMoveTask(parsed.taskId()))
                .thenApply(outcomes -> {
                    long moved = 0;
                    int cancelled = 0;
                    PartitionResponse.Rejected refusal = null;
                    for (PartitionOutcome o : outcomes) {
                        if (o.response() instanceof PartitionResponse.Count c) {
                            moved += c.count();
                            cancelled++;
                        } else if (o.response() instanceof PartitionResponse.Rejected r
                                && (refusal == null || r.failure().error() == SqsError.INVALID_PARAMETER_VALUE)) {
                            refusal = r; // "not active" outranks "does not exist" (a partition that never had it)
                        }
                    }
                    if (cancelled == 0) {
                        throw new SqsException(refusal == null ? SqsError.RESOURCE_NOT_FOUND.withMessage(
                                "Task does not exist.") : refusal.failure());
                    }
                    return moved;
                });
    }

    private CompletableFuture<List<PartitionOutcome>> submitAll(QueueMetadata queue, PartitionCommand command) {
        List<CompletableFuture<PartitionOutcome>> sent = services.partitionIds(queue).stream()
                .map(p -> services.submitToQueue(queue, p, command)).toList();
        return CompletableFuture.allOf(sent.toArray(CompletableFuture[]::new))
                .thenApply(v -> sent.stream().map(CompletableFuture::join).toList());
    }

    public ObjectNode render(Task t) {
        ObjectNode n = Responses.object();
        if (t.status() == MoveTask.Status.RUNNING) {
            n.put("TaskHandle", t.handle());
        }
        n.put("Status", t.status().name());
        n.put("SourceArn", t.sourceArn());
        if (t.destinationArn() != null) {
            n.put("DestinationArn", t.destinationArn());
        }
        if (t.ratePerSecond() > 0) {
            n.put("MaxNumberOfMessagesPerSecond", t.ratePerSecond());
        }
        n.put("ApproximateNumberOfMessagesMoved", t.moved());
        n.put("ApproximateNumberOfMessagesToMove", t.toMove());
        if (t.failureReason() != null) {
            n.put("FailureReason", t.failureReason());
        }
        n.put("StartedTimestamp", t.startedMillis());
        return n;
    }
}
