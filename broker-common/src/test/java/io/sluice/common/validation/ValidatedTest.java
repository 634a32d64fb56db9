package io.sluice.common.validation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.common.SqsError;
import io.sluice.common.SqsException;
import io.sluice.common.SqsFailure;
import org.junit.jupiter.api.Test;

class ValidatedTest {
    @Test
    void okCarriesTheValue() {
        Validated<String> ok = Validated.ok("v");
        assertTrue(ok.isOk());
        assertEquals("v", ok.value());
        assertEquals("v", ok.orElseThrow());
        assertTrue(ok.failure().isEmpty());
    }

    @Test
    void failureCarriesTheFailureAndThrowsOnlyOnRequest() {
        SqsFailure failure = SqsError.INVALID_ATTRIBUTE_VALUE.withMessage("m");
        Validated<String> bad = Validated.fail(failure);
        assertFalse(bad.isOk());
        assertEquals(failure, bad.failure().orElseThrow());
        assertSame(failure, assertThrows(SqsException.class, bad::orElseThrow).failure());
        assertThrows(IllegalStateException.class, bad::value);
    }
}
