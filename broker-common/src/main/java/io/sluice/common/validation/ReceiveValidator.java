package io.sluice.common.validation;

import io.sluice.common.SqsError;
import io.sluice.common.SqsFailure;
import io.sluice.common.SqsLimits;
import java.util.Optional;

/**
 * ReceiveMessage parameter ranges (spec ReceiveMessage), all {@code InvalidParameterValue}; {@code null} means the
 * parameter was not sent and is always fine. Attribute-name selection is {@link AttributeNameFilter} and
 * {@link SystemAttributeSelection}.
 */
public final class ReceiveValidator {
    private ReceiveValidator() {
    }

    /** All receive parameters, in the order MaxNumberOfMessages, VisibilityTimeout, WaitTimeSeconds, attempt id. */
    public static Optional<SqsFailure> validate(Integer maxNumberOfMessages, Integer visibilityTimeout,
            Integer waitTimeSeconds, String receiveRequestAttemptId, boolean fifo) {
        return checkMaxNumberOfMessages(maxNumberOfMessages)
                .or(() -> checkVisibilityTimeout(visibilityTimeout))
                .or(() -> checkWaitTimeSeconds(waitTimeSeconds))
                .or(() -> checkReceiveRequestAttemptId(receiveRequestAttemptId, fifo));
    }

    /** 1-10. */
    public static Optional<SqsFailure> checkMaxNumberOfMessages(Integer value) {
        if (value == null || (value >= 1 && value <= SqsLimits.MAX_RECEIVE_MESSAGES)) {
            return Optional.empty();
        }
        return invalid("Value " + value + " for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1"
                + " and " + SqsLimits.MAX_RECEIVE_MESSAGES + ", if provided.");
    }

    /** 0-20. */
    public static Optional<SqsFailure> checkWaitTimeSeconds(Integer value) {
        return checkZeroTo("WaitTimeSeconds", value, SqsLimits.MAX_WAIT_TIME_SECONDS);
    }

    /** 0-43200; also usable for ChangeMessageVisibility(Batch). */
    public static Optional<SqsFailure> checkVisibilityTimeout(Integer value) {
        return checkZeroTo("VisibilityTimeout", value, SqsLimits.MAX_VISIBILITY_TIMEOUT_SECONDS);
    }

    /**
     * FIFO queues only: 1-128 ASCII letters, digits and punctuation. Standard queues ignore the parameter, as does
     * an empty value.
     */
    public static Optional<SqsFailure> checkReceiveRequestAttemptId(String value, boolean fifo) {
        if (!fifo || value == null || value.isEmpty() || SqsLimits.isValidFifoId(value)) {
            return Optional.empty();
        }
        return Optional.of(MessageValidator.badId("ReceiveRequestAttemptId", value));
    }

    private static Optional<SqsFailure> checkZeroTo(String parameter, Integer value, int max) {
        if (value == null || (value >= 0 && value <= max)) {
            return Optional.empty();
        }
        return invalid("Value " + value + " for parameter " + parameter + " is invalid. Reason: Must be >= 0 and <= "
                + max + ", if provided.");
    }

    private static Optional<SqsFailure> invalid(String message) {
        return Optional.of(SqsError.INVALID_PARAMETER_VALUE.withMessage(message));
    }
}
