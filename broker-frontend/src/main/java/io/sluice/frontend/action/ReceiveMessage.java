package io.sluice.frontend.action;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sluice.catalog.QueueMetadata;
import io.sluice.common.MessageAttributeValue;
import io.sluice.common.MessageDigests;
import io.sluice.common.SqsError;
import io.sluice.common.SqsException;
import io.sluice.common.validation.AttributeNameFilter;
import io.sluice.common.validation.QueueAttributes;
import io.sluice.common.validation.ReceiveValidator;
import io.sluice.common.validation.SystemAttributeSelection;
import io.sluice.frontend.service.LongPolls;
import io.sluice.frontend.service.SqsServices;
import io.sluice.partition.DeliveredMessage;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionId;
import io.sluice.partition.PartitionOutcome;
import io.sluice.partition.PartitionResponse;
import io.sluice.partition.StoredMessage;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * ReceiveMessage, short and long polls. A long poll registers a waiter before each receive attempt, so nothing
 * that arrives in between is missed, and parks on it when the attempt finds nothing; no thread waits. A message is
 * leased only while the client is still connected, and a lease that completes after the client went away is
 * released at once (visibility 0), so a disconnect leaves nothing invisible.
 */
public final class ReceiveMessage implements SqsAction {
    private final SqsServices services;
    private final LongPolls longPolls;
    private final AtomicInteger rotation = new AtomicInteger();
    /**
     * Partitions whose last receive or probe here found nothing visible: a receive there probes (a read at the
     * primary) before it leases, so polling an empty queue writes nothing to its shard's log. Advisory only (a probe
     * finds what arrived since); forgotten all at once past {@link #EMPTY_REMEMBERED} partitions.
     */
    private final Set<PartitionId> seenEmpty = ConcurrentHashMap.newKeySet();
    static final int EMPTY_REMEMBERED = 100_000;

    public ReceiveMessage(SqsServices services, LongPolls longPolls) {
        this.services = services;
        this.longPolls = longPolls;
    }

    @Override
    public String name() {
        return "ReceiveMessage";
    }

    /** What one receive asks for, after validation. */
    /** @param longPoll the request waits (WaitTimeSeconds &gt; 0): at the in-flight limit it gets nothing, not OverLimit */
    private record Request(QueueMetadata queue, int max, int visibilitySeconds, String attemptId, long deadlineMillis,
                           boolean longPoll, SystemAttributeSelection system, AttributeNameFilter attributes) {
    }

    @Override
    public CompletableFuture<ObjectNode> execute(ActionContext ctx, Params params) {
        QueueMetadata queue = services.resolveQueue(ctx, params);
        QueueAttributes attributes = services.attributes(queue);
        Integer max = params.integer("MaxNumberOfMessages");
        Integer visibility = params.integer("VisibilityTimeout");
        Integer wait = params.integer("WaitTimeSeconds");
        String attemptId = params.string("ReceiveRequestAttemptId");
        ReceiveValidator.validate(max, visibility, wait, attemptId, queue.fifo()).ifPresent(f -> {
            throw new SqsException(f);
        });
        int waitSeconds = wait != null ? wait : attributes.receiveMessageWaitTimeSeconds();
        Request request = new Request(queue, max == null ? 1 : max, visibility == null ? -1 : visibility,
                queue.fifo() && attemptId != null && !attemptId.isEmpty() ? attemptId : null,
                services.nowMillis() + waitSeconds * 1000L, waitSeconds > 0,
                SystemAttributeSelection.of(params.stringList("AttributeNames"),
                        params.stringList("MessageSystemAttributeNames")),
                AttributeNameFilter.of(params.stringList("MessageAttributeNames")));
        return attempt(ctx, request, waitSeconds > 0, false);
    }

    /**
     * @param probe look without leasing first, and lease only where messages are visible: a poll woken by an arrival
     *              (as are all its queue's other parked polls) or by its deadline mostly finds nothing, and an empty
     *              Receive is still a replicated write. A first attempt leases at once at the queue's rotating
     *              partition (one write, no read: with a backlog it finds messages), and probes the other partitions
     *              only when that one had nothing; unless the last receive there found nothing either (then it
     *              probes first: an empty queue's receives write nothing). A FIFO receive with a request attempt id
     *              always leases first: its retry must reach the partition to be answered what the first one got.
     */
    private CompletableFuture<ObjectNode> attempt(ActionContext ctx, Request r, boolean longPoll, boolean probe) {
        if (!ctx.connected() || longPolls.closing()) {
            return Responses.empty();
        }
        List<PartitionId> partitions = services.partitionIds(r.queue());
        CompletableFuture<Void> waiter = longPoll ? longPolls.register(partitions, r.deadlineMillis()) : null;
        List<PartitionId> rotated = rotated(partitions);
        CompletableFuture<ObjectNode> leased;
        List<PartitionId> rest = rotated.subList(1, rotated.size());
        // the first of several: a partition just added (a split) may not exist on its shard yet, or it may be at its
        // in-flight limit; nothing there, and the others decide
        PartitionId skippable = rest.isEmpty() ? null : rotated.get(0);
        if (probe) {
            leased = withMessages(rotated).thenCompose(order -> leaseFrom(ctx, r, order, 0, waiter, null));
        } else if (r.attemptId() == null && seenEmpty.contains(rotated.get(0))) {
            leased = withMessages(rotated).thenCompose(order -> leaseFrom(ctx, r, order, 0, waiter, skippable));
        } else {
            leased = leaseFrom(ctx, r, rotated.subList(0, 1), 0, waiter, skippable).thenCompose(answer ->
                    answer != null || rest.isEmpty() ? CompletableFuture.completedFuture(answer)
                    : withMessages(rest).thenCompose(order -> leaseFrom(ctx, r, order, 0, waiter, null)));
        }
        return leased.thenCompose(answer -> answer != null ? Responses.done(answer) : park(ctx, r, waiter, partitions));
    }

    /**
     * The partitions from a rotating offset, so receivers spread over them. Three turns in four start at a partition
     * led in this process when there is one (a combined node: its lease crosses no network), the fourth where the
     * rotation is: a partition led elsewhere is still tried first now and then, and always when the one tried first
     * had nothing, so no partition is left to wait while consumers keep up (docs/architecture.md).
     */
    private List<PartitionId> rotated(List<PartitionId> partitions) {
        int turn = rotation.getAndIncrement();
        int start = Math.floorMod(turn, partitions.size());
        if (partitions.size() > 1) {
            List<Integer> local = new ArrayList<>(partitions.size());
            for (int i = 0; i < partitions.size(); i++) {
                if (services.partitions().ledHere(partitions.get(i))) {
                    local.add(i);
                }
            }
            if (!local.isEmpty()) { // each kind of turn moves on by one: the rotation's, and the local ones' in turn
                start = Math.floorMod(turn, 4) == 0 ? Math.floorMod(turn / 4, partitions.size())
                        : local.get(Math.floorMod(turn - turn / 4 - 1, local.size()));
            }
        }
        List<PartitionId> rotated = new ArrayList<>(partitions.size());
        for (int i = 0; i < partitions.size(); i++) {
            rotated.add(partitions.get((start + i) % partitions.size()));
        }
        return rotated;
    }

    /** Probes {@code partitions} without leasing; those with visible messages, in the same order. */
    private CompletableFuture<List<PartitionId>> withMessages(List<PartitionId> partitions) {
        List<CompletableFuture<Integer>> probes = partitions.stream().map(p -> services.partitions().visibleNow(p))
                .toList();
        return CompletableFuture.allOf(probes.toArray(CompletableFuture[]::new)).thenApply(v -> {
            List<PartitionId> out = new ArrayList<>();
            for (int i = 0; i < partitions.size(); i++) {
                if (probes.get(i).join() > 0) {
                    out.add(partitions.get(i));
                } else {
                    rememberEmpty(partitions.get(i));
                }
            }
            return out;
        });
    }

    /**
     * Tries the candidates in order until one leases something; null when none did.
     *
     * @param skippable a partition that has nothing, rather than failing the receive, when it does not exist (yet) or
     *                  is at its in-flight limit (the first of several partitions in the rotation), or null
     */
    private CompletableFuture<ObjectNode> leaseFrom(ActionContext ctx, Request r, List<PartitionId> order, int i,
                                                    CompletableFuture<Void> waiter, PartitionId skippable) {
        if (i >= order.size()) {
            return CompletableFuture.completedFuture(null);
        }
        PartitionId partition = order.get(i);
        return services.submitToQueue(r.queue(), partition,
                        new PartitionCommand.Receive(r.max(), r.visibilitySeconds(), r.attemptId()))
                .thenCompose(outcome -> {
                    if (outcome.response() instanceof PartitionResponse.Rejected rejected) {
                        boolean overLimit = rejected.failure().error() == SqsError.OVER_LIMIT;
                        // the first of several partitions in the rotation: not ready yet (just added by a split,
                        // its primary not done configuring it after the wait SqsServices.submitToQueue gives it) or at
                        // its in-flight limit counts as nothing there; the others decide
                        boolean skip = partition.equals(skippable) && (overLimit
                                || rejected.failure().error() == SqsError.QUEUE_DOES_NOT_EXIST
                                || rejected.failure().error() == SqsError.SERVICE_UNAVAILABLE);
                        if (!(overLimit && r.longPoll()) && !skip) {
                            cancel(waiter);
                            throw new SqsException(rejected.failure());
                        }
                    } else if (outcome.delivered().isEmpty()) {
                        rememberEmpty(partition);
                    } else {
                        seenEmpty.remove(partition);
                        cancel(waiter);
                        if (!ctx.connected()) {
                            release(r.queue(), partition, outcome);
                            return Responses.empty();
                        }
                        return Responses.done(render(r, outcome.delivered()));
                    }
                    return leaseFrom(ctx, r, order, i + 1, waiter, skippable);
                });
    }

    private void rememberEmpty(PartitionId partition) {
        if (seenEmpty.size() >= EMPTY_REMEMBERED) {
            seenEmpty.clear();
        }
        seenEmpty.add(partition);
    }

    /** Nothing leased: answer empty, or (long poll) wait for an arrival, the next deadline, or the poll's end. */
    private CompletableFuture<ObjectNode> park(ActionContext ctx, Request r, CompletableFuture<Void> waiter,
                                               List<PartitionId> partitions) {
        if (waiter == null || services.nowMillis() >= r.deadlineMillis()) {
            cancel(waiter);
            return Responses.empty();
        }
        List<CompletableFuture<Long>> deadlines = partitions.stream()
                .map(p -> services.partitions().nextDeadlineMillis(p)).toList();
        return CompletableFuture.allOf(deadlines.toArray(CompletableFuture[]::new)).thenCompose(v -> {
            long next = deadlines.stream().mapToLong(CompletableFuture::join).filter(d -> d > 0).min().orElse(-1);
            if (next > 0 && next < r.deadlineMillis()) {
                longPolls.wakeAt(waiter, next);
            }
            return waiter.thenCompose(x -> services.nowMillis() >= r.deadlineMillis()
                    ? finalAttempt(ctx, r) : attempt(ctx, r, true, true));
        });
    }

    /** At the deadline: one last short poll, so a message that arrived at the last moment is not missed. */
    private CompletableFuture<ObjectNode> finalAttempt(ActionContext ctx, Request r) {
        return attempt(ctx, r, false, true);
    }

    private static void cancel(CompletableFuture<Void> waiter) {
        if (waiter != null) {
            waiter.complete(null);
        }
    }

    /** The client left while its lease was being taken: make the messages visible again at once. */
    private void release(QueueMetadata queue, PartitionId partition, PartitionOutcome outcome) {
        services.submitToQueue(queue, partition, new PartitionCommand.ChangeVisibility(outcome.delivered().stream()
                .map(d -> new PartitionCommand.VisibilityChange(d.delivery().receiptHandle(), 0)).toList()));
    }

    private ObjectNode render(Request r, List<DeliveredMessage> delivered) {
        ArrayNode messages = Responses.array();
        for (DeliveredMessage d : delivered) {
            StoredMessage m = d.message();
            ObjectNode node = Responses.object();
            node.put("MessageId", m.messageId());
            node.put("ReceiptHandle", services.receiptHandles().seal(d.delivery().receiptHandle()));
            node.put("MD5OfBody", MessageDigests.md5OfBody(m.body()));
            node.put("Body", m.body());
            Map<String, String> system = r.system().select(systemAttributes(d));
            if (!system.isEmpty()) {
                node.set("Attributes", Responses.stringMap(system));
            }
            Map<String, MessageAttributeValue> selected = r.attributes().select(m.attributes());
            if (!selected.isEmpty()) {
                node.put("MD5OfMessageAttributes", MessageDigests.md5OfAttributes(selected));
                ObjectNode attrs = Responses.object();
                selected.forEach((name, v) -> {
                    ObjectNode value = Responses.object();
                    if (v.isBinary()) {
                        value.put("BinaryValue", Base64.getEncoder().encodeToString(v.binaryValue()));
                    } else {
                        value.put("StringValue", v.stringValue());
                    }
                    value.put("DataType", v.dataType());
                    attrs.set(name, value);
                });
                node.set("MessageAttributes", attrs);
            }
            messages.add(node);
        }
        ObjectNode out = Responses.object();
        out.set("Messages", messages);
        return out;
    }

    private static Map<String, String> systemAttributes(DeliveredMessage d) {
        StoredMessage m = d.message();
        Map<String, String> out = new LinkedHashMap<>();
        out.put("SenderId", m.senderId());
        out.put("SentTimestamp", Long.toString(m.sentTimestampMillis()));
        out.put("ApproximateReceiveCount", Integer.toString(d.delivery().receiveCount()));
        out.put("ApproximateFirstReceiveTimestamp", Long.toString(d.delivery().firstReceiveTimestampMillis()));
        putIfPresent(out, "SequenceNumber", m.sequenceNumber());
        putIfPresent(out, "MessageGroupId", m.groupId());
        putIfPresent(out, "MessageDeduplicationId", m.deduplicationId());
        MessageAttributeValue trace = m.systemAttributes().get("AWSTraceHeader");
        putIfPresent(out, "AWSTraceHeader", trace == null ? null : trace.stringValue());
        putIfPresent(out, "DeadLetterQueueSourceArn", m.deadLetterSourceArn());
        return out;
    }

    private static void putIfPresent(Map<String, String> out, String name, String value) {
        if (value != null) {
            out.put(name, value);
        }
    }
}
