package io.sluice.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sluice.metadata.image.MetadataCommand;
import io.sluice.metadata.image.MetadataResult;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * The admin port's catalog writes (the admin server checks the admin token and the JSON content type first).
 * {@code POST /admin/access-keys}: stores an access key and its rules in the replicated catalog. Body:
 * {@code {"accessKey": "...", "secretKey": "...", "allow": [["SendMessage*", "orders-*"], ...]}}; a key without
 * rules may do nothing; {@code "admin": true} adds the rule {@code ["*", "*"]} (everything).
 * {@code POST /admin/rebalance} (body {@code {"maxMoves": n}}, default 1): moves shard replicas from the most to the
 * least loaded backends, answering the moves made.
 */
final class AccessKeyAdmin {
    private AccessKeyAdmin() {
    }

    static Function<byte[], String> handler(Function<MetadataCommand, MetadataResult> submit) {
        return body -> {
            JsonNode node;
            try {
                node = new ObjectMapper().readTree(body);
            } catch (IOException e) {
                throw new IllegalArgumentException("body is not JSON");
            }
            String key = node == null ? "" : node.path("accessKey").asText("");
            String secret = node == null ? "" : node.path("secretKey").asText("");
            if (key.isEmpty() || secret.isEmpty()) {
                throw new IllegalArgumentException("accessKey and secretKey are required");
            }
            List<List<String>> allow = new ArrayList<>();
            for (JsonNode pair : node.path("allow")) {
                if (!pair.isArray() || pair.size() != 2) {
                    throw new IllegalArgumentException("allow entries are [actionGlob, queueGlob]");
                }
                allow.add(List.of(pair.get(0).asText(), pair.get(1).asText()));
            }
            if (node.path("admin").asBoolean(false)) {
                allow.add(List.of("*", "*"));
            }
            MetadataResult r = submit.apply(new MetadataCommand.SetAccessKey(key, secret, allow));
            return "{\"status\":\"" + r.status() + "\"}";
        };
    }

    static Function<byte[], String> rebalance(Function<MetadataCommand, MetadataResult> submit) {
        return body -> {
            JsonNode node;
            try {
                node = body.length == 0 ? null : new ObjectMapper().readTree(body);
            } catch (IOException e) {
                throw new IllegalArgumentException("body is not JSON");
            }
            int maxMoves = node == null ? 1 : node.path("maxMoves").asInt(1);
            if (maxMoves < 1 || maxMoves > 1000) {
                throw new IllegalArgumentException("maxMoves must be in [1, 1000]");
            }
            MetadataResult r = submit.apply(new MetadataCommand.Rebalance(maxMoves));
            var out = new ObjectMapper().createObjectNode().put("status", r.status().toString());
            var moves = out.putArray("moves");
            if (r.message() != null && !r.message().isBlank()) {
                for (String m : r.message().split(" ")) {
                    moves.add(m);
                }
            }
            return out.toString();
        };
    }
}
