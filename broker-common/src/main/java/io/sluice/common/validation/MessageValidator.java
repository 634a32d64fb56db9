package io.sluice.common.validation;

import io.sluice.common.SqsError;
import io.sluice.common.SqsFailure;
import io.sluice.common.SqsLimits;
import java.util.Optional;

/**
 * SendMessage / SendMessageBatch-entry validation against the target queue's attributes (spec SendMessage, 5.2,
 * 5.3, 5.5, 7). Checks run in this order and the first failure is returned:
 * <ol>
 *   <li>body present and non-empty ({@code MissingParameter});</li>
 *   <li>FIFO: {@code MessageGroupId} present;</li>
 *   <li>{@code DelaySeconds}: 0-900 on standard queues, only 0 on FIFO queues;</li>
 *   <li>group / deduplication id format and queue-type rules, then FIFO dedup-id-or-content-based;</li>
 *   <li>user attributes, then system attributes ({@link MessageAttributesValidator});</li>
 *   <li>body characters ({@code InvalidMessageContents});</li>
 *   <li>size (body + attributes) against {@code MaximumMessageSize}; equal is accepted.</li>
 * </ol>
 * An empty {@code MessageGroupId} or {@code MessageDeduplicationId} counts as absent.
 */
public final class MessageValidator {
    /** Where a message comes from: texts and codes differ slightly for batch entries (spec SendMessageBatch). */
    public enum Origin { SEND_MESSAGE, BATCH_ENTRY }

    static final String MISSING_BODY = "The request must contain the parameter MessageBody.";
    static final String MISSING_GROUP = "The request must contain the parameter MessageGroupId.";
    static final String MISSING_DEDUP = "The queue should either have ContentBasedDeduplication enabled or"
            + " MessageDeduplicationId provided explicitly";

    private MessageValidator() {
    }

    /** SendMessage. */
    public static Optional<SqsFailure> validateSend(SendRequest message, QueueAttributes queue) {
        return validate(message, queue, Origin.SEND_MESSAGE);
    }

    /** One SendMessageBatch entry; a failure goes to that entry's {@code Failed} result. */
    public static Optional<SqsFailure> validateBatchEntry(SendRequest message, QueueAttributes queue) {
        return validate(message, queue, Origin.BATCH_ENTRY);
    }

    public static Optional<SqsFailure> validate(SendRequest m, QueueAttributes queue, Origin origin) {
        if (m.body() == null || m.body().isEmpty()) {
            return Optional.of(SqsError.MISSING_PARAMETER.withMessage(MISSING_BODY));
        }
        if (queue.fifo() && isAbsent(m.messageGroupId())) {
            return Optional.of(origin == Origin.SEND_MESSAGE ? SqsError.MISSING_PARAMETER.withMessage(MISSING_GROUP)
                    : SqsError.INVALID_PARAMETER_VALUE.withMessage(MISSING_GROUP));
        }
        return checkDelaySeconds(m.delaySeconds(), queue.fifo())
                .or(() -> checkIds(m.messageGroupId(), m.messageDeduplicationId(), queue))
                .or(() -> MessageAttributesValidator.validateUserAttributes(m.messageAttributes()))
                .or(() -> MessageAttributesValidator.validateSystemAttributes(m.systemAttributes()))
                .or(() -> SqsLimits.hasOnlyAllowedCharacters(m.body()) ? Optional.empty()
                        : Optional.of(SqsError.INVALID_MESSAGE_CONTENTS.failure()))
                .or(() -> checkSize(m.sizeBytes(), queue.maximumMessageSize(), origin));
    }

    /**
     * The FIFO checks SendMessageBatch makes on every entry before anything else (spec: after the entry-id check,
     * before the duplicate-id check), both {@code InvalidParameterValue}: group id present, and a deduplication id
     * present unless the queue has content-based deduplication. Nothing to check on standard queues.
     */
    public static Optional<SqsFailure> checkBatchRequestFifoEntry(SendRequest m, QueueAttributes queue) {
        if (!queue.fifo()) {
            return Optional.empty();
        }
        if (isAbsent(m.messageGroupId())) {
            return Optional.of(SqsError.INVALID_PARAMETER_VALUE.withMessage(MISSING_GROUP));
        }
        if (isAbsent(m.messageDeduplicationId()) && !queue.contentBasedDeduplication()) {
            return Optional.of(SqsError.INVALID_PARAMETER_VALUE.withMessage(MISSING_DEDUP));
        }
        return Optional.empty();
    }

    /** {@code DelaySeconds} (null = absent): 0-900 on standard queues; FIFO queues accept only 0. */
    public static Optional<SqsFailure> checkDelaySeconds(Integer delaySeconds, boolean fifo) {
        if (delaySeconds == null) {
            return Optional.empty();
        }
        if (fifo && delaySeconds != 0) {
            return Optional.of(SqsError.INVALID_PARAMETER_VALUE.withMessage("Value " + delaySeconds
                    + " for parameter DelaySeconds is invalid. Reason: The request include parameter that is not"
                    + " valid for this queue type."));
        }
        if (delaySeconds < 0 || delaySeconds > SqsLimits.MAX_DELAY_SECONDS) {
            return Optional.of(SqsError.INVALID_PARAMETER_VALUE.withMessage("Value " + delaySeconds
                    + " for parameter DelaySeconds is invalid. Reason: DelaySeconds must be >= 0 and <= "
                    + SqsLimits.MAX_DELAY_SECONDS + "."));
        }
        return Optional.empty();
    }

    /** {@code size > max} fails; {@code size == max} is accepted. */
    public static Optional<SqsFailure> checkSize(long sizeBytes, int maximumMessageSize, Origin origin) {
        if (sizeBytes <= maximumMessageSize) {
            return Optional.empty();
        }
        String prefix = origin == Origin.SEND_MESSAGE ? "One or more parameters are invalid."
                : "One or more parameters cannot be validated.";
        return Optional.of(SqsError.INVALID_PARAMETER_VALUE.withMessage(
                prefix + " Reason: Message must be shorter than " + maximumMessageSize + " bytes."));
    }

    /**
     * FIFO: both ids well-formed when present, and a deduplication id unless content-based deduplication is on.
     * Standard: a deduplication id is not allowed; a group id (fair queues) is allowed and must be well-formed.
     */
    private static Optional<SqsFailure> checkIds(String groupId, String dedupId, QueueAttributes queue) {
        if (!isAbsent(groupId) && !SqsLimits.isValidFifoId(groupId)) {
            return Optional.of(badId("MessageGroupId", groupId));
        }
        if (!queue.fifo()) {
            return isAbsent(dedupId) ? Optional.empty()
                    : Optional.of(SqsError.INVALID_PARAMETER_VALUE.withMessage("Value " + dedupId
                            + " for parameter MessageDeduplicationId is invalid. Reason: The request include"
                            + " parameter that is not valid for this queue type."));
        }
        if (!isAbsent(dedupId) && !SqsLimits.isValidFifoId(dedupId)) {
            return Optional.of(badId("MessageDeduplicationId", dedupId));
        }
        if (isAbsent(dedupId) && !queue.contentBasedDeduplication()) {
            return Optional.of(SqsError.INVALID_PARAMETER_VALUE.withMessage(MISSING_DEDUP));
        }
        return Optional.empty();
    }

    static SqsFailure badId(String parameter, String value) {
        return SqsError.INVALID_PARAMETER_VALUE.withMessage("Value " + value + " for parameter " + parameter
                + " is invalid. Reason: " + parameter + " can only include alphanumeric and punctuation characters."
                + " 1 to " + SqsLimits.MAX_FIFO_ID_LENGTH + " in length.");
    }

    private static boolean isAbsent(String id) {
        return id == null || id.isEmpty();
    }
}
