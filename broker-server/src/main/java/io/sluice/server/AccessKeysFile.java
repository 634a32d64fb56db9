package io.sluice.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sluice.frontend.auth.AuthorizationPolicy;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Extra access keys and what each may do, from a JSON file ({@code sluice.auth.keys-file}):
 *
 * <pre>
 * {"keys": [
 *   {"accessKey": "orders-producer", "secretKey": "...",
 *    "allow": [{"action": "SendMessage*", "queue": "orders-*"}, {"action": "GetQueueUrl", "queue": "*"}]},
 *   {"accessKey": "ops", "secretKey": "...", "admin": true}
 * ]}
 * </pre>
 *
 * A key may do only what one of its rules matches (action and queue name are case-sensitive globs with {@code *};
 * account-wide actions match only a queue pattern of {@code *}); a key without rules may do nothing. An admin key
 * ({@code "admin": true}) has the rule {@code *} on {@code *}: everything.
 */
record AccessKeysFile(Map<String, String> secrets, Map<String, List<AuthorizationPolicy.Rule>> rules) {

    static AccessKeysFile read(Path file) {
        JsonNode root;
        try {
            root = new ObjectMapper().readTree(file.toFile());
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read access keys file " + file + ": " + e.getMessage(), e);
        }
        Map<String, String> secrets = new LinkedHashMap<>();
        Map<String, List<AuthorizationPolicy.Rule>> rules = new LinkedHashMap<>();
        JsonNode keys = root == null ? null : root.get("keys");
        if (keys == null || !keys.isArray()) {
            throw new IllegalArgumentException(file + ": expected {\"keys\": [...]}");
        }
        for (JsonNode k : keys) {
            String access = text(k, "accessKey", file);
            String secret = text(k, "secretKey", file);
            if (secrets.put(access, secret) != null) {
                throw new IllegalArgumentException(file + ": access key " + access + " appears twice");
            }
            List<AuthorizationPolicy.Rule> list = new ArrayList<>();
            JsonNode allow = k.get("allow");
            if (allow != null) {
                for (JsonNode r : allow) {
                    list.add(new AuthorizationPolicy.Rule(text(r, "action", file), text(r, "queue", file)));
                }
            }
            JsonNode admin = k.get("admin");
            if (admin != null && !admin.isBoolean()) {
                throw new IllegalArgumentException(file + ": \"admin\" of " + access + " must be true or false");
            }
            if (admin != null && admin.asBoolean()) {
                list.add(AuthorizationPolicy.ADMIN);
            }
            rules.put(access, list);
        }
        return new AccessKeysFile(secrets, rules);
    }

    private static String text(JsonNode node, String field, Path file) {
        JsonNode v = node.get(field);
        if (v == null || !v.isTextual() || v.asText().isEmpty()) {
            throw new IllegalArgumentException(file + ": every entry needs a non-empty \"" + field + "\"");
        }
        return v.asText();
    }
}
