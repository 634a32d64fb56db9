package io.sluice.frontend.action;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sluice.catalog.QueueMetadata;
import io.sluice.common.MessageAttributeValue;
import io.sluice.common.MessageDigests;
import io.sluice.common.SqsException;
import io.sluice.common.SqsFailure;
import io.sluice.common.validation.BatchValidator;
import io.sluice.common.validation.MessageAttributesValidator;
import io.sluice.common.validation.MessageValidator;
import io.sluice.common.validation.QueueAttributes;
import io.sluice.common.validation.SendRequest;
import io.sluice.frontend.service.SqsServices;
import io.sluice.partition.NewMessage;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionId;
import io.sluice.partition.PartitionResponse;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

/** SendMessage and SendMessageBatch. */
public final class SendActions {
    private SendActions() {
    }

    /** One message read from the request, validated, with the id and partition it will have. */
    record Prepared(String entryId, SendRequest request, NewMessage message, int partition) {
    }

    static SendRequest read(Params p, ActionContext ctx, boolean applyTraceHeader) {
        Map<String, MessageAttributeValue> system = new LinkedHashMap<>(p.messageAttributes("MessageSystemAttributes"));
        if (applyTraceHeader && ctx.traceHeader() != null && !ctx.traceHeader().isEmpty()) {
            system.put(MessageAttributesValidator.AWS_TRACE_HEADER,
                    MessageAttributeValue.ofString("String", ctx.traceHeader()));
        }
        return new SendRequest(p.string("MessageBody"), p.integer("DelaySeconds"),
                p.messageAttributes("MessageAttributes"), system, p.string("MessageGroupId"),
                p.string("MessageDeduplicationId"));
    }

    /** @param standardPartition where a standard queue's message goes (the request's partition: all go together) */
    static Prepared prepare(String entryId, SendRequest r, QueueMetadata queue, ActionContext ctx,
                            int standardPartition) {
        String group = r.messageGroupId() == null || r.messageGroupId().isEmpty() ? null : r.messageGroupId();
        String dedup = r.messageDeduplicationId() == null || r.messageDeduplicationId().isEmpty()
                ? null : r.messageDeduplicationId();
        NewMessage m = new NewMessage(UUID.randomUUID().toString(), r.body(), r.messageAttributes(),
                r.systemAttributes(), r.delaySeconds() == null ? -1 : r.delaySeconds(), group, dedup,
                ctx.accessKeyId(), null);
        return new Prepared(entryId, r, m, partitionFor(queue, group, standardPartition));
    }

    /** FIFO: a group always maps to the same partition (String.hashCode is specified). Standard: the request's. */
    static int partitionFor(QueueMetadata queue, String groupId, int standardPartition) {
        if (queue.partitions() == 1) {
            return 0;
        }
        return queue.fifo() && groupId != null ? Math.floorMod(groupId.hashCode(), queue.partitions())
                : standardPartition;
    }

    /** The output members for one sent message; digests are of this request, even for a FIFO duplicate. */
    static ObjectNode result(Prepared p, PartitionResponse.SentMessage sent) {
        ObjectNode out = Responses.object();
        out.put("MessageId", sent.messageId());
        out.put("MD5OfMessageBody", MessageDigests.md5OfBody(p.request().body()));
        String attrs = MessageDigests.md5OfAttributes(p.request().messageAttributes());
        if (attrs != null) {
            out.put("MD5OfMessageAttributes", attrs);
        }
        String system = MessageDigests.md5OfAttributes(p.request().systemAttributes());
        if (system != null) {
            out.put("MD5OfMessageSystemAttributes", system);
        }
        if (sent.sequenceNumber() != null) {
            out.put("SequenceNumber", sent.sequenceNumber());
        }
        return out;
    }

    public static final class SendMessage implements SqsAction {
        private final SqsServices services;

        public SendMessage(SqsServices services) {
            this.services = services;
        }

        @Override
        public String name() {
            return "SendMessage";
        }

        @Override
        public CompletableFuture<ObjectNode> execute(ActionContext ctx, Params params) {
            QueueMetadata queue = services.resolveQueue(ctx, params);
            SendRequest request = read(params, ctx, true);
            MessageValidator.validateSend(request, services.attributes(queue)).ifPresent(f -> {
                throw new SqsException(f);
            });
            Prepared p = prepare(null, request, queue, ctx, services.sendPartition(queue));
            return services.submitToQueue(queue, new PartitionId(queue.queueId(), p.partition()),
                            new PartitionCommand.Send(List.of(p.message())))
                    .thenApply(o -> result(p, ((PartitionResponse.Sent) Responses.accepted(o)).messages().get(0)));
        }
    }

    public static final class SendMessageBatch implements SqsAction {
        private final SqsServices services;

        public SendMessageBatch(SqsServices services) {
            this.services = services;
        }

        @Override
        public String name() {
            return "SendMessageBatch";
        }

        @Override
        public CompletableFuture<ObjectNode> execute(ActionContext ctx, Params params) {
            QueueMetadata queue = services.resolveQueue(ctx, params);
            QueueAttributes attributes = services.attributes(queue);
            List<Params> entries = params.structList("Entries");
            List<SendRequest> requests = new ArrayList<>(entries.size());
            for (Params e : entries) {
                requests.add(read(e, ctx, false));
            }
            List<Integer> order = new ArrayList<>();
            for (int i = 0; i < entries.size(); i++) {
                order.add(i);
            }
            BatchValidator.validate(order, i -> entries.get(i).string("Id"), i -> requests.get(i).sizeBytes(),
                    i -> MessageValidator.checkBatchRequestFifoEntry(requests.get(i), attributes)).ifPresent(f -> {
                        throw new SqsException(f);
                    });

            ArrayNode failed = Responses.array();
            Map<Integer, List<Prepared>> byPartition = new LinkedHashMap<>();
            int standardPartition = services.sendPartition(queue);
            for (int i = 0; i < entries.size(); i++) {
                String id = entries.get(i).string("Id");
                SqsFailure invalid = MessageValidator.validateBatchEntry(requests.get(i), attributes).orElse(null);
                if (invalid != null) {
                    failed.add(Responses.batchError(id, invalid));
                    continue;
                }
                Prepared p = prepare(id, requests.get(i), queue, ctx, standardPartition);
                byPartition.computeIfAbsent(p.partition(), k -> new ArrayList<>()).add(p);
            }
            List<CompletableFuture<List<ObjectNode>>> sends = new ArrayList<>();
            byPartition.forEach((partition, prepared) -> sends.add(services
                    .submitToQueue(queue, new PartitionId(queue.queueId(), partition),
                            new PartitionCommand.Send(prepared.stream().map(Prepared::message).toList()))
                    .thenApply(o -> {
                        if (o.response() instanceof PartitionResponse.Rejected rejected) {
                            return prepared.stream().map(p -> Responses.batchError(p.entryId(), rejected.failure()))
                                    .toList();
                        }
                        List<PartitionResponse.SentMessage> sent = ((PartitionResponse.Sent) o.response()).messages();
                        List<ObjectNode> ok = new ArrayList<>();
                        for (int i = 0; i < prepared.size(); i++) {
                            ObjectNode r = result(prepared.get(i), sent.get(i));
                            ObjectNode withId = Responses.object().put("Id", prepared.get(i).entryId());
                            withId.setAll(r);
                            ok.add(withId);
                        }
                        return ok;
                    })));
            return CompletableFuture.allOf(sends.toArray(CompletableFuture[]::new)).thenApply(v -> {
                ArrayNode successful = Responses.array();
                for (CompletableFuture<List<ObjectNode>> f : sends) {
                    for (ObjectNode n : f.join()) {
                        (n.has("MessageId") ? successful : failed).add(n);
                    }
                }
                ObjectNode out = Responses.object();
                out.set("Successful", successful);
                out.set("Failed", failed);
                return out;
            });
        }
    }
}
