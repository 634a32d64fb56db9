package io.sluice.common.validation;

import static io.sluice.common.validation.ValidationAssertions.assertFailure;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.sluice.common.SqsError;
import io.sluice.common.validation.RedeliveryBackoff.Jitter;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class RedeliveryBackoffTest {
    private static String reason(String why) {
        return "Invalid value for the parameter SluiceRedeliveryBackoff. Reason: " + why + ".";
    }

    @Test
    void parsesEveryFieldAndRendersThemAllAsNumbers() {
        RedeliveryBackoff b = RedeliveryBackoff.parse(
                "{\"initialSeconds\": 1, \"multiplier\": 2, \"maxSeconds\": 900, \"jitter\": \"full\"}").value();
        assertEquals(new RedeliveryBackoff(1, 2, 900, Jitter.FULL), b);
        assertEquals("{\"initialSeconds\":1,\"multiplier\":2,\"maxSeconds\":900,\"jitter\":\"full\"}", b.toJson());
        assertEquals(b, RedeliveryBackoff.parse(b.toJson()).value(), "round trip");

        RedeliveryBackoff strings = RedeliveryBackoff.parse(
                "{\"initialSeconds\":\"30\",\"multiplier\":\"1.5\",\"maxSeconds\":\"43200\",\"jitter\":\"equal\"}").value();
        assertEquals(new RedeliveryBackoff(30, 1.5, 43200, Jitter.EQUAL), strings);
        assertEquals("{\"initialSeconds\":30,\"multiplier\":1.5,\"maxSeconds\":43200,\"jitter\":\"equal\"}",
                strings.toJson());
    }

    @Test
    void onlyInitialSecondsIsRequired() {
        assertEquals(new RedeliveryBackoff(5, 2, 900, Jitter.FULL),
                RedeliveryBackoff.parse("{\"initialSeconds\":5}").value());
        assertEquals(new RedeliveryBackoff(0, 1, 0, Jitter.NONE),
                RedeliveryBackoff.parse("{\"initialSeconds\":0,\"multiplier\":1,\"maxSeconds\":0,\"jitter\":\"none\"}")
                        .value());
        assertFailure(SqsError.INVALID_ATTRIBUTE_VALUE, reason("initialSeconds is required"),
                RedeliveryBackoff.parse("{\"multiplier\":2}"));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "{\"initialSeconds\":-1}|initialSeconds must be an integer from 0 to 43200",
        "{\"initialSeconds\":43201}|initialSeconds must be an integer from 0 to 43200",
        "{\"initialSeconds\":1.5}|initialSeconds must be an integer from 0 to 43200",
        "{\"initialSeconds\":true}|initialSeconds must be an integer from 0 to 43200",
        "{\"initialSeconds\":1,\"multiplier\":0.5}|multiplier must be a number from 1 to 10",
        "{\"initialSeconds\":1,\"multiplier\":11}|multiplier must be a number from 1 to 10",
        "{\"initialSeconds\":1,\"multiplier\":\"x\"}|multiplier must be a number from 1 to 10",
        "{\"initialSeconds\":1,\"maxSeconds\":43201}|maxSeconds must be an integer up to 43200",
        "{\"initialSeconds\":10,\"maxSeconds\":5}|maxSeconds (5) must not be below initialSeconds (10)",
        "{\"initialSeconds\":1000}|maxSeconds (900 by default) must not be below initialSeconds (1000)",
        "{\"initialSeconds\":1,\"jitter\":\"FULL\"}|jitter must be one of none, full, equal",
        "{\"initialSeconds\":1,\"jitter\":1}|jitter must be one of none, full, equal",
        "{\"initialSeconds\":1,\"retries\":3}|unknown field retries (known: initialSeconds, multiplier, maxSeconds, jitter)",
        "[1]|the value is not a JSON object",
        "{\"initialSeconds\":1,\"initialSeconds\":2}|the value is not a JSON object",
    })
    void namesTheFieldAValueIsWrongIn(String raw, String why) {
        assertFailure(SqsError.INVALID_ATTRIBUTE_VALUE, reason(why), RedeliveryBackoff.parse(raw));
    }

    @Test
    void waitGrowsByTheMultiplierUpToTheCapAndIsJitteredInsideIt() {
        RedeliveryBackoff none = new RedeliveryBackoff(2, 3, 50, Jitter.NONE);
        assertEquals(2_000, none.delayMillis(1, 0.7));
        assertEquals(6_000, none.delayMillis(2, 0.7));
        assertEquals(18_000, none.delayMillis(3, 0.7));
        assertEquals(50_000, none.delayMillis(4, 0.7), "54 s capped at 50");
        assertEquals(50_000, none.delayMillis(10_000, 0.7), "no overflow past the cap");

        RedeliveryBackoff full = new RedeliveryBackoff(10, 2, 900, Jitter.FULL);
        assertEquals(0, full.delayMillis(1, 0));
        assertEquals(5_000, full.delayMillis(1, 0.5));
        assertEquals(15_000, full.delayMillis(2, 0.75));

        RedeliveryBackoff equal = new RedeliveryBackoff(10, 2, 900, Jitter.EQUAL);
        assertEquals(5_000, equal.delayMillis(1, 0));
        assertEquals(7_500, equal.delayMillis(1, 0.5));
        assertEquals(15_000, equal.delayMillis(2, 0.5));
    }

    @Test
    void theQueueAttributeRoundTripsAndAnEmptyValueRemovesIt() {
        Map<String, String> create = new LinkedHashMap<>();
        create.put("SluiceRedeliveryBackoff", "{\"initialSeconds\":\"3\",\"jitter\":\"none\"}");
        QueueAttributes a = QueueAttributesValidator.forCreate("q", create).value();
        assertEquals(new RedeliveryBackoff(3, 2, 900, Jitter.NONE), a.redeliveryBackoff());
        assertEquals("{\"initialSeconds\":3,\"multiplier\":2,\"maxSeconds\":900,\"jitter\":\"none\"}",
                a.toStringMap().get("SluiceRedeliveryBackoff"));

        QueueAttributes removed = QueueAttributesValidator.forSet(a, Map.of("SluiceRedeliveryBackoff", "")).value();
        assertNull(removed.redeliveryBackoff());
        assertNull(removed.toStringMap().get("SluiceRedeliveryBackoff"));

        assertFailure(SqsError.INVALID_ATTRIBUTE_VALUE, reason("multiplier must be a number from 1 to 10"),
                QueueAttributesValidator.forSet(a, Map.of("SluiceRedeliveryBackoff",
                        "{\"initialSeconds\":1,\"multiplier\":20}")));
    }
}
