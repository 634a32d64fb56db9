package io.sluice.frontend.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sluice.common.SqsError;
import io.sluice.common.SqsException;
import io.sluice.frontend.action.Params;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What a request touches is resolved once and without ambiguity: each attack shape of issue 12 fails here. */
class RequestResourcesTest {
    private static final String OTHER = "http://localhost:9324/000000000000/other";
    private static final String ARN = "arn:aws:sqs:us-east-1:000000000000:";

    private static RequestResources of(String action, String json, String path) throws Exception {
        return RequestResources.of(action, new Params((ObjectNode) new ObjectMapper().readTree(json)), path,
                () -> new SqsException(SqsError.QUEUE_DOES_NOT_EXIST, "no such queue"));
    }

    private static SqsError refused(String action, String json, String path) {
        return assertThrows(SqsException.class, () -> of(action, json, path)).failure().error();
    }

    @Test
    void theQueueUrlNamesTheQueue() throws Exception {
        assertEquals("mine-1", of("ReceiveMessage", "{\"QueueUrl\": \"http://h:1/000000000000/mine-1/\"}", "/").queue());
        assertEquals("mine-1", of("ReceiveMessage", "{\"QueueUrl\": \"/000000000000/mine-1\"}", "/").queue());
        assertEquals("mine-1", of("ReceiveMessage", "{}", "/000000000000/mine-1").queue(), "posted to the queue URL");
        assertEquals("mine-1", of("ReceiveMessage", "{\"QueueUrl\": \"/000000000000/mine-1\"}",
                "/000000000000/mine-1").queue(), "both, agreeing");
    }

    @Test
    void namesThatDisagreeAreAnErrorNotAChoice() {
        // JSON: QueueName is not a member of ReceiveMessage, but a client may send it to fool the check
        assertEquals(SqsError.INVALID_PARAMETER_VALUE, refused("ReceiveMessage",
                "{\"QueueUrl\": \"" + OTHER + "\", \"QueueName\": \"mine-1\"}", "/"));
        assertEquals(SqsError.INVALID_PARAMETER_VALUE, refused("PurgeQueue",
                "{\"QueueUrl\": \"" + OTHER + "\"}", "/000000000000/mine-1"));
        assertEquals(SqsError.INVALID_PARAMETER_VALUE, refused("GetQueueUrl",
                "{\"QueueName\": \"mine-1\", \"QueueUrl\": \"" + OTHER + "\"}", "/"));
        assertEquals(SqsError.INVALID_PARAMETER_VALUE, refused("CreateQueue",
                "{\"QueueName\": \"mine-1\"}", "/000000000000/other"));
    }

    @Test
    void aQueueUrlWithAQueryOrFragmentNamesNoQueue() {
        assertEquals(SqsError.QUEUE_DOES_NOT_EXIST, refused("PurgeQueue", "{\"QueueUrl\": \"" + OTHER + "?/mine-1\"}", "/"));
        assertEquals(SqsError.QUEUE_DOES_NOT_EXIST, refused("PurgeQueue", "{\"QueueUrl\": \"" + OTHER + "#/mine-1\"}", "/"));
        assertEquals(SqsError.QUEUE_DOES_NOT_EXIST, refused("PurgeQueue", "{\"QueueUrl\": \"/0/other/mine-1\"}", "/"));
        assertEquals(SqsError.MISSING_PARAMETER, refused("PurgeQueue", "{}", "/"));
    }

    @Test
    void everyArnTheRequestNamesIsTouched() throws Exception {
        RequestResources move = of("StartMessageMoveTask", "{\"SourceArn\": \"" + ARN + "their-dlq\","
                + " \"DestinationArn\": \"" + ARN + "mine-1\"}", "/");
        assertNull(move.queue(), "not the path's queue");
        assertEquals(List.of("their-dlq", "mine-1"), move.referenced());
        RequestResources set = of("SetQueueAttributes", "{\"QueueUrl\": \"/000000000000/mine-1\", \"Attributes\": {"
                + "\"RedrivePolicy\": \"{\\\"deadLetterTargetArn\\\":\\\"" + ARN + "theirs\\\",\\\"maxReceiveCount\\\":3}\","
                + "\"RedriveAllowPolicy\": \"{\\\"redrivePermission\\\":\\\"byQueue\\\",\\\"sourceQueueArns\\\":[\\\""
                + ARN + "a\\\",\\\"" + ARN + "b\\\"]}\"}}", "/");
        assertEquals("mine-1", set.queue());
        assertEquals(List.of("theirs", "a", "b"), set.referenced());
    }

    @Test
    void onlyParametersTheActionReadsCount() throws Exception {
        String handle = java.util.Base64.getUrlEncoder().withoutPadding().encodeToString(("t1|" + ARN + "their-dlq")
                .getBytes(java.nio.charset.StandardCharsets.UTF_8));
        assertEquals(List.of("their-dlq"), of("CancelMessageMoveTask", "{\"TaskHandle\": \"" + handle + "\","
                + " \"SourceArn\": \"" + ARN + "mine-1\"}", "/").referenced(), "the handle's source, not a decoy");
        assertEquals(List.of(), of("CancelMessageMoveTask", "{\"TaskHandle\": \"eA\"}", "/").referenced());
        assertEquals(List.of(), of("SendMessage", "{\"QueueUrl\": \"/000000000000/mine-1\", \"SourceArn\": \""
                + ARN + "theirs\"}", "/").referenced(), "SendMessage reads no SourceArn");
    }

    @Test
    void aPathIsAQueueOnlyWithAnAccountId() throws Exception {
        assertEquals("mine-1", of("PurgeQueue", "{\"QueueUrl\": \"/000000000000/mine-1\"}", "/sqs/v1").queue(),
                "a proxy's prefix is not a queue");
        assertEquals(SqsError.QUEUE_DOES_NOT_EXIST, refused("PurgeQueue", "{\"QueueUrl\": \"/sqs/v1\"}", "/"));
    }

    @Test
    void accountWideActionsTouchNoQueueOfTheirPath() throws Exception {
        assertNull(of("ListQueues", "{}", "/000000000000/mine-1").queue());
        assertEquals(List.of(), of("ListQueues", "{}", "/000000000000/mine-1").referenced());
    }
}
