package io.sluice.common.validation;

import static io.sluice.common.validation.ValidationAssertions.assertFailure;
import static io.sluice.common.validation.ValidationAssertions.assertOk;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.common.SqsError;
import io.sluice.common.validation.QueueAttributes.DeduplicationScope;
import io.sluice.common.validation.QueueAttributes.FifoThroughputLimit;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class QueueAttributesValidatorTest {
    private static final String DLQ_ARN = "arn:aws:sqs:us-east-1:000000000000:dlq";

    private static QueueAttributes create(String name, Map<String, String> attributes) {
        return QueueAttributesValidator.forCreate(name, attributes).value();
    }

    private static QueueAttributes fifoQueue() {
        return create("q.fifo", Map.of("FifoQueue", "true"));
    }

    @Test
    void standardDefaultsRenderExactlyTheSettableAttributesAwsReturns() {
        assertEquals(Map.of("DelaySeconds", "0", "MaximumMessageSize", "1048576", "MessageRetentionPeriod", "345600",
                "ReceiveMessageWaitTimeSeconds", "0", "SqsManagedSseEnabled", "true", "VisibilityTimeout", "30"),
                create("q", null).toStringMap());
        assertEquals(QueueAttributes.defaults(false), create("q", Map.of()));
    }

    @Test
    void fifoDefaultsAddTheFourFifoAttributes() {
        Map<String, String> map = fifoQueue().toStringMap();
        assertEquals(10, map.size());
        assertEquals("true", map.get("FifoQueue"));
        assertEquals("false", map.get("ContentBasedDeduplication"));
        assertEquals("queue", map.get("DeduplicationScope"));
        assertEquals("perQueue", map.get("FifoThroughputLimit"));
        assertEquals(List.copyOf(map.keySet()), map.keySet().stream().sorted().toList());
    }

    @ParameterizedTest
    @CsvSource({
        "DelaySeconds, 0, 900",
        "MaximumMessageSize, 1024, 1048576",
        "MessageRetentionPeriod, 60, 1209600",
        "ReceiveMessageWaitTimeSeconds, 0, 20",
        "VisibilityTimeout, 0, 43200",
        "KmsDataKeyReusePeriodSeconds, 60, 86400"})
    void integerRangesAreInclusive(String name, int min, int max) {
        String text = "Invalid value for the parameter " + name + ".";
        for (int ok : new int[] {min, max}) {
            Validated<QueueAttributes> result = QueueAttributesValidator.forCreate("q", Map.of(name, "" + ok));
            assertOk(result);
            QueueAttributeName attribute = QueueAttributeName.fromWireName(name).orElseThrow();
            QueueAttributes withKey = result.value().toBuilder().kmsMasterKeyId("k").build();
            assertEquals(Integer.toString(ok), withKey.toStringMap().get(attribute.wireName()));
        }
        for (int bad : new int[] {min - 1, max + 1}) {
            assertFailure(SqsError.INVALID_ATTRIBUTE_VALUE, text,
                    QueueAttributesValidator.forCreate("q", Map.of(name, "" + bad)));
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "abc", "1.5", " 5", "+5", "5s", "99999999999999"})
    void nonIntegerValuesAreInvalid(String value) {
        assertFailure(SqsError.INVALID_ATTRIBUTE_VALUE, "Invalid value for the parameter VisibilityTimeout.",
                QueueAttributesValidator.forCreate("q", Map.of("VisibilityTimeout", value)));
    }

    @ParameterizedTest
    @CsvSource({"true, true", "FALSE, false", "True, true", "false, false"})
    void booleansAcceptTrueAndFalseInAnyCase(String value, boolean expected) {
        assertEquals(expected, create("q", Map.of("SqsManagedSseEnabled", value)).sqsManagedSseEnabled());
        assertEquals(expected, create("q.fifo", Map.of("FifoQueue", "true", "ContentBasedDeduplication", value))
                .contentBasedDeduplication());
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "yes", "1", "t"})
    void otherBooleanValuesAreInvalid(String value) {
        assertFailure(SqsError.INVALID_ATTRIBUTE_VALUE, "Invalid value for the parameter SqsManagedSseEnabled.",
                QueueAttributesValidator.forCreate("q", Map.of("SqsManagedSseEnabled", value)));
        assertFailure(SqsError.INVALID_ATTRIBUTE_VALUE, "Invalid value for the parameter ContentBasedDeduplication.",
                QueueAttributesValidator.forSet(fifoQueue(), Map.of("ContentBasedDeduplication", value)));
    }

    @ParameterizedTest
    @ValueSource(strings = {"Foo", "delayseconds", "All", "", "QueueArn", "CreatedTimestamp", "LastModifiedTimestamp",
        "ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible", "ApproximateNumberOfMessagesDelayed",
        "SluiceArrivalSkewP99Millis", "SluiceApproximateAgeOfOldestMessage"})
    void unknownAndReadOnlyNamesAreInvalidAttributeName(String name) {
        String text = "Unknown Attribute " + name + ".";
        assertFailure(SqsError.INVALID_ATTRIBUTE_NAME, text,
                QueueAttributesValidator.forCreate("q", Map.of(name, "1")));
        assertFailure(SqsError.INVALID_ATTRIBUTE_NAME, text,
                QueueAttributesValidator.forSet(fifoQueue(), Map.of(name, "1")));
    }

    @ParameterizedTest
    @CsvSource({
        "FifoQueue, false, Unknown Attribute FifoQueue.",
        "ContentBasedDeduplication, true, Unknown Attribute ContentBasedDeduplication.",
        "DeduplicationScope, queue, You can specify the DeduplicationScope only when FifoQueue is set to true.",
        "FifoThroughputLimit, perQueue, You can specify the FifoThroughputLimit only when FifoQueue is set to true.",
        "SluiceReorderWindowMillis, 100, You can specify the SluiceReorderWindowMillis only when FifoQueue is set to true."})
    void fifoOnlyAttributesOnStandardQueues(String name, String value, String text) {
        assertFailure(SqsError.INVALID_ATTRIBUTE_NAME, text,
                QueueAttributesValidator.forCreate("q", Map.of(name, value)));
        assertFailure(SqsError.INVALID_ATTRIBUTE_NAME, text,
                QueueAttributesValidator.forSet(QueueAttributes.defaults(false), Map.of(name, value)));
    }

    @Test
    void reorderWindowIsMillisecondsUpToAMinuteRenderedWhenSet() {
        assertEquals(null, fifoQueue().toStringMap().get("SluiceReorderWindowMillis"), "0 (off) is not rendered");
        QueueAttributes on = QueueAttributesValidator.forSet(fifoQueue(), Map.of("SluiceReorderWindowMillis", "60000"))
                .value();
        assertEquals(60_000, on.reorderWindowMillis());
        assertEquals("60000", on.toStringMap().get("SluiceReorderWindowMillis"));
        assertEquals(0, QueueAttributesValidator.forSet(on, Map.of("SluiceReorderWindowMillis", "0")).value()
                .reorderWindowMillis());
        for (String bad : List.of("60001", "-1", "1.5", "", "ten")) {
            assertFailure(SqsError.INVALID_ATTRIBUTE_VALUE, "Invalid value for the parameter SluiceReorderWindowMillis.",
                    QueueAttributesValidator.forSet(fifoQueue(), Map.of("SluiceReorderWindowMillis", bad)));
        }
        assertTrue(on.firstDifference(fifoQueue()).isPresent(), "CreateQueue with another window is a different queue");
    }

    @Test
    void queueTypeFollowsFifoQueueAttributeAndNameMustMatch() {
        assertFailure(SqsError.INVALID_PARAMETER_VALUE, QueueNamesTest.FIFO_TEXT,
                QueueAttributesValidator.forCreate("orders", Map.of("FifoQueue", "true")));
        assertFailure(SqsError.INVALID_PARAMETER_VALUE, QueueNamesTest.STANDARD_TEXT,
                QueueAttributesValidator.forCreate("orders.fifo", Map.of()));
        assertFailure(SqsError.INVALID_PARAMETER_VALUE, QueueNamesTest.STANDARD_TEXT,
                QueueAttributesValidator.forCreate("orders.fifo", Map.of("FifoQueue", "false")));
        assertTrue(create("orders.fifo", Map.of("FifoQueue", "TRUE")).fifo());
        assertFalse(create("orders", Map.of()).fifo());
    }

    @Test
    void namesAreCheckedBeforeValues() {
        Map<String, String> attrs = new LinkedHashMap<>();
        attrs.put("DelaySeconds", "bad");
        attrs.put("Foo", "x");
        assertFailure(SqsError.INVALID_ATTRIBUTE_NAME, "Unknown Attribute Foo.",
                QueueAttributesValidator.forCreate("q", attrs));
    }

    @Test
    void setQueueAttributesOnFifoQueueAcceptsTrueRejectsFalse() {
        assertOk(QueueAttributesValidator.forSet(fifoQueue(), Map.of("FifoQueue", "true")));
        assertFailure(SqsError.INVALID_ATTRIBUTE_VALUE,
                "Invalid value for the parameter FifoQueue. Reason: Modifying queue type is not supported.",
                QueueAttributesValidator.forSet(fifoQueue(), Map.of("FifoQueue", "false")));
        assertFailure(SqsError.INVALID_ATTRIBUTE_VALUE, "Invalid value for the parameter FifoQueue.",
                QueueAttributesValidator.forSet(fifoQueue(), Map.of("FifoQueue", "maybe")));
    }

    @Test
    void setRequiresAtLeastOneAttributeAndKeepsTheOthers() {
        assertFailure(SqsError.MISSING_PARAMETER, "The request must contain the parameter Attributes.",
                QueueAttributesValidator.forSet(QueueAttributes.defaults(false), Map.of()));
        QueueAttributes current = create("q", Map.of("DelaySeconds", "5"));
        QueueAttributes updated = QueueAttributesValidator.forSet(current, Map.of("VisibilityTimeout", "10")).value();
        assertEquals(5, updated.delaySeconds());
        assertEquals(10, updated.visibilityTimeout());
    }

    @ParameterizedTest
    @CsvSource({"queue, QUEUE", "messageGroup, MESSAGE_GROUP"})
    void deduplicationScopeValues(String value, DeduplicationScope expected) {
        assertEquals(expected, QueueAttributesValidator.forSet(fifoQueue(), Map.of("DeduplicationScope", value))
                .value().deduplicationScope());
    }

    @ParameterizedTest
    @CsvSource({"DeduplicationScope, Queue", "DeduplicationScope, group", "FifoThroughputLimit, perGroup",
        "FifoThroughputLimit, PERQUEUE"})
    void badFifoEnumValues(String name, String value) {
        assertFailure(SqsError.INVALID_ATTRIBUTE_VALUE, "Invalid value for the parameter " + name + ".",
                QueueAttributesValidator.forSet(fifoQueue(), Map.of(name, value)));
    }

    @Test
    void perMessageGroupIdThroughputRequiresMessageGroupScope() {
        String reason = ". Reason: FifoThroughputLimit perMessageGroupId requires DeduplicationScope messageGroup.";
        assertFailure(SqsError.INVALID_ATTRIBUTE_VALUE, "Invalid value for the parameter FifoThroughputLimit" + reason,
                QueueAttributesValidator.forSet(fifoQueue(), Map.of("FifoThroughputLimit", "perMessageGroupId")));
        QueueAttributes high = QueueAttributesValidator.forSet(fifoQueue(),
                Map.of("FifoThroughputLimit", "perMessageGroupId", "DeduplicationScope", "messageGroup")).value();
        assertEquals(FifoThroughputLimit.PER_MESSAGE_GROUP_ID, high.fifoThroughputLimit());
        assertFailure(SqsError.INVALID_ATTRIBUTE_VALUE, "Invalid value for the parameter DeduplicationScope" + reason,
                QueueAttributesValidator.forSet(high, Map.of("DeduplicationScope", "queue")));
        assertOk(QueueAttributesValidator.forSet(high,
                Map.of("DeduplicationScope", "queue", "FifoThroughputLimit", "perQueue")));
    }

    @Test
    void policyIsAJsonObjectOfAtMost8192BytesAndEmptyRemovesIt() {
        String policy = "{\"Version\":\"2012-10-17\",\"Statement\":[]}";
        QueueAttributes withPolicy = create("q", Map.of("Policy", policy));
        assertEquals(policy, withPolicy.toStringMap().get("Policy"));
        assertNull(QueueAttributesValidator.forSet(withPolicy, Map.of("Policy", "")).value().policy());
        String exact = "{\"p\":\"" + "x".repeat(8192 - 8) + "\"}";
        assertEquals(8192, exact.length());
        assertOk(QueueAttributesValidator.forCreate("q", Map.of("Policy", exact)));
        String tooBig = "{\"p\":\"" + "x".repeat(8192 - 7) + "\"}";
        for (String bad : List.of("not json", "[1]", "\"s\"", tooBig)) {
            assertFailure(SqsError.INVALID_ATTRIBUTE_VALUE, "Invalid value for the parameter Policy.",
                    QueueAttributesValidator.forCreate("q", Map.of("Policy", bad)));
        }
    }

    @Test
    void redrivePolicyIsTypedRenderedCompactlyAndRemovable() {
        QueueAttributes q = create("q", Map.of("RedrivePolicy",
                "{ \"maxReceiveCount\" : \"5\", \"deadLetterTargetArn\" : \"" + DLQ_ARN + "\" }"));
        assertEquals(new RedrivePolicy(DLQ_ARN, 5), q.redrivePolicy());
        assertEquals("{\"deadLetterTargetArn\":\"" + DLQ_ARN + "\",\"maxReceiveCount\":5}",
                q.toStringMap().get("RedrivePolicy"));
        assertNull(QueueAttributesValidator.forSet(q, Map.of("RedrivePolicy", "")).value().redrivePolicy());
        assertEquals(SqsError.INVALID_PARAMETER_VALUE,
                QueueAttributesValidator.forSet(q, Map.of("RedrivePolicy", "{}")).failure().orElseThrow().error());
    }

    @Test
    void deadLetterQueueMustHaveTheSourceQueuesType() {
        String toStandard = "{\"deadLetterTargetArn\":\"" + DLQ_ARN + "\",\"maxReceiveCount\":1}";
        String toFifo = "{\"deadLetterTargetArn\":\"" + DLQ_ARN + ".fifo\",\"maxReceiveCount\":1}";
        String reason = " for parameter RedrivePolicy is invalid. Reason: Dead-letter queue must be same type of queue"
                + " as the source.";
        assertOk(QueueAttributesValidator.forSet(QueueAttributes.defaults(false), Map.of("RedrivePolicy", toStandard)));
        assertOk(QueueAttributesValidator.forSet(fifoQueue(), Map.of("RedrivePolicy", toFifo)));
        assertFailure(SqsError.INVALID_PARAMETER_VALUE, "Value " + toFifo + reason,
                QueueAttributesValidator.forSet(QueueAttributes.defaults(false), Map.of("RedrivePolicy", toFifo)));
        assertFailure(SqsError.INVALID_PARAMETER_VALUE, "Value " + toStandard + reason,
                QueueAttributesValidator.forSet(fifoQueue(), Map.of("RedrivePolicy", toStandard)));
    }

    @Test
    void redriveAllowPolicyAndKmsKeyAreRemovableWithEmptyValues() {
        QueueAttributes q = create("q", Map.of("RedriveAllowPolicy", "{\"redrivePermission\":\"denyAll\"}",
                "KmsMasterKeyId", "alias/aws/sqs"));
        assertEquals("{\"redrivePermission\":\"denyAll\"}", q.toStringMap().get("RedriveAllowPolicy"));
        assertEquals("alias/aws/sqs", q.toStringMap().get("KmsMasterKeyId"));
        assertEquals("300", q.toStringMap().get("KmsDataKeyReusePeriodSeconds"));
        assertFalse(q.effectiveRedriveAllowPolicy().permits(DLQ_ARN));
        QueueAttributes cleared = QueueAttributesValidator.forSet(q,
                Map.of("RedriveAllowPolicy", "", "KmsMasterKeyId", "")).value();
        assertNull(cleared.redriveAllowPolicy());
        assertTrue(cleared.effectiveRedriveAllowPolicy().permits(DLQ_ARN));
        assertFalse(cleared.toStringMap().containsKey("KmsDataKeyReusePeriodSeconds"));
    }

    @Test
    void createOfExistingNameComparesEveryRenderedAttribute() {
        QueueAttributes existing = create("q", Map.of("DelaySeconds", "5"));
        assertOk(QueueAttributesValidator.checkSameAttributes(existing, create("q", Map.of("DelaySeconds", "5"))));
        assertFailure(SqsError.QUEUE_NAME_EXISTS,
                "A queue already exists with the same name and a different value for attribute DelaySeconds",
                QueueAttributesValidator.checkSameAttributes(existing, create("q", Map.of())));
        assertFailure(SqsError.QUEUE_NAME_EXISTS,
                "A queue already exists with the same name and a different value for attribute Policy",
                QueueAttributesValidator.checkSameAttributes(existing,
                        create("q", Map.of("DelaySeconds", "5", "Policy", "{}"))));
    }

    @Test
    void getQueueAttributesNames() {
        assertOk(QueueAttributesValidator.checkGetAttributeNames(List.of("All", "QueueArn", "FifoQueue", "Policy")));
        assertFailure(SqsError.INVALID_ATTRIBUTE_NAME, "Unknown Attribute Bogus.",
                QueueAttributesValidator.checkGetAttributeNames(List.of("QueueArn", "Bogus")));
    }
}
