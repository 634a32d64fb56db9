package io.sluice.frontend.action;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sluice.common.SqsException;
import io.sluice.common.SqsFailure;
import io.sluice.partition.PartitionOutcome;
import io.sluice.partition.PartitionResponse;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/** Small helpers shared by the actions for building response trees and unwrapping engine outcomes. */
public final class Responses {
    static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    private Responses() {
    }

    public static ObjectNode object() {
        return NODES.objectNode();
    }

    public static CompletableFuture<ObjectNode> empty() {
        return CompletableFuture.completedFuture(object());
    }

    public static CompletableFuture<ObjectNode> done(ObjectNode result) {
        return CompletableFuture.completedFuture(result);
    }

    static ObjectNode stringMap(Map<String, String> map) {
        ObjectNode node = object();
        map.forEach(node::put);
        return node;
    }

    /** A batch error entry, shaped as SQS's {@code BatchResultErrorEntry}. */
    static ObjectNode batchError(String id, SqsFailure failure) {
        ObjectNode e = object();
        e.put("Id", id);
        e.put("SenderFault", failure.error().senderFault());
        e.put("Code", failure.error().queryCode());
        e.put("Message", failure.message());
        return e;
    }

    static ObjectNode batchSuccess(String id) {
        ObjectNode e = object();
        e.put("Id", id);
        return e;
    }

    static ArrayNode array() {
        return NODES.arrayNode();
    }

    /** A whole-command rejection from the engine becomes the request's error. */
    static PartitionResponse accepted(PartitionOutcome outcome) {
        if (outcome.response() instanceof PartitionResponse.Rejected rejected) {
            throw new CompletionException(new SqsException(rejected.failure()));
        }
        return outcome.response();
    }
}
