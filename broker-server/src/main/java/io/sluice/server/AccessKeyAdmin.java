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
 * {@code POST /admin/access-keys}: stores an access key and its rules in the replicated catalog. Body:
 * {@code {"accessKey": "...", "secretKey": "...", "allow": [["SendMessage*", "orders-*"], ...]}} (no {@code allow}:
 * everything). The admin port is for operators: bind it to a private address.
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
            MetadataResult r = submit.apply(new MetadataCommand.SetAccessKey(key, secret, allow));
            return "{\"status\":\"" + r.status() + "\"}";
        };
    }
}
