package io.sluice.frontend.action;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sluice.catalog.QueueCatalog;
import io.sluice.catalog.QueueMetadata;
import io.sluice.common.SqsError;
import io.sluice.common.SqsException;
import io.sluice.common.SqsLimits;
import io.sluice.common.validation.QueueArn;
import io.sluice.common.validation.QueueAttributes;
import io.sluice.common.validation.QueueAttributesValidator;
import io.sluice.common.validation.TagValidator;
import io.sluice.frontend.service.SqsServices;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/** CreateQueue, GetQueueUrl and DeleteQueue. */
public final class QueueLifecycleActions {
    private QueueLifecycleActions() {
    }

    public static final class CreateQueue implements SqsAction {
        private final SqsServices services;

        public CreateQueue(SqsServices services) {
            this.services = services;
        }

        @Override
        public String name() {
            return "CreateQueue";
        }

        @Override
        public CompletableFuture<ObjectNode> execute(ActionContext ctx, Params params) {
            String name = params.requiredString("QueueName");
            Map<String, String> attributes = new LinkedHashMap<>(params.stringMap("Attributes"));
            String namedPartitions = attributes.remove(Partitions.ATTRIBUTE);
            int partitions = Partitions.parse(namedPartitions);
            Map<String, String> tags = params.stringMap("tags");
            QueueAttributes requested = QueueAttributesValidator.forCreate(name, attributes).orElseThrow();
            TagValidator.validateTags(tags).ifPresent(f -> {
                throw new SqsException(f);
            });
            RedriveRules.check(services, name, requested);
            Partitions.checkDeduplicationScope(partitions, requested);
            QueueCatalog.CreateResult result;
            try {
                result = services.catalog().create(name, requested.fifo(), requested.toStringMap(), tags, partitions,
                        services.nowMillis());
            } catch (QueueCatalog.QueueDeletedRecentlyException e) {
                throw new SqsException(SqsError.QUEUE_DELETED_RECENTLY, "You must wait 60 seconds after deleting a"
                        + " queue before you can create another with the same name.");
            }
            QueueMetadata queue = result.queue();
            if (result instanceof QueueCatalog.AlreadyExists) {
                QueueAttributesValidator.checkSameAttributes(services.attributes(queue), requested).ifPresent(f -> {
                    throw new SqsException(f);
                });
                // A standard queue's count grows by itself (auto-split, SetQueueAttributes): a request that does not
                // name it, or names no more than the queue has, matches. A FIFO queue's never changes.
                if (namedPartitions != null && (queue.fifo() ? queue.partitions() != partitions
                        : queue.partitions() < partitions)) {
                    throw new SqsException(SqsError.QUEUE_NAME_EXISTS, "A queue already exists with the same name and"
                            + " a different value for attribute " + Partitions.ATTRIBUTE);
                }
            }
            ObjectNode out = Responses.object().put("QueueUrl", services.queueUrl(ctx, name));
            return services.awaitPartitionsConfigured(queue).thenApply(v -> out);
        }
    }

    public static final class GetQueueUrl implements SqsAction {
        private final SqsServices services;

        public GetQueueUrl(SqsServices services) {
            this.services = services;
        }

        @Override
        public String name() {
            return "GetQueueUrl";
        }

        @Override
        public CompletableFuture<ObjectNode> execute(ActionContext ctx, Params params) {
            String name = params.requiredString("QueueName");
            String owner = params.string("QueueOwnerAWSAccountId");
            if (owner != null && !owner.equals(services.config().accountId())) {
                throw ctx.queueDoesNotExist();
            }
            QueueMetadata queue = services.catalog().get(name).orElseThrow(ctx::queueDoesNotExist);
            return Responses.done(Responses.object().put("QueueUrl", services.queueUrl(ctx, queue.name())));
        }
    }

    public static final class DeleteQueue implements SqsAction {
        private final SqsServices services;

        public DeleteQueue(SqsServices services) {
            this.services = services;
        }

        @Override
        public String name() {
            return "DeleteQueue";
        }

        @Override
        public CompletableFuture<ObjectNode> execute(ActionContext ctx, Params params) {
            QueueMetadata queue = services.resolveQueue(ctx, params);
            // the catalog only: from now on every request finds no such queue, and each partition's shard leader
            // retires it (drops its messages) on its next reconcile pass
            services.catalog().delete(queue.name(), services.nowMillis()).orElseThrow(ctx::queueDoesNotExist);
            return Responses.done(Responses.object());
        }
    }

    /** Redrive policy checks that need other queues (spec 8.1). */
    static final class RedriveRules {
        private RedriveRules() {
        }

        static void check(SqsServices services, String queueName, QueueAttributes attributes) {
            if (attributes.redrivePolicy() == null) {
                return;
            }
            String targetArn = attributes.redrivePolicy().deadLetterTargetArn();
            QueueMetadata target = services.queueByArn(targetArn).orElseThrow(() -> new SqsException(
                    SqsError.INVALID_PARAMETER_VALUE, "Value " + targetArn + " for parameter RedrivePolicy is invalid."
                    + " Reason: Dead letter target does not exist."));
            if (target.fifo() != attributes.fifo()) {
                throw new SqsException(SqsError.INVALID_PARAMETER_VALUE, "Value " + targetArn + " for parameter"
                        + " RedrivePolicy is invalid. Reason: Dead-letter queue must be same type of queue as the"
                        + " source.");
            }
            if (!services.attributes(target).effectiveRedriveAllowPolicy().permits(services.arn(queueName))) {
                throw new SqsException(SqsError.INVALID_PARAMETER_VALUE, "Value " + targetArn + " for parameter"
                        + " RedrivePolicy is invalid. Reason: Queue " + services.arn(queueName)
                        + " is not allowed by the RedriveAllowPolicy of the dead-letter queue.");
            }
            if (QueueArn.parse(targetArn).map(a -> a.queueName().equals(queueName)).orElse(false)) {
                throw new SqsException(SqsError.INVALID_PARAMETER_VALUE, "Value " + targetArn + " for parameter"
                        + " RedrivePolicy is invalid. Reason: A queue cannot be its own dead-letter queue.");
            }
        }

        static int maxListResults(Integer requested) {
            if (requested == null) {
                return SqsLimits.MAX_LIST_QUEUES_RESULTS;
            }
            if (requested < 1 || requested > SqsLimits.MAX_LIST_QUEUES_RESULTS) {
                throw Params.invalidValue("MaxResults", String.valueOf(requested), "Must be between 1 and 1000");
            }
            return requested;
        }
    }
}
