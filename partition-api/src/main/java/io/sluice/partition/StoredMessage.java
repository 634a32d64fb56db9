package io.sluice.partition;

import io.sluice.common.MessageAttributeValue;
import java.util.Map;

/**
 * The immutable part of a message, written once at send under the {@code b} key. What changes per receive
 * lives in {@code MessageEntry} and its {@code s} record.
 *
 * @param deadLetterSourceArn the queue a dead-letter copy came from, or null
 * @param deadLetterReason    why a dead-letter copy was handed off, or null (not a copy, or one made before reasons
 *                            were kept)
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
        String deadLetterSourceArn,
        DeadLetterReason deadLetterReason) {

    /** A message that is not a dead-letter copy with a known reason. */
    public StoredMessage(String messageId, String body, Map<String, MessageAttributeValue> attributes,
                         Map<String, MessageAttributeValue> systemAttributes, long sentTimestampMillis, String groupId,
                         String deduplicationId, String sequenceNumber, String senderId, String deadLetterSourceArn) {
        this(messageId, body, attributes, systemAttributes, sentTimestampMillis, groupId, deduplicationId,
                sequenceNumber, senderId, deadLetterSourceArn, null);
    }
}
