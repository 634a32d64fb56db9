package io.sluice.common.validation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.common.SqsError;
import io.sluice.common.SqsFailure;
import java.util.Optional;

/** Assertions shared by the validation tests: a failure is checked by error code and exact message. */
final class ValidationAssertions {
    private ValidationAssertions() {
    }

    static void assertOk(Optional<SqsFailure> result) {
        assertTrue(result.isEmpty(), () -> "expected valid, got " + result.get());
    }

    static void assertOk(Validated<?> result) {
        assertTrue(result.isOk(), () -> "expected valid, got " + result);
    }

    static void assertFailure(SqsError error, String message, Optional<SqsFailure> result) {
        assertTrue(result.isPresent(), "expected " + error + " but was valid");
        assertEquals(new SqsFailure(error, message), result.get());
    }

    static void assertFailure(SqsError error, String message, Validated<?> result) {
        assertFailure(error, message, result.failure());
    }

    /** Only the error code, for rules whose message text is not fixed by the spec and not under test. */
    static void assertError(SqsError error, Optional<SqsFailure> result) {
        assertTrue(result.isPresent(), "expected " + error + " but was valid");
        assertEquals(error, result.get().error(), () -> "message: " + result.get().message());
    }
}
