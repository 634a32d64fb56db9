package io.sluice.frontend.action;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sluice.catalog.QueueMetadata;
import io.sluice.common.ReceiptHandle;
import io.sluice.common.SqsError;
import io.sluice.common.SqsException;
import io.sluice.common.SqsFailure;
import io.sluice.common.SqsLimits;
import io.sluice.common.validation.BatchValidator;
import io.sluice.frontend.service.SqsServices;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionId;
import io.sluice.partition.PartitionResponse;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * DeleteMessage, ChangeMessageVisibility and their batches. A receipt handle names its partition, so each entry
 * goes straight to it; entries of one partition travel in one command.
 */
public final class HandleActions {
    private HandleActions() {
    }

    /** One entry of a handle batch (a single action is a batch of one). */
    private record Entry(String id, String rawHandle, ReceiptHandle handle, Integer visibilitySeconds) {
    }

    static SqsFailure invalidHandle(String raw) {
        return SqsError.RECEIPT_HANDLE_IS_INVALID.withMessage(
                "The input receipt handle \"" + raw + "\" is not a valid receipt handle.");
    }

    /** Opens a sealed handle and checks it belongs to this queue incarnation; null when it does not. */
    static ReceiptHandle decode(SqsServices services, QueueMetadata queue, String raw) {
        return services.receiptHandles().open(raw)
                .filter(h -> h.queueId() == queue.queueId() && h.partition() >= 0 && h.partition() < queue.partitions())
                .orElse(null);
    }

    static SqsFailure checkVisibility(Integer seconds) {
        if (seconds == null) {
            return SqsError.MISSING_PARAMETER.withMessage("The request must contain the parameter VisibilityTimeout.");
        }
        if (seconds < 0 || seconds > SqsLimits.MAX_VISIBILITY_TIMEOUT_SECONDS) {
            return SqsError.INVALID_PARAMETER_VALUE.withMessage("Value " + seconds + " for parameter VisibilityTimeout"
                    + " is invalid. Reason: Must be between 0 and 43200.");
        }
        return null;
    }

    /** Runs entries grouped by partition; returns per-entry failures (null = success) in entry order. */
    private static CompletableFuture<List<SqsFailure>> run(SqsServices services, QueueMetadata queue, List<Entry> entries,
                                                           boolean visibility) {
        List<SqsFailure> failures = new ArrayList<>(entries.size());
        Map<Integer, List<Integer>> byPartition = new LinkedHashMap<>();
        for (int i = 0; i < entries.size(); i++) {
            Entry e = entries.get(i);
            SqsFailure f = e.handle() == null ? invalidHandle(e.rawHandle())
                    : visibility ? checkVisibility(e.visibilitySeconds()) : null;
            failures.add(f);
            if (f == null) {
                byPartition.computeIfAbsent(e.handle().partition(), k -> new ArrayList<>()).add(i);
            }
        }
        List<CompletableFuture<Void>> calls = new ArrayList<>();
        byPartition.forEach((partition, indexes) -> {
            List<Entry> group = indexes.stream().map(entries::get).toList();
            calls.add(services.submitToQueue(queue, new PartitionId(queue.queueId(), partition),
                    visibility ? visibilityCommand(group) : deleteCommand(group))
                    .thenAccept(o -> {
                        PartitionResponse response = Responses.accepted(o);
                        List<SqsFailure> results = ((PartitionResponse.EntryOutcomes) response).failures();
                        for (int k = 0; k < indexes.size(); k++) {
                            failures.set(indexes.get(k), results.get(k));
                        }
                    }));
        });
        return CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new)).thenApply(v -> failures);
    }

    private static PartitionCommand deleteCommand(List<Entry> entries) {
        return new PartitionCommand.Delete(entries.stream().map(Entry::handle).toList());
    }

    private static PartitionCommand visibilityCommand(List<Entry> entries) {
        return new PartitionCommand.ChangeVisibility(entries.stream()
                .map(e -> new PartitionCommand.VisibilityChange(e.handle(), e.visibilitySeconds())).toList());
    }

    /** A failure that carries the raw handle text the client sent, as SQS's messages do. */
    private static SqsFailure withRawHandle(SqsFailure f, Entry e) {
        if (f == null || e.handle() == null) {
            return f;
        }
        return new SqsFailure(f.error(), f.message().replace(e.handle().encode(), e.rawHandle()));
    }

    private static CompletableFuture<ObjectNode> single(SqsServices services, ActionContext ctx, Params params,
                                                       boolean visibility) {
        QueueMetadata queue = services.resolveQueue(ctx, params);
        String raw = params.requiredString("ReceiptHandle");
        Integer seconds = null;
        if (visibility) {
            seconds = params.integer("VisibilityTimeout");
            SqsFailure bad = checkVisibility(seconds);
            if (bad != null) {
                throw new SqsException(bad);
            }
        }
        Entry e = new Entry(null, raw, decode(services, queue, raw), seconds);
        if (e.handle() == null) {
            throw new SqsException(invalidHandle(raw));
        }
        return run(services, queue, List.of(e), visibility).thenApply(failures -> {
                    SqsFailure f = withRawHandle(failures.get(0), e);
                    if (f != null) {
                        throw new SqsException(f);
                    }
                    return Responses.object();
                });
    }

    private static CompletableFuture<ObjectNode> batch(SqsServices services, ActionContext ctx, Params params,
                                                      boolean visibility) {
        QueueMetadata queue = services.resolveQueue(ctx, params);
        List<Params> raw = params.structList("Entries");
        BatchValidator.validateIds(raw.stream().map(p -> p.string("Id")).toList()).ifPresent(f -> {
            throw new SqsException(f);
        });
        List<Entry> entries = new ArrayList<>();
        for (Params p : raw) {
            String handle = p.string("ReceiptHandle");
            Integer seconds = visibility ? p.integer("VisibilityTimeout") : null;
            entries.add(new Entry(p.string("Id"), handle == null ? "" : handle,
                    handle == null ? null : decode(services, queue, handle), seconds));
        }
        return run(services, queue, entries, visibility).thenApply(failures -> {
                    ArrayNode successful = Responses.array();
                    ArrayNode failed = Responses.array();
                    for (int i = 0; i < entries.size(); i++) {
                        SqsFailure f = withRawHandle(failures.get(i), entries.get(i));
                        if (f == null) {
                            successful.add(Responses.batchSuccess(entries.get(i).id()));
                        } else {
                            failed.add(Responses.batchError(entries.get(i).id(), f));
                        }
                    }
                    ObjectNode out = Responses.object();
                    out.set("Successful", successful);
                    out.set("Failed", failed);
                    return out;
                });
    }

    public record DeleteMessage(SqsServices services) implements SqsAction {
        @Override
        public String name() {
            return "DeleteMessage";
        }

        @Override
        public CompletableFuture<ObjectNode> execute(ActionContext ctx, Params params) {
            return single(services, ctx, params, false);
        }
    }

    public record ChangeMessageVisibility(SqsServices services) implements SqsAction {
        @Override
        public String name() {
            return "ChangeMessageVisibility";
        }

        @Override
        public CompletableFuture<ObjectNode> execute(ActionContext ctx, Params params) {
            return single(services, ctx, params, true);
        }
    }

    public record DeleteMessageBatch(SqsServices services) implements SqsAction {
        @Override
        public String name() {
            return "DeleteMessageBatch";
        }

        @Override
        public CompletableFuture<ObjectNode> execute(ActionContext ctx, Params params) {
            return batch(services, ctx, params, false);
        }
    }

    public record ChangeMessageVisibilityBatch(SqsServices services) implements SqsAction {
        @Override
        public String name() {
            return "ChangeMessageVisibilityBatch";
        }

        @Override
        public CompletableFuture<ObjectNode> execute(ActionContext ctx, Params params) {
            return batch(services, ctx, params, true);
        }
    }
}
