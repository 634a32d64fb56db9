package io.sluice.frontend.protocol;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sluice.common.SqsError;
import io.sluice.common.SqsException;
import io.sluice.common.SqsFailure;
import java.io.IOException;

/** The JSON 1.0 protocol (spec 1.6): parse a request body into a tree, write a response or error body. */
public final class JsonCodec {
    static final ObjectMapper MAPPER;

    static {
        JsonMapper mapper = JsonMapper.builder().disable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS).build();
        mapper.getFactory().setStreamReadConstraints(StreamReadConstraints.builder()
                .maxNestingDepth(32).maxStringLength(8 * 1024 * 1024).maxNumberLength(64).build());
        MAPPER = mapper;
    }

    private JsonCodec() {
    }

    public static ObjectMapper mapper() {
        return MAPPER;
    }

    /** An empty body is an empty request; anything but a JSON object is a serialization error. */
    public static ObjectNode parse(byte[] body) {
        if (body.length == 0) {
            return MAPPER.createObjectNode();
        }
        JsonNode node;
        try {
            node = MAPPER.readTree(body);
        } catch (IOException e) {
            throw new SqsException(SqsError.MALFORMED_REQUEST, "The request body is not valid JSON.");
        }
        if (node == null || node.isMissingNode() || node.isNull()) {
            return MAPPER.createObjectNode();
        }
        if (!node.isObject()) {
            throw new SqsException(SqsError.MALFORMED_REQUEST, "The request body must be a JSON object.");
        }
        return (ObjectNode) node;
    }

    public static byte[] success(ObjectNode result) {
        try {
            return MAPPER.writeValueAsBytes(result);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write a JSON tree", e);
        }
    }

    public static byte[] error(SqsFailure failure) {
        ObjectNode body = MAPPER.createObjectNode();
        body.put("__type", failure.error().jsonType());
        body.put("message", failure.message());
        return success(body);
    }

    /** The {@code x-amzn-query-error} header value: the Query code and the fault, which SDKs report as the code. */
    public static String queryErrorHeader(SqsFailure failure) {
        return failure.error().queryCode() + ";" + failure.error().faultType();
    }
}
