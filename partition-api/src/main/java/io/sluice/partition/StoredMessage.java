package io.sluice.partition;

import io.sluice.common.MessageAttributeValue;
import java.util.Map;

/**
 * The immutable part of a message, written once at send under the {@code b} key. What changes per receive
 * lives in {@link MessageEntry} and its {@code s} record.
 */
public record StoredMessage(
        String messageId,
        String body,
        Map<String, MessageAttributeValue> attributes,
        Map<String, MessageAttributeValue> systemAttributes,
        long sentTimestampMillis,
        String groupId,
        String deduplicationId,
        String sequenceNumber,
        String senderId,
        String deadLetterSourceArn) {
}
