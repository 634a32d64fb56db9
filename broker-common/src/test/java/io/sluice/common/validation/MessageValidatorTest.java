package io.sluice.common.validation;

import static io.sluice.common.validation.ValidationAssertions.assertFailure;
import static io.sluice.common.validation.ValidationAssertions.assertOk;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.sluice.common.MessageAttributeValue;
import io.sluice.common.SqsError;
import io.sluice.common.validation.MessageValidator.Origin;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.NullSource;
import org.junit.jupiter.params.provider.ValueSource;

class MessageValidatorTest {
    private static final QueueAttributes STANDARD = QueueAttributes.defaults(false);
    private static final QueueAttributes FIFO = QueueAttributes.defaults(true);
    private static final QueueAttributes FIFO_CBD = FIFO.toBuilder().contentBasedDeduplication(true).build();
    private static final QueueAttributes SMALL = STANDARD.toBuilder()
            .integer(QueueAttributeName.MAXIMUM_MESSAGE_SIZE, 1024).build();
    private static final String DEDUP_TEXT = "The queue should either have ContentBasedDeduplication enabled or"
            + " MessageDeduplicationId provided explicitly";
    private static final String GROUP_TEXT = "The request must contain the parameter MessageGroupId.";

    private static SendRequest fifo(String group, String dedup) {
        return new SendRequest("body", null, null, null, group, dedup);
    }

    private static SendRequest withDelay(Integer delay, String group, String dedup) {
        return new SendRequest("body", delay, null, null, group, dedup);
    }

    private static String idText(String parameter, String value) {
        return "Value " + value + " for parameter " + parameter + " is invalid. Reason: " + parameter
                + " can only include alphanumeric and punctuation characters. 1 to 128 in length.";
    }

    @Test
    void acceptsPlainMessages() {
        assertOk(MessageValidator.validateSend(SendRequest.ofBody("hello"), STANDARD));
        assertOk(MessageValidator.validateSend(
                SendRequest.ofBody("tab\t cr\r lf\n \uD7FF \uE000 \uD83D\uDE00"), STANDARD));
        assertOk(MessageValidator.validateSend(fifo("g", "d"), FIFO));
        assertOk(MessageValidator.validateSend(fifo("g", null), FIFO_CBD));
    }

    @ParameterizedTest
    @EnumSource(Origin.class)
    void bodyIsRequiredAndCheckedFirst(Origin origin) {
        String text = "The request must contain the parameter MessageBody.";
        assertFailure(SqsError.MISSING_PARAMETER, text,
                MessageValidator.validate(SendRequest.ofBody(null), STANDARD, origin));
        assertFailure(SqsError.MISSING_PARAMETER, text,
                MessageValidator.validate(new SendRequest("", 5000, null, null, null, "d"), FIFO, origin));
    }

    @ParameterizedTest
    @ValueSource(strings = {"nul\u0000", "bs\u0008", "\u0013", "\uFFFF", "\uFFFE", "lone \uD800", "\uDC00 low"})
    void bodyCharactersOutsideXmlSetAreInvalidMessageContents(String body) {
        assertFailure(SqsError.INVALID_MESSAGE_CONTENTS, SqsError.INVALID_MESSAGE_CONTENTS.defaultMessage(),
                MessageValidator.validateSend(SendRequest.ofBody(body), STANDARD));
    }

    @Test
    void sizeEqualToMaximumIsAcceptedOneMoreIsNot() {
        assertOk(MessageValidator.validateSend(SendRequest.ofBody("a".repeat(1024)), SMALL));
        assertFailure(SqsError.INVALID_PARAMETER_VALUE,
                "One or more parameters are invalid. Reason: Message must be shorter than 1024 bytes.",
                MessageValidator.validateSend(SendRequest.ofBody("a".repeat(1025)), SMALL));
        assertFailure(SqsError.INVALID_PARAMETER_VALUE,
                "One or more parameters cannot be validated. Reason: Message must be shorter than 1024 bytes.",
                MessageValidator.validateBatchEntry(SendRequest.ofBody("a".repeat(1025)), SMALL));
        assertOk(MessageValidator.validateSend(SendRequest.ofBody("a".repeat(1_048_576)), STANDARD));
        assertFailure(SqsError.INVALID_PARAMETER_VALUE,
                "One or more parameters are invalid. Reason: Message must be shorter than 1048576 bytes.",
                MessageValidator.validateSend(SendRequest.ofBody("a".repeat(1_048_577)), STANDARD));
    }

    @Test
    void sizeCountsUtf8BytesAndAttributesButNotSystemAttributes() {
        assertOk(MessageValidator.validateSend(SendRequest.ofBody("\u00e9".repeat(512)), SMALL));
        assertEquals(1026, SendRequest.ofBody("\u00e9".repeat(513)).sizeBytes());
        // 1000 body + name "n" (1) + "String" (6) + value => 1024 with a 17-byte value.
        Map<String, MessageAttributeValue> system =
                Map.of("AWSTraceHeader", MessageAttributeValue.ofString("String", "x".repeat(500)));
        SendRequest fits = new SendRequest("b".repeat(1000), null,
                Map.of("n", MessageAttributeValue.ofString("String", "v".repeat(17))), system, null, null);
        assertEquals(1024, fits.sizeBytes());
        assertOk(MessageValidator.validateSend(fits, SMALL));
        SendRequest over = new SendRequest("b".repeat(1000), null,
                Map.of("n", MessageAttributeValue.ofBinary("Binary", new byte[18])), null, null, null);
        assertEquals(1025, over.sizeBytes());
        assertFailure(SqsError.INVALID_PARAMETER_VALUE,
                "One or more parameters are invalid. Reason: Message must be shorter than 1024 bytes.",
                MessageValidator.validateSend(over, SMALL));
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 900})
    void standardDelayInRange(int delay) {
        assertOk(MessageValidator.validateSend(withDelay(delay, null, null), STANDARD));
    }

    @ParameterizedTest
    @ValueSource(ints = {-1, 901, 5000})
    void standardDelayOutOfRange(int delay) {
        assertFailure(SqsError.INVALID_PARAMETER_VALUE, "Value " + delay + " for parameter DelaySeconds is invalid."
                + " Reason: DelaySeconds must be >= 0 and <= 900.",
                MessageValidator.validateSend(withDelay(delay, null, null), STANDARD));
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 900, -1})
    void fifoRejectsNonZeroPerMessageDelay(int delay) {
        assertOk(MessageValidator.validateSend(withDelay(0, "g", "d"), FIFO));
        assertFailure(SqsError.INVALID_PARAMETER_VALUE, "Value " + delay + " for parameter DelaySeconds is invalid."
                + " Reason: The request include parameter that is not valid for this queue type.",
                MessageValidator.validateSend(withDelay(delay, "g", "d"), FIFO));
    }

    @ParameterizedTest
    @ValueSource(strings = {""})
    @NullSource
    void fifoGroupIsRequired(String group) {
        assertFailure(SqsError.MISSING_PARAMETER, GROUP_TEXT, MessageValidator.validateSend(fifo(group, "d"), FIFO));
        assertFailure(SqsError.INVALID_PARAMETER_VALUE, GROUP_TEXT,
                MessageValidator.validateBatchEntry(fifo(group, "d"), FIFO));
    }

    @Test
    void fifoDeduplicationIdRequiredUnlessContentBased() {
        assertFailure(SqsError.INVALID_PARAMETER_VALUE, DEDUP_TEXT,
                MessageValidator.validateSend(fifo("g", null), FIFO));
        assertFailure(SqsError.INVALID_PARAMETER_VALUE, DEDUP_TEXT, MessageValidator.validateSend(fifo("g", ""), FIFO));
        assertOk(MessageValidator.validateSend(fifo("g", ""), FIFO_CBD));
        assertOk(MessageValidator.validateSend(fifo("g", "explicit"), FIFO_CBD));
    }

    @ParameterizedTest
    @ValueSource(strings = {"g", "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", "0123456789abcXYZ"})
    void fifoIdsAcceptLettersDigitsPunctuation(String id) {
        assertOk(MessageValidator.validateSend(fifo(id, id), FIFO));
        assertOk(MessageValidator.validateSend(fifo("x".repeat(128), "y".repeat(128)), FIFO));
    }

    @ParameterizedTest
    @ValueSource(strings = {"has space", "caf\u00e9", "tab\t", "\u007f"})
    void fifoIdsRejectOtherCharacters(String id) {
        assertFailure(SqsError.INVALID_PARAMETER_VALUE, idText("MessageGroupId", id),
                MessageValidator.validateSend(fifo(id, "d"), FIFO));
        assertFailure(SqsError.INVALID_PARAMETER_VALUE, idText("MessageDeduplicationId", id),
                MessageValidator.validateSend(fifo("g", id), FIFO));
    }

    @Test
    void fifoIdsOf129CharactersAreRejected() {
        String id = "x".repeat(129);
        assertFailure(SqsError.INVALID_PARAMETER_VALUE, idText("MessageGroupId", id),
                MessageValidator.validateSend(fifo(id, "d"), FIFO));
        assertFailure(SqsError.INVALID_PARAMETER_VALUE, idText("MessageDeduplicationId", id),
                MessageValidator.validateSend(fifo("g", id), FIFO_CBD));
    }

    @Test
    void standardQueueRejectsDeduplicationIdButAcceptsGroupId() {
        assertFailure(SqsError.INVALID_PARAMETER_VALUE, "Value d1 for parameter MessageDeduplicationId is invalid."
                + " Reason: The request include parameter that is not valid for this queue type.",
                MessageValidator.validateSend(fifo(null, "d1"), STANDARD));
        assertOk(MessageValidator.validateSend(fifo("tenant-1", null), STANDARD));
        assertFailure(SqsError.INVALID_PARAMETER_VALUE, idText("MessageGroupId", "bad id"),
                MessageValidator.validateSend(fifo("bad id", null), STANDARD));
    }

    @Test
    void attributeFailuresSurfaceThroughTheMessageValidator() {
        SendRequest user = new SendRequest("b", null,
                Map.of("ErrorDetails", MessageAttributeValue.ofString("String", "")), null, null, null);
        assertFailure(SqsError.INVALID_PARAMETER_VALUE,
                "Message (user) attribute 'ErrorDetails' must contain a non-empty value of type 'String'.",
                MessageValidator.validateSend(user, STANDARD));
        SendRequest system = new SendRequest("b", null, null,
                Map.of("Other", MessageAttributeValue.ofString("String", "x")), null, null);
        assertFailure(SqsError.INVALID_PARAMETER_VALUE, "Message system attribute name 'Other' is invalid.",
                MessageValidator.validateSend(system, STANDARD));
    }

    @Test
    void batchRequestLevelFifoChecks() {
        assertOk(MessageValidator.checkBatchRequestFifoEntry(fifo(null, null), STANDARD));
        assertOk(MessageValidator.checkBatchRequestFifoEntry(fifo("g", "d"), FIFO));
        assertOk(MessageValidator.checkBatchRequestFifoEntry(fifo("g", null), FIFO_CBD));
        assertFailure(SqsError.INVALID_PARAMETER_VALUE, GROUP_TEXT,
                MessageValidator.checkBatchRequestFifoEntry(fifo(null, "d"), FIFO));
        assertFailure(SqsError.INVALID_PARAMETER_VALUE, DEDUP_TEXT,
                MessageValidator.checkBatchRequestFifoEntry(fifo("g", null), FIFO));
    }
}
