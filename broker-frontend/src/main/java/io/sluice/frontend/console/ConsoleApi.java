package io.sluice.frontend.console;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sluice.frontend.auth.Authorizer;
import io.sluice.frontend.http.SqsRequestProcessor;
import io.sluice.frontend.service.ConsumerActivity;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The SQS API as a console session calls it: every action through {@link SqsRequestProcessor#invoke} with the
 * session's principal (the same authorization and rate limits as the API), changes logged with who made them (the SQS
 * access log does not see console actions).
 */
final class ConsoleApi {
    private static final Logger LOG = LoggerFactory.getLogger(ConsoleApi.class);
    private static final ObjectMapper JSON = new ObjectMapper();

    private static final Set<String> CHANGES = Set.of("SendMessage", "PurgeQueue",
            "SetQueueAttributes", "StartMessageMoveTask", "CancelMessageMoveTask", "ReceiveMessage", "DeleteMessage",
            "ChangeMessageVisibility", "CreateQueue", "DeleteQueue", "TagQueue", "UntagQueue");
    /** What a page reads of a queue: every attribute, and Sluice's partitions and oldest age. */
    private static final List<String> LIST_ATTRIBUTES = List.of("All", "SluicePartitions",
            "SluiceApproximateAgeOfOldestMessage");

    private final SqsRequestProcessor sqs;
    private final Authorizer rules;

    ConsoleApi(SqsRequestProcessor sqs, Authorizer rules) {
        this.sqs = sqs;
        this.rules = rules;
    }

    CompletableFuture<ObjectNode> call(ConsoleSessions.Session s, String action, ObjectNode request) {
        if (CHANGES.contains(action)) { // the SQS access log does not see console actions: say who changed what
            String task = request.path("TaskHandle").isMissingNode() ? "" : "a task";
            LOG.info("console {} by {} on {}", action, s.principal(), request.path("QueueUrl").asText(
                    request.path("QueueName").asText(request.path("SourceArn").asText(task))));
        }
        return sqs.invoke(s.principal(), s.admin(), action, request, "console.invalid");
    }

    CompletableFuture<Map<String, String>> attributes(ConsoleSessions.Session s, String queueUrl) {
        ObjectNode req = JsonNodeFactory.instance.objectNode().put("QueueUrl", queueUrl);
        LIST_ATTRIBUTES.forEach(req.putArray("AttributeNames")::add);
        return call(s, "GetQueueAttributes", req).thenApply(out -> {
            Map<String, String> values = new TreeMap<>();
            out.path("Attributes").fields().forEachRemaining(e -> values.put(e.getKey(), e.getValue().asText()));
            return values;
        });
    }

    CompletableFuture<String> queueUrl(ConsoleSessions.Session s, String name) {
        return call(s, "GetQueueUrl", JsonNodeFactory.instance.objectNode().put("QueueName", name))
                .thenApply(out -> out.path("QueueUrl").asText());
    }

    /** Who receives from each queue through this node. */
    ConsumerActivity consumers() {
        return sqs.consumers();
    }

    boolean allowed(ConsoleSessions.Session s, String action, String queue) {
        return s.admin() || rules.isAllowed(s.accessKeyId(), action, queue);
    }

    /** The dead-letter queue's name from a RedrivePolicy, or null. */
    static String deadLetterTarget(Map<String, String> attributes) {
        String policy = attributes.get("RedrivePolicy");
        if (policy == null || policy.isEmpty()) {
            return null;
        }
        try {
            String arn = JSON.readTree(policy).path("deadLetterTargetArn").asText("");
            return arn.isEmpty() ? null : arn.substring(arn.lastIndexOf(':') + 1);
        } catch (IOException e) {
            return null;
        }
    }
}
