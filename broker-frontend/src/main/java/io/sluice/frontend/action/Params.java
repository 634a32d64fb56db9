package io.sluice.frontend.action;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sluice.common.MessageAttributeValue;
import io.sluice.common.SqsError;
import io.sluice.common.SqsException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Typed reads from a request tree. Query values arrive as strings and JSON values as their own types; both are
 * accepted where the model has a number or boolean. A value of the wrong shape is {@code InvalidParameterValue},
 * a missing required one {@code MissingParameter}, with the texts SQS uses.
 */
public final class Params {
    private final ObjectNode node;

    public Params(ObjectNode node) {
        this.node = node;
    }

    public ObjectNode tree() {
        return node;
    }

    public boolean has(String name) {
        JsonNode v = node.get(name);
        return v != null && !v.isNull();
    }

    /** A string member, or null when absent. */
    public String string(String name) {
        JsonNode v = node.get(name);
        if (v == null || v.isNull()) {
            return null;
        }
        if (!v.isTextual()) {
            throw invalid(name, "must be a string");
        }
        return v.asText();
    }

    public String requiredString(String name) {
        String v = string(name);
        if (v == null || v.isEmpty()) {
            throw missing(name);
        }
        return v;
    }

    /** An integer member, or null when absent. */
    public Integer integer(String name) {
        JsonNode v = node.get(name);
        if (v == null || v.isNull()) {
            return null;
        }
        if (v.isIntegralNumber() && v.canConvertToInt()) {
            return v.intValue();
        }
        if (v.isTextual()) {
            try {
                return Integer.parseInt(v.asText().trim());
            } catch (NumberFormatException e) {
                throw invalidValue(name, v.asText(), "must be an integer");
            }
        }
        throw invalidValue(name, v.toString(), "must be an integer");
    }

    public int requiredInteger(String name) {
        Integer v = integer(name);
        if (v == null) {
            throw missing(name);
        }
        return v;
    }

    /** A list of strings (empty when absent). */
    public List<String> stringList(String name) {
        JsonNode v = node.get(name);
        List<String> out = new ArrayList<>();
        if (v == null || v.isNull()) {
            return out;
        }
        if (!v.isArray()) {
            throw invalid(name, "must be a list");
        }
        for (JsonNode item : v) {
            if (!item.isTextual()) {
                throw invalid(name, "must be a list of strings");
            }
            out.add(item.asText());
        }
        return out;
    }

    /** A map of strings, in request order (empty when absent, null when {@code nullIfAbsent}). */
    public Map<String, String> stringMap(String name) {
        JsonNode v = node.get(name);
        Map<String, String> out = new LinkedHashMap<>();
        if (v == null || v.isNull()) {
            return out;
        }
        if (!v.isObject()) {
            throw invalid(name, "must be a map");
        }
        Iterator<Map.Entry<String, JsonNode>> it = v.fields();
        while (it.hasNext()) {
            Map.Entry<String, JsonNode> e = it.next();
            if (!e.getValue().isTextual()) {
                throw invalid(name + "." + e.getKey(), "must be a string");
            }
            out.put(e.getKey(), e.getValue().asText());
        }
        return out;
    }

    /**
     * Message attributes: {@code {name: {DataType, StringValue | BinaryValue(base64)}}}. Structure only; the rules
     * of spec 5.5 are checked by the message validator. A missing value becomes an empty one so the validator
     * reports it with SQS's text.
     */
    public Map<String, MessageAttributeValue> messageAttributes(String name) {
        JsonNode v = node.get(name);
        Map<String, MessageAttributeValue> out = new LinkedHashMap<>();
        if (v == null || v.isNull()) {
            return out;
        }
        if (!v.isObject()) {
            throw invalid(name, "must be a map");
        }
        Iterator<Map.Entry<String, JsonNode>> it = v.fields();
        while (it.hasNext()) {
            Map.Entry<String, JsonNode> e = it.next();
            if (!e.getValue().isObject()) {
                throw invalid(name + "." + e.getKey(), "must be a structure");
            }
            Params attr = new Params((ObjectNode) e.getValue());
            String type = attr.string("DataType");
            if (type == null || type.isEmpty()) {
                throw new SqsException(SqsError.INVALID_PARAMETER_VALUE,
                        "The message attribute '" + e.getKey() + "' must contain non-empty message attribute type.");
            }
            String binary = attr.string("BinaryValue");
            if (binary != null) {
                try {
                    out.put(e.getKey(), MessageAttributeValue.ofBinary(type, Base64.getMimeDecoder().decode(binary)));
                } catch (IllegalArgumentException ex) {
                    throw new SqsException(SqsError.INVALID_PARAMETER_VALUE,
                            "The message attribute '" + e.getKey() + "' has an invalid base64 BinaryValue.");
                }
            } else {
                String text = attr.string("StringValue");
                out.put(e.getKey(), type.startsWith("Binary") && text == null
                        ? MessageAttributeValue.ofBinary(type, new byte[0])
                        : MessageAttributeValue.ofString(type, text == null ? "" : text));
            }
        }
        return out;
    }

    /** A list of structures, e.g. batch {@code Entries} (empty when absent). */
    public List<Params> structList(String name) {
        JsonNode v = node.get(name);
        List<Params> out = new ArrayList<>();
        if (v == null || v.isNull()) {
            return out;
        }
        if (!v.isArray()) {
            throw invalid(name, "must be a list");
        }
        for (JsonNode item : v) {
            if (!item.isObject()) {
                throw invalid(name, "must be a list of structures");
            }
            out.add(new Params((ObjectNode) item));
        }
        return out;
    }

    public static SqsException missing(String name) {
        return new SqsException(SqsError.MISSING_PARAMETER, "The request must contain the parameter " + name + ".");
    }

    public static SqsException invalidValue(String name, String value, String reason) {
        return new SqsException(SqsError.INVALID_PARAMETER_VALUE,
                "Value " + value + " for parameter " + name + " is invalid. Reason: " + reason + ".");
    }

    private static SqsException invalid(String name, String reason) {
        return new SqsException(SqsError.INVALID_PARAMETER_VALUE, "Parameter " + name + " " + reason + ".");
    }
}
