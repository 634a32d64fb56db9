package io.sluice.partition;

import io.sluice.common.MessageAttributeValue;
import java.util.Map;
import java.util.Objects;

/**
 * One message of a send, already validated by the frontend. The message id is chosen by the sender's frontend
 * (a UUID), so every replica stores the same id.
 *
 * @param delaySeconds   per-message delay, or {@code -1} for the queue's; ignored on FIFO queues
 * @param groupId        FIFO message group (required there); stored as-is on standard queues
 * @param deduplicationId FIFO explicit deduplication id, or null for content-based
 * @param provenance     non-null when the message is moved here from another queue (dead-letter hand-off or
 *                       redrive): it keeps its original timestamps and receive count
 */
public record NewMessage(
        String messageId,
        String body,
        Map<String, MessageAttributeValue> attributes,
        Map<String, MessageAttributeValue> systemAttributes,
        int delaySeconds,
        String groupId,
        String deduplicationId,
        String senderId,
        Provenance provenance) {

    public NewMessage {
        Objects.requireNonNull(messageId, "messageId");
        Objects.requireNonNull(body, "body");
        attributes = attributes == null ? Map.of() : Map.copyOf(attributes);
        systemAttributes = systemAttributes == null ? Map.of() : Map.copyOf(systemAttributes);
        senderId = senderId == null ? "" : senderId;
    }

    public static NewMessage of(String messageId, String body) {
        return new NewMessage(messageId, body, Map.of(), Map.of(), -1, null, null, null, null);
    }

    public static NewMessage fifo(String messageId, String body, String groupId, String deduplicationId) {
        return new NewMessage(messageId, body, Map.of(), Map.of(), -1, groupId, deduplicationId, null, null);
    }

    public NewMessage withAttributes(Map<String, MessageAttributeValue> userAttributes) {
        return new NewMessage(messageId, body, userAttributes, systemAttributes, delaySeconds, groupId, deduplicationId,
                senderId, provenance);
    }

    public NewMessage withDelaySeconds(int seconds) {
        return new NewMessage(messageId, body, attributes, systemAttributes, seconds, groupId, deduplicationId,
                senderId, provenance);
    }

    /**
     * Where a moved message came from.
     *
     * @param sentTimestampMillis       the original SentTimestamp
     * @param receiveCount              receives so far; the count carries on in the new queue
     * @param firstReceiveTimestampMillis 0 if never received
     * @param deadLetterSourceArn       ARN of the queue it was dead-lettered from, or null on redrive
     * @param handOffKey                a hand-off's identity, or null: the destination stores one copy per key within
     *                                  the deduplication window, however many movers execute the hand-off. A move
     *                                  task's is {@code sourceQueueId/partition/seq}; a dead-letter hand-off's adds
     *                                  why it was dead-lettered, {@code sourceQueueId/partition/seq/reasonCode} (a
     *                                  message is dead-lettered for one reason only, so the key still names one
     *                                  hand-off). The reason rides in the key because the key is a string every
     *                                  replica already stores as it is: older replicas in the shard read such a copy
     *                                  as before (hand-offs from leaders before 2026-12-03 have no reason)
     */
    public record Provenance(long sentTimestampMillis, int receiveCount, long firstReceiveTimestampMillis,
                             String deadLetterSourceArn, String handOffKey) {

        /** Without a hand-off key (a redrive, or a copy made before keys existed). */
        public Provenance(long sentTimestampMillis, int receiveCount, long firstReceiveTimestampMillis,
                          String deadLetterSourceArn) {
            this(sentTimestampMillis, receiveCount, firstReceiveTimestampMillis, deadLetterSourceArn, null);
        }

        /** The key of the hand-off of message {@code seq} of a partition (a move task's). */
        public static String handOffKey(PartitionId source, long seq) {
            return source.queueId() + "/" + source.index() + "/" + seq;
        }

        /** The key of the dead-letter hand-off of message {@code seq} of a partition, with why it was dead-lettered. */
        public static String handOffKey(PartitionId source, long seq, DeadLetterReason reason) {
            return handOffKey(source, seq) + "/" + reason.code();
        }

        /** Why the message was dead-lettered, from the hand-off key; null for a move, or a key without a reason. */
        public DeadLetterReason deadLetterReason() {
            if (handOffKey == null || deadLetterSourceArn == null) {
                return null;
            }
            String[] parts = handOffKey.split("/");
            try {
                return parts.length == 4 ? DeadLetterReason.ofCode(Integer.parseInt(parts[3])) : null;
            } catch (IllegalArgumentException e) { // a code this version does not know
                return null;
            }
        }
    }
}
