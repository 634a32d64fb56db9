package io.sluice.common.validation;

import static io.sluice.common.validation.ValidationAssertions.assertFailure;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.common.SqsError;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class RedrivePolicyTest {
    private static final String ARN = "arn:aws:sqs:us-east-1:000000000000:dlq";

    private static String policy(String count) {
        return "{\"deadLetterTargetArn\":\"" + ARN + "\",\"maxReceiveCount\":" + count + "}";
    }

    private static String invalid(String raw, String reason) {
        return "Value " + raw + " for parameter RedrivePolicy is invalid. Reason: " + reason;
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {"1|1", "1000|1000", "\"1\"|1", "\"1000\"|1000", "5|5", "\"07\"|7"})
    void acceptsCountAsNumberOrString(String count, int expected) {
        RedrivePolicy parsed = RedrivePolicy.parse(policy(count)).value();
        assertEquals(new RedrivePolicy(ARN, expected), parsed);
        assertEquals(ARN, parsed.targetArn().orElseThrow().toString());
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {"0|0", "1001|1001", "-1|-1", "\"0\"|0", "\"abc\"|abc", "5.5|5.5",
        "true|true", "\"\"|''", "99999999999|99999999999", "null|null"})
    void rejectsCountsOutsideOneToThousand(String count, String shown) {
        String raw = policy(count);
        assertFailure(SqsError.INVALID_PARAMETER_VALUE, invalid(raw, "Invalid value for maxReceiveCount: " + shown
                + ", valid values are from 1 to 1000 both inclusive."), RedrivePolicy.parse(raw));
    }

    @Test
    void mandatoryAndUnsupportedMembers() {
        String noCount = "{\"deadLetterTargetArn\":\"" + ARN + "\"}";
        assertFailure(SqsError.INVALID_PARAMETER_VALUE,
                invalid(noCount, "Redrive policy does not contain mandatory attribute: maxReceiveCount."),
                RedrivePolicy.parse(noCount));
        String noArn = "{\"maxReceiveCount\":\"1000\"}";
        assertFailure(SqsError.INVALID_PARAMETER_VALUE,
                invalid(noArn, "Redrive policy does not contain mandatory attribute: deadLetterTargetArn."),
                RedrivePolicy.parse(noArn));
        String extra = "{\"deadLetterTargetArn\":\"" + ARN + "\",\"maxReceiveCount\":1,\"x\":1}";
        assertFailure(SqsError.INVALID_PARAMETER_VALUE,
                invalid(extra, "Only following attributes are supported: [deadLetterTargetArn, maxReceiveCount]."),
                RedrivePolicy.parse(extra));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", " ", "x", "[]", "5", "{", "{\"a\":1} trailing", "{\"a\":1,\"a\":2}"})
    void rejectsAnythingButOneJsonObject(String raw) {
        assertFailure(SqsError.INVALID_PARAMETER_VALUE,
                "Invalid value for the parameter RedrivePolicy. Reason: Redrive policy is not a valid JSON map.",
                RedrivePolicy.parse(raw));
    }

    @ParameterizedTest
    @ValueSource(strings = {"\"dlq\"", "\"arn:aws:sqs:us-east-1:123:dlq\"", "\"arn:aws:sns:us-east-1:000000000000:t\"",
        "\"arn:aws:sqs:us-east-1:000000000000:bad name\"", "42"})
    void rejectsMalformedTargetArns(String arn) {
        String raw = "{\"deadLetterTargetArn\":" + arn + ",\"maxReceiveCount\":3}";
        assertFailure(SqsError.INVALID_PARAMETER_VALUE,
                invalid(raw, "Dead-letter target ARN should be fully qualified ARN."), RedrivePolicy.parse(raw));
    }

    @Test
    void queueArns() {
        QueueArn fifo = QueueArn.parse("arn:aws-cn:sqs:cn-north-1:123456789012:jobs.fifo").orElseThrow();
        assertEquals(new QueueArn("aws-cn", "cn-north-1", "123456789012", "jobs.fifo"), fifo);
        assertTrue(fifo.isFifo());
        assertEquals("arn:aws-cn:sqs:cn-north-1:123456789012:jobs.fifo", fifo.toString());
        assertFalse(QueueArn.parse(ARN).orElseThrow().isFifo());
        assertTrue(QueueArn.parse("arn:aws:sqs:us-east-1:000000000000:q:extra").isEmpty());
        assertTrue(QueueArn.parse("arn:aws:sqs::000000000000:q").isEmpty());
        assertTrue(QueueArn.parse(null).isEmpty());
    }
}
