package io.sluice.common.validation;

import static io.sluice.common.validation.ValidationAssertions.assertFailure;
import static io.sluice.common.validation.ValidationAssertions.assertOk;

import io.sluice.common.SqsError;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.NullSource;
import org.junit.jupiter.params.provider.ValueSource;

class ReceiveValidatorTest {
    @ParameterizedTest
    @NullSource
    @ValueSource(ints = {1, 5, 10})
    void maxNumberOfMessagesInRange(Integer n) {
        assertOk(ReceiveValidator.checkMaxNumberOfMessages(n));
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 11, -1, 100})
    void maxNumberOfMessagesOutOfRange(int n) {
        assertFailure(SqsError.INVALID_PARAMETER_VALUE, "Value " + n + " for parameter MaxNumberOfMessages is"
                + " invalid. Reason: Must be between 1 and 10, if provided.",
                ReceiveValidator.checkMaxNumberOfMessages(n));
    }

    @ParameterizedTest
    @NullSource
    @ValueSource(ints = {0, 20})
    void waitTimeInRange(Integer n) {
        assertOk(ReceiveValidator.checkWaitTimeSeconds(n));
    }

    @ParameterizedTest
    @ValueSource(ints = {-1, 21})
    void waitTimeOutOfRange(int n) {
        assertFailure(SqsError.INVALID_PARAMETER_VALUE, "Value " + n + " for parameter WaitTimeSeconds is invalid."
                + " Reason: Must be >= 0 and <= 20, if provided.", ReceiveValidator.checkWaitTimeSeconds(n));
    }

    @ParameterizedTest
    @NullSource
    @ValueSource(ints = {0, 43200})
    void visibilityTimeoutInRange(Integer n) {
        assertOk(ReceiveValidator.checkVisibilityTimeout(n));
    }

    @ParameterizedTest
    @ValueSource(ints = {-1, 43201})
    void visibilityTimeoutOutOfRange(int n) {
        assertFailure(SqsError.INVALID_PARAMETER_VALUE, "Value " + n + " for parameter VisibilityTimeout is invalid."
                + " Reason: Must be >= 0 and <= 43200, if provided.", ReceiveValidator.checkVisibilityTimeout(n));
    }

    @Test
    void receiveRequestAttemptIdOnFifoQueues() {
        assertOk(ReceiveValidator.checkReceiveRequestAttemptId("attempt-1!", true));
        assertOk(ReceiveValidator.checkReceiveRequestAttemptId("a".repeat(128), true));
        assertOk(ReceiveValidator.checkReceiveRequestAttemptId(null, true));
        assertOk(ReceiveValidator.checkReceiveRequestAttemptId("", true));
        assertOk(ReceiveValidator.checkReceiveRequestAttemptId("ignored on standard", false));
        for (String bad : new String[] {"a".repeat(129), "with space", "caf\u00e9"}) {
            assertFailure(SqsError.INVALID_PARAMETER_VALUE, "Value " + bad + " for parameter ReceiveRequestAttemptId"
                    + " is invalid. Reason: ReceiveRequestAttemptId can only include alphanumeric and punctuation"
                    + " characters. 1 to 128 in length.", ReceiveValidator.checkReceiveRequestAttemptId(bad, true));
        }
    }

    @Test
    void validateChecksInOrder() {
        assertOk(ReceiveValidator.validate(10, 43200, 20, "a", true));
        assertOk(ReceiveValidator.validate(null, null, null, null, false));
        assertFailure(SqsError.INVALID_PARAMETER_VALUE, "Value 11 for parameter MaxNumberOfMessages is invalid."
                + " Reason: Must be between 1 and 10, if provided.",
                ReceiveValidator.validate(11, -1, 21, "x y", true));
        assertFailure(SqsError.INVALID_PARAMETER_VALUE, "Value 21 for parameter WaitTimeSeconds is invalid."
                + " Reason: Must be >= 0 and <= 20, if provided.", ReceiveValidator.validate(1, 0, 21, "x y", true));
    }
}
