package io.sluice.frontend.action;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sluice.catalog.QueueMetadata;
import io.sluice.common.SqsError;
import io.sluice.common.SqsException;
import io.sluice.common.validation.QueueAttributeName;
import io.sluice.common.validation.QueueAttributes;
import io.sluice.common.validation.QueueAttributesValidator;
import io.sluice.common.validation.TagValidator;
import io.sluice.frontend.service.SqsServices;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionResponse;
import io.sluice.partition.QueueCounts;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;

/** GetQueueAttributes, SetQueueAttributes, PurgeQueue and the tag actions. */
public final class QueueAttributeActions {
    private QueueAttributeActions() {
    }

    public static final class GetQueueAttributes implements SqsAction {
        private final SqsServices services;

        public GetQueueAttributes(SqsServices services) {
            this.services = services;
        }

        @Override
        public String name() {
            return "GetQueueAttributes";
        }

        @Override
        public CompletableFuture<ObjectNode> execute(ActionContext ctx, Params params) {
            QueueMetadata queue = services.resolveQueue(ctx, params);
            List<String> names = params.stringList("AttributeNames");
            QueueAttributesValidator.checkGetAttributeNames(names.stream()
                    .filter(n -> !n.equals(Partitions.ATTRIBUTE)).toList()).ifPresent(f -> {
                throw new SqsException(f);
            });
            if (names.isEmpty()) {
                return Responses.empty();
            }
            Set<String> wanted = new HashSet<>(names);
            boolean all = wanted.contains(QueueAttributeName.ALL);
            return counts(services, queue).thenApply(counts -> {
                Map<String, String> values = new TreeMap<>(services.attributes(queue).toStringMap());
                values.put("QueueArn", services.arn(queue.name()));
                values.put("CreatedTimestamp", Long.toString(queue.createdTimestampSeconds()));
                values.put("LastModifiedTimestamp", Long.toString(queue.lastModifiedTimestampSeconds()));
                values.put("ApproximateNumberOfMessages", Long.toString(counts.visible()));
                values.put("ApproximateNumberOfMessagesNotVisible", Long.toString(counts.inflight()));
                values.put("ApproximateNumberOfMessagesDelayed", Long.toString(counts.delayed()));
                String skew = QueueAttributeName.SLUICE_ARRIVAL_SKEW_P99_MILLIS.wireName();
                if (queue.fifo() && (wanted.contains(skew) || counts.arrivalSkewP99Millis() >= 0)) {
                    // in All only once producer-timed messages arrived (in the last 5-10 minutes); named: 0 until then
                    values.put(skew, Long.toString(Math.max(0, counts.arrivalSkewP99Millis())));
                }
                String age = QueueAttributeName.SLUICE_APPROXIMATE_AGE_OF_OLDEST_MESSAGE.wireName();
                if (wanted.contains(age)) { // named only: All stays what SQS returns
                    long base = counts.oldestRetentionBaseMillis();
                    values.put(age, Long.toString(base < 0 ? 0
                            : Math.max(0, (services.clock().nowMillis() - base) / 1000)));
                }
                if (wanted.contains(Partitions.ATTRIBUTE) || (all && queue.partitions() > 1)) {
                    values.put(Partitions.ATTRIBUTE, Integer.toString(queue.partitions()));
                }
                Map<String, String> selected = new LinkedHashMap<>();
                values.forEach((k, v) -> {
                    if (all || wanted.contains(k) || k.equals(Partitions.ATTRIBUTE)) {
                        selected.put(k, v);
                    }
                });
                ObjectNode out = Responses.object();
                if (!selected.isEmpty()) {
                    out.set("Attributes", Responses.stringMap(selected));
                }
                return out;
            });
        }
    }

    /** Counts summed over a queue's partitions; the arrival skew's p99 is the largest partition's. */
    public static CompletableFuture<QueueCounts> counts(SqsServices services, QueueMetadata queue) {
        List<CompletableFuture<QueueCounts>> parts = services.partitionIds(queue).stream()
                .map(id -> services.partitions().counts(id)).toList();
        return CompletableFuture.allOf(parts.toArray(CompletableFuture[]::new))
                .thenApply(v -> sum(parts.stream().map(CompletableFuture::join).toList()));
    }

    /** A queue's counts from its partitions': summed, the oldest of the oldest, the largest arrival skew. */
    public static QueueCounts sum(List<QueueCounts> parts) {
        int visible = 0;
        int inflight = 0;
        int delayed = 0;
        int pending = 0;
        long oldest = -1;
        long skewP99 = -1;
        long sent = 0;
        long received = 0;
        for (QueueCounts c : parts) {
            skewP99 = Math.max(skewP99, c.arrivalSkewP99Millis()); // the worst partition's
            visible += c.visible();
            inflight += c.inflight();
            delayed += c.delayed();
            pending += c.deadLetterPending();
            sent = sent < 0 || c.sentTotal() < 0 ? -1 : sent + c.sentTotal(); // unknown if any partition's is
            received = received < 0 || c.receivedTotal() < 0 ? -1 : received + c.receivedTotal();
            if (c.oldestRetentionBaseMillis() >= 0 && (oldest < 0 || c.oldestRetentionBaseMillis() < oldest)) {
                oldest = c.oldestRetentionBaseMillis();
            }
        }
        return new QueueCounts(visible, inflight, delayed, pending, oldest, -1, skewP99, sent, received);
    }

    public static final class SetQueueAttributes implements SqsAction {
        private final SqsServices services;

        public SetQueueAttributes(SqsServices services) {
            this.services = services;
        }

        @Override
        public String name() {
            return "SetQueueAttributes";
        }

        @Override
        public CompletableFuture<ObjectNode> execute(ActionContext ctx, Params params) {
            QueueMetadata queue = services.resolveQueue(ctx, params);
            Map<String, String> requested = new LinkedHashMap<>(params.stringMap("Attributes"));
            String partitionsValue = requested.remove(Partitions.ATTRIBUTE);
            Integer partitions = partitionsValue == null ? null : Partitions.checkRaise(queue, partitionsValue);
            QueueAttributes next = null;
            if (!requested.isEmpty() || partitions == null) { // SluicePartitions alone changes nothing else
                next = QueueAttributesValidator.forSet(services.attributes(queue), requested).orElseThrow();
                QueueLifecycleActions.RedriveRules.check(services, queue.name(), next);
                Partitions.checkDeduplicationScope(queue.partitions(), next);
            }
            QueueMetadata updated = queue;
            if (partitions != null && partitions > queue.partitions()) { // first: if refused, nothing else changed
                updated = services.catalog().raisePartitions(queue.name(), partitions).orElseThrow(() ->
                        services.catalog().get(queue.name()).isEmpty() ? ctx.queueDoesNotExist()
                                : new SqsException(SqsError.INVALID_ATTRIBUTE_VALUE, "Invalid value for the parameter "
                                + Partitions.ATTRIBUTE + ". Reason: The partition count can only be raised."));
            }
            if (next != null) {
                updated = services.catalog().setAttributes(queue.name(), next.toStringMap(), services.nowMillis())
                        .orElseThrow(ctx::queueDoesNotExist);
            }
            return services.awaitPartitionsConfigured(updated).thenApply(v -> Responses.object());
        }
    }

    public static final class PurgeQueue implements SqsAction {
        private final SqsServices services;

        public PurgeQueue(SqsServices services) {
            this.services = services;
        }

        @Override
        public String name() {
            return "PurgeQueue";
        }

        @Override
        public CompletableFuture<ObjectNode> execute(ActionContext ctx, Params params) {
            QueueMetadata queue = services.resolveQueue(ctx, params);
            List<CompletableFuture<Boolean>> purged = services.partitionIds(queue).stream()
                    .map(id -> services.submitToQueue(queue, id, new PartitionCommand.Purge())
                            .thenApply(o -> !(o.response() instanceof PartitionResponse.Rejected)))
                    .toList();
            return CompletableFuture.allOf(purged.toArray(CompletableFuture[]::new)).thenApply(v -> {
                if (purged.stream().noneMatch(CompletableFuture::join)) {
                    throw new SqsException(SqsError.PURGE_QUEUE_IN_PROGRESS, "Only one PurgeQueue operation on "
                            + queue.name() + " is allowed every 60 seconds.");
                }
                return Responses.object();
            });
        }
    }

    public static final class TagQueue implements SqsAction {
        private final SqsServices services;

        public TagQueue(SqsServices services) {
            this.services = services;
        }

        @Override
        public String name() {
            return "TagQueue";
        }

        @Override
        public CompletableFuture<ObjectNode> execute(ActionContext ctx, Params params) {
            QueueMetadata queue = services.resolveQueue(ctx, params);
            Map<String, String> added = params.stringMap("Tags");
            if (added.isEmpty()) {
                throw Params.missing("Tags");
            }
            TagValidator.validateTagQueue(queue.tags(), added).ifPresent(f -> {
                throw new SqsException(f);
            });
            Map<String, String> tags = new TreeMap<>(queue.tags());
            tags.putAll(added);
            services.catalog().setTags(queue.name(), tags).orElseThrow(ctx::queueDoesNotExist);
            return Responses.empty();
        }
    }

    public static final class UntagQueue implements SqsAction {
        private final SqsServices services;

        public UntagQueue(SqsServices services) {
            this.services = services;
        }

        @Override
        public String name() {
            return "UntagQueue";
        }

        @Override
        public CompletableFuture<ObjectNode> execute(ActionContext ctx, Params params) {
            QueueMetadata queue = services.resolveQueue(ctx, params);
            List<String> keys = params.stringList("TagKeys");
            if (keys.isEmpty()) {
                throw Params.missing("TagKeys");
            }
            TagValidator.validateTagKeys(keys).ifPresent(f -> {
                throw new SqsException(f);
            });
            Map<String, String> tags = new TreeMap<>(queue.tags());
            keys.forEach(tags::remove);
            services.catalog().setTags(queue.name(), tags).orElseThrow(ctx::queueDoesNotExist);
            return Responses.empty();
        }
    }

    public static final class ListQueueTags implements SqsAction {
        private final SqsServices services;

        public ListQueueTags(SqsServices services) {
            this.services = services;
        }

        @Override
        public String name() {
            return "ListQueueTags";
        }

        @Override
        public CompletableFuture<ObjectNode> execute(ActionContext ctx, Params params) {
            QueueMetadata queue = services.resolveQueue(ctx, params);
            ObjectNode out = Responses.object();
            if (!queue.tags().isEmpty()) {
                out.set("Tags", Responses.stringMap(new TreeMap<>(queue.tags())));
            }
            return Responses.done(out);
        }
    }
}
