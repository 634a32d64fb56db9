package io.sluice.frontend.protocol;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sluice.common.SqsError;
import io.sluice.common.SqsException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Turns flattened Query parameters into the same JSON tree a JSON 1.0 client would have sent (spec 1.4), so
 * actions read one shape whatever the protocol. Values stay strings; {@link Params} parses them.
 *
 * <pre>
 *   AttributeName.1=All                       -> "AttributeNames": ["All"]
 *   Attribute.1.Name=DelaySeconds&amp;...Value=5   -> "Attributes": {"DelaySeconds": "5"}
 *   Tag.1.Key=k&amp;Tag.1.Value=v                  -> "Tags" (CreateQueue: "tags"): {"k": "v"}
 *   MessageAttribute.1.Name=n&amp;...Value.DataType -> "MessageAttributes": {"n": {"DataType": ..}}
 *   SendMessageBatchRequestEntry.2.Id=e2      -> "Entries": [.., {"Id": "e2"}]
 *   AttributeNames=                           -> "AttributeNames": []   (botocore's empty list)
 * </pre>
 *
 * Indices are sorted numerically; gaps are allowed. Unknown dotted names are ignored, as unknown JSON members are.
 */
public final class QueryDecoder {
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    private enum Shape { SCALAR_LIST, NAME_VALUE_MAP, KEY_VALUE_MAP, MESSAGE_ATTRIBUTE_MAP, STRUCT_LIST }

    private record Rule(String member, Shape shape) {
    }

    private static final Map<String, Rule> RULES = Map.ofEntries(
            Map.entry("AttributeName", new Rule("AttributeNames", Shape.SCALAR_LIST)),
            Map.entry("MessageSystemAttributeName", new Rule("MessageSystemAttributeNames", Shape.SCALAR_LIST)),
            Map.entry("MessageAttributeName", new Rule("MessageAttributeNames", Shape.SCALAR_LIST)),
            Map.entry("TagKey", new Rule("TagKeys", Shape.SCALAR_LIST)),
            Map.entry("AWSAccountId", new Rule("AWSAccountIds", Shape.SCALAR_LIST)),
            Map.entry("ActionName", new Rule("Actions", Shape.SCALAR_LIST)),
            Map.entry("Attribute", new Rule("Attributes", Shape.NAME_VALUE_MAP)),
            Map.entry("Tag", new Rule("Tags", Shape.KEY_VALUE_MAP)),
            Map.entry("MessageAttribute", new Rule("MessageAttributes", Shape.MESSAGE_ATTRIBUTE_MAP)),
            Map.entry("MessageSystemAttribute", new Rule("MessageSystemAttributes", Shape.MESSAGE_ATTRIBUTE_MAP)),
            Map.entry("SendMessageBatchRequestEntry", new Rule("Entries", Shape.STRUCT_LIST)),
            Map.entry("DeleteMessageBatchRequestEntry", new Rule("Entries", Shape.STRUCT_LIST)),
            Map.entry("ChangeMessageVisibilityBatchRequestEntry", new Rule("Entries", Shape.STRUCT_LIST)));

    /** Plural member names botocore sends with an empty value to mean an empty list. */
    private static final Set<String> EMPTY_LIST_NAMES = Set.of("AttributeNames", "MessageSystemAttributeNames",
            "MessageAttributeNames", "TagKeys", "Entries", "AWSAccountIds", "Actions");

    private QueryDecoder() {
    }

    /** Decodes the parameters of one action ({@code Action} and {@code Version} are not members). */
    public static ObjectNode decode(String action, Map<String, String> params) {
        Map<String, String> members = new LinkedHashMap<>(params);
        members.remove("Action");
        members.remove("Version");
        ObjectNode tree = decodeStruct(members);
        if ("CreateQueue".equals(action) && tree.has("Tags")) {
            tree.set("tags", tree.remove("Tags")); // CreateQueue's JSON member is lower-case
        }
        return tree;
    }

    private static ObjectNode decodeStruct(Map<String, String> params) {
        ObjectNode out = NODES.objectNode();
        Map<String, Map<String, String>> nested = new LinkedHashMap<>();
        for (Map.Entry<String, String> e : params.entrySet()) {
            String key = e.getKey();
            int dot = key.indexOf('.');
            if (dot < 0) {
                if (EMPTY_LIST_NAMES.contains(key) && e.getValue().isEmpty()) {
                    out.set(key, NODES.arrayNode());
                } else if (!RULES.containsKey(key)) {
                    out.put(key, e.getValue());
                }
                continue;
            }
            String head = key.substring(0, dot);
            if (RULES.containsKey(head)) {
                nested.computeIfAbsent(head, h -> new LinkedHashMap<>()).put(key.substring(dot + 1), e.getValue());
            }
        }
        for (Map.Entry<String, Map<String, String>> group : nested.entrySet()) {
            Rule rule = RULES.get(group.getKey());
            TreeMap<Integer, Map<String, String>> byIndex = byIndex(group.getKey(), group.getValue());
            switch (rule.shape()) {
                case SCALAR_LIST -> {
                    ArrayNode list = NODES.arrayNode();
                    byIndex.values().forEach(m -> {
                        if (m.containsKey("")) {
                            list.add(m.get(""));
                        }
                    });
                    out.set(rule.member(), list);
                }
                case NAME_VALUE_MAP, KEY_VALUE_MAP -> {
                    String keyField = rule.shape() == Shape.NAME_VALUE_MAP ? "Name" : "Key";
                    ObjectNode map = NODES.objectNode();
                    byIndex.values().forEach(m -> {
                        if (m.containsKey(keyField)) {
                            map.put(m.get(keyField), m.getOrDefault("Value", ""));
                        }
                    });
                    out.set(rule.member(), map);
                }
                case MESSAGE_ATTRIBUTE_MAP -> {
                    ObjectNode map = NODES.objectNode();
                    byIndex.values().forEach(m -> {
                        if (m.containsKey("Name")) {
                            ObjectNode value = NODES.objectNode();
                            m.forEach((k, v) -> {
                                if (k.startsWith("Value.")) {
                                    value.put(k.substring("Value.".length()), v);
                                }
                            });
                            map.set(m.get("Name"), value);
                        }
                    });
                    out.set(rule.member(), map);
                }
                case STRUCT_LIST -> {
                    ArrayNode list = NODES.arrayNode();
                    byIndex.values().forEach(m -> list.add(decodeStruct(m)));
                    out.set(rule.member(), list);
                }
            }
        }
        return out;
    }

    /** {@code "3.Name" -> {3: {"Name": v}}}, {@code "3" -> {3: {"": v}}}, sorted by index. */
    private static TreeMap<Integer, Map<String, String>> byIndex(String head, Map<String, String> rest) {
        TreeMap<Integer, Map<String, String>> out = new TreeMap<>();
        for (Map.Entry<String, String> e : rest.entrySet()) {
            String key = e.getKey();
            int dot = key.indexOf('.');
            String index = dot < 0 ? key : key.substring(0, dot);
            int n;
            try {
                n = Integer.parseInt(index);
            } catch (NumberFormatException ex) {
                throw new SqsException(SqsError.INVALID_PARAMETER_VALUE,
                        "The index in parameter " + head + "." + index + " is not a number.");
            }
            if (n < 1) {
                throw new SqsException(SqsError.INVALID_PARAMETER_VALUE,
                        "The index in parameter " + head + "." + index + " must be positive.");
            }
            out.computeIfAbsent(n, i -> new LinkedHashMap<>()).put(dot < 0 ? "" : key.substring(dot + 1), e.getValue());
        }
        return out;
    }
}
