package io.sluice.common.validation;

import io.sluice.common.SqsError;
import io.sluice.common.SqsFailure;
import io.sluice.common.SqsLimits;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Queue name rules (spec CreateQueue, section 10). A standard name is {@code [A-Za-z0-9_-]{1,80}}; a FIFO name is
 * {@code [A-Za-z0-9_-]{1,75}} followed by {@code .fifo}. Names are case-sensitive.
 */
public final class QueueNames {
    static final String STANDARD_NAME_MESSAGE =
            "Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length";
    static final String FIFO_NAME_MESSAGE = "The name of a FIFO queue can only include alphanumeric characters,"
            + " hyphens, or underscores, must end with .fifo suffix and be 1 to 80 in length";

    private static final int MAX_FIFO_BASE_LENGTH =
            SqsLimits.MAX_QUEUE_NAME_LENGTH - SqsLimits.FIFO_QUEUE_SUFFIX.length();
    private static final Pattern STANDARD =
            Pattern.compile("[A-Za-z0-9_-]{1," + SqsLimits.MAX_QUEUE_NAME_LENGTH + "}");
    private static final Pattern FIFO =
            Pattern.compile("[A-Za-z0-9_-]{1," + MAX_FIFO_BASE_LENGTH + "}\\.fifo");

    private QueueNames() {
    }

    /** True when the name ends in {@code .fifo} (whether or not it is otherwise valid). */
    public static boolean hasFifoSuffix(String name) {
        return name != null && name.endsWith(SqsLimits.FIFO_QUEUE_SUFFIX);
    }

    public static boolean isValidStandardName(String name) {
        return name != null && STANDARD.matcher(name).matches();
    }

    public static boolean isValidFifoName(String name) {
        return name != null && FIFO.matcher(name).matches();
    }

    /**
     * Validates a CreateQueue name against the queue type the request asks for ({@code fifo} = the request's
     * {@code FifoQueue} attribute is {@code true}). A {@code .fifo} name without {@code FifoQueue=true} is judged
     * as a standard name and therefore rejected with the standard-name text (documented choice, spec [?]).
     * A missing or empty name is {@code MissingParameter}.
     */
    public static Optional<SqsFailure> validate(String name, boolean fifo) {
        if (name == null || name.isEmpty()) {
            return Optional.of(SqsError.MISSING_PARAMETER.withMessage(
                    "The request must contain the parameter QueueName."));
        }
        if (fifo) {
            return isValidFifoName(name) ? Optional.empty()
                    : Optional.of(SqsError.INVALID_PARAMETER_VALUE.withMessage(FIFO_NAME_MESSAGE));
        }
        return isValidStandardName(name) ? Optional.empty()
                : Optional.of(SqsError.INVALID_PARAMETER_VALUE.withMessage(STANDARD_NAME_MESSAGE));
    }
}
