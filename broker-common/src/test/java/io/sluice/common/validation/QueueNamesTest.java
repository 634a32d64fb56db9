package io.sluice.common.validation;

import static io.sluice.common.validation.ValidationAssertions.assertFailure;
import static io.sluice.common.validation.ValidationAssertions.assertOk;

import io.sluice.common.SqsError;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

class QueueNamesTest {
    static final String STANDARD_TEXT =
            "Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length";
    static final String FIFO_TEXT = "The name of a FIFO queue can only include alphanumeric characters, hyphens,"
            + " or underscores, must end with .fifo suffix and be 1 to 80 in length";

    static Stream<String> validStandardNames() {
        return Stream.of("a", "Orders_2-x", "Z".repeat(80), "0123456789");
    }

    static Stream<String> validFifoNames() {
        return Stream.of("a.fifo", "orders-1_x.fifo", "q".repeat(75) + ".fifo");
    }

    @ParameterizedTest
    @MethodSource("validStandardNames")
    void acceptsStandardNames(String name) {
        assertOk(QueueNames.validate(name, false));
    }

    @ParameterizedTest
    @MethodSource("validFifoNames")
    void acceptsFifoNames(String name) {
        assertOk(QueueNames.validate(name, true));
    }

    @ParameterizedTest
    @ValueSource(strings = {"has space", "dot.name", "slash/name", "caf\u00e9", "q.fifo", "star*"})
    void rejectsBadStandardNames(String name) {
        assertFailure(SqsError.INVALID_PARAMETER_VALUE, STANDARD_TEXT, QueueNames.validate(name, false));
    }

    @Test
    void standardNameOf81CharactersIsRejected() {
        assertFailure(SqsError.INVALID_PARAMETER_VALUE, STANDARD_TEXT, QueueNames.validate("Z".repeat(81), false));
    }

    @ParameterizedTest
    @ValueSource(strings = {"orders", ".fifo", "a.b.fifo", "bad name.fifo", "orders.FIFO", "orders.fifo.fifo"})
    void rejectsBadFifoNames(String name) {
        assertFailure(SqsError.INVALID_PARAMETER_VALUE, FIFO_TEXT, QueueNames.validate(name, true));
    }

    @Test
    void fifoBaseNameOf76CharactersIsRejected() {
        assertFailure(SqsError.INVALID_PARAMETER_VALUE, FIFO_TEXT,
                QueueNames.validate("q".repeat(76) + ".fifo", true));
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void missingNameIsMissingParameter(boolean fifo) {
        assertFailure(SqsError.MISSING_PARAMETER, "The request must contain the parameter QueueName.",
                QueueNames.validate("", fifo));
        assertFailure(SqsError.MISSING_PARAMETER, "The request must contain the parameter QueueName.",
                QueueNames.validate(null, fifo));
    }
}
