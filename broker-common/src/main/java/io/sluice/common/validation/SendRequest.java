package io.sluice.common.validation;

import io.sluice.common.MessageAttributeValue;
import io.sluice.common.Utf8;
import java.util.Collections;
import java.util.Map;

/**
 * One message as a client asked to send it (SendMessage, or one SendMessageBatch entry), before validation.
 * Absent optional parameters are {@code null}; absent attribute maps become empty maps. Attribute maps keep the
 * caller's iteration order, which decides which of several bad attributes is reported (pass the request order).
 *
 * @param body                   {@code MessageBody}; null when absent
 * @param delaySeconds           {@code DelaySeconds}; null when absent
 * @param messageAttributes      user attributes by name
 * @param systemAttributes       {@code MessageSystemAttributes} by name (only {@code AWSTraceHeader} is valid)
 * @param messageGroupId         {@code MessageGroupId}; null or empty when absent
 * @param messageDeduplicationId {@code MessageDeduplicationId}; null or empty when absent
 */
public record SendRequest(
        String body,
        Integer delaySeconds,
        Map<String, MessageAttributeValue> messageAttributes,
        Map<String, MessageAttributeValue> systemAttributes,
        String messageGroupId,
        String messageDeduplicationId) {

    public SendRequest {
        messageAttributes = messageAttributes == null ? Map.of() : Collections.unmodifiableMap(messageAttributes);
        systemAttributes = systemAttributes == null ? Map.of() : Collections.unmodifiableMap(systemAttributes);
    }

    /** A request with only a body. */
    public static SendRequest ofBody(String body) {
        return new SendRequest(body, null, null, null, null, null);
    }

    /**
     * Size counted against {@code MaximumMessageSize} and the batch limit (spec 5.2): UTF-8 bytes of the body plus,
     * per user attribute, its name, data type and value. System attributes do not count.
     */
    public long sizeBytes() {
        long size = body == null ? 0 : Utf8.length(body);
        for (Map.Entry<String, MessageAttributeValue> e : messageAttributes.entrySet()) {
            size += e.getValue().sizeBytes(e.getKey());
        }
        return size;
    }
}
