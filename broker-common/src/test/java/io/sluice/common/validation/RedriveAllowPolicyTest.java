package io.sluice.common.validation;

import static io.sluice.common.validation.ValidationAssertions.assertFailure;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.common.SqsError;
import io.sluice.common.validation.RedriveAllowPolicy.Permission;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class RedriveAllowPolicyTest {
    private static String arn(int i) {
        return "arn:aws:sqs:us-east-1:000000000000:src" + i;
    }

    private static String arnList(int n) {
        return IntStream.range(0, n).mapToObj(i -> "\"" + arn(i) + "\"").collect(Collectors.joining(",", "[", "]"));
    }

    private static String invalid(String raw, String reason) {
        return "Value " + raw + " for parameter RedriveAllowPolicy is invalid. Reason: " + reason;
    }

    @ParameterizedTest
    @CsvSource({"allowAll, ALLOW_ALL", "denyAll, DENY_ALL"})
    void permissionsWithoutSources(String wire, Permission expected) {
        String raw = "{\"redrivePermission\":\"" + wire + "\"}";
        RedriveAllowPolicy policy = RedriveAllowPolicy.parse(raw).value();
        assertEquals(expected, policy.permission());
        assertEquals(raw, policy.toJson());
        assertEquals(expected == Permission.ALLOW_ALL, policy.permits(arn(0)));
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 10})
    void byQueueTakesOneToTenArns(int n) {
        String raw = "{\"redrivePermission\":\"byQueue\",\"sourceQueueArns\":" + arnList(n) + "}";
        RedriveAllowPolicy policy = RedriveAllowPolicy.parse(raw).value();
        assertEquals(n, policy.sourceQueueArns().size());
        assertEquals(raw, policy.toJson());
        assertTrue(policy.permits(arn(0)));
        assertFalse(policy.permits(arn(10)));
    }

    @Test
    void byQueueWithElevenArnsIsRejected() {
        String raw = "{\"redrivePermission\":\"byQueue\",\"sourceQueueArns\":" + arnList(11) + "}";
        assertFailure(SqsError.INVALID_PARAMETER_VALUE,
                invalid(raw, "Too many sourceQueueArns: 11, at most 10 are allowed."), RedriveAllowPolicy.parse(raw));
    }

    @ParameterizedTest
    @ValueSource(strings = {"{\"redrivePermission\":\"byQueue\"}",
        "{\"redrivePermission\":\"byQueue\",\"sourceQueueArns\":[]}",
        "{\"redrivePermission\":\"byQueue\",\"sourceQueueArns\":\"arn:aws:sqs:us-east-1:000000000000:a\"}"})
    void byQueueNeedsANonEmptyList(String raw) {
        assertFailure(SqsError.INVALID_PARAMETER_VALUE,
                invalid(raw, "byQueue redrivePermission requires a non-empty sourceQueueArns list."),
                RedriveAllowPolicy.parse(raw));
    }

    @ParameterizedTest
    @ValueSource(strings = {"allowAll", "denyAll"})
    void sourcesOnlyWithByQueue(String permission) {
        String raw = "{\"redrivePermission\":\"" + permission + "\",\"sourceQueueArns\":" + arnList(1) + "}";
        assertFailure(SqsError.INVALID_PARAMETER_VALUE,
                invalid(raw, "sourceQueueArns can be specified only when redrivePermission is byQueue."),
                RedriveAllowPolicy.parse(raw));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {"\"byqueue\"|byqueue", "\"\"|''", "1|1", "null|null"})
    void unknownPermission(String value, String shown) {
        String raw = "{\"redrivePermission\":" + value + "}";
        assertFailure(SqsError.INVALID_PARAMETER_VALUE, invalid(raw, "Invalid value for redrivePermission: " + shown
                + ", valid values are allowAll, denyAll and byQueue."), RedriveAllowPolicy.parse(raw));
    }

    @Test
    void structuralErrors() {
        String missing = "{\"sourceQueueArns\":" + arnList(1) + "}";
        assertFailure(SqsError.INVALID_PARAMETER_VALUE,
                invalid(missing, "Redrive allow policy does not contain mandatory attribute: redrivePermission."),
                RedriveAllowPolicy.parse(missing));
        String extra = "{\"redrivePermission\":\"allowAll\",\"other\":1}";
        assertFailure(SqsError.INVALID_PARAMETER_VALUE,
                invalid(extra, "Only following attributes are supported: [redrivePermission, sourceQueueArns]."),
                RedriveAllowPolicy.parse(extra));
        String badArn = "{\"redrivePermission\":\"byQueue\",\"sourceQueueArns\":[\"src\"]}";
        assertFailure(SqsError.INVALID_PARAMETER_VALUE,
                invalid(badArn, "Source queue ARN should be fully qualified ARN: \"src\"."),
                RedriveAllowPolicy.parse(badArn));
        for (String notJson : List.of("", "allowAll", "[]", "{")) {
            assertFailure(SqsError.INVALID_PARAMETER_VALUE, "Invalid value for the parameter RedriveAllowPolicy."
                    + " Reason: Redrive allow policy is not a valid JSON map.", RedriveAllowPolicy.parse(notJson));
        }
    }
}
