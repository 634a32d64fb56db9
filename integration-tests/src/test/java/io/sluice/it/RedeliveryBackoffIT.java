package io.sluice.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.SqsException;

/**
 * {@code SluiceRedeliveryBackoff} through the AWS SDK against {@code sluice dev} (the cluster runs the same checks in
 * {@link ClusterEndToEndIT}): the attribute round-trips, a bad value is InvalidAttributeValue naming its field, a lapsed
 * lease's message is delayed for the backoff (and counted as delayed) before it is delivered again, and the redrive
 * policy still hands it to the dead-letter queue.
 */
class RedeliveryBackoffIT extends SharedServer {
    static final String BACKOFF = "{\"initialSeconds\":6,\"multiplier\":2,\"maxSeconds\":6,\"jitter\":\"none\"}";

    @Test
    void aLapsedLeaseWaitsOutTheBackoffAndRedriveStillTakesTheMessage() throws Exception {
        backoffHolds(sqs, unique("backoff"));
    }

    /** The whole check, on any server: creates its queues under {@code name}. */
    static void backoffHolds(SqsClient sqs, String name) throws InterruptedException {
        String dlq = sqs.createQueue(b -> b.queueName(name + "-dlq")).queueUrl();
        String dlqArn = attributes(sqs, dlq).get("QueueArn");
        String url = sqs.createQueue(b -> b.queueName(name).attributesWithStrings(Map.of(
                "SluiceRedeliveryBackoff", "{\"initialSeconds\": \"6\", \"maxSeconds\": 6, \"jitter\": \"none\"}",
                "VisibilityTimeout", "1",
                "RedrivePolicy", "{\"deadLetterTargetArn\":\"" + dlqArn + "\",\"maxReceiveCount\":2}"))).queueUrl();
        assertEquals(BACKOFF, attributes(sqs, url).get("SluiceRedeliveryBackoff"), "rendered with every field");

        SqsException bad = assertThrows(SqsException.class, () -> sqs.setQueueAttributes(b -> b.queueUrl(url)
                .attributesWithStrings(Map.of("SluiceRedeliveryBackoff", "{\"initialSeconds\":1,\"multiplier\":0}"))));
        assertEquals("InvalidAttributeValue", bad.awsErrorDetails().errorCode());
        assertEquals(400, bad.statusCode());
        assertTrue(bad.awsErrorDetails().errorMessage().contains("multiplier"), bad.awsErrorDetails().errorMessage());
        assertEquals(BACKOFF, attributes(sqs, url).get("SluiceRedeliveryBackoff"), "a refused value changes nothing");

        sqs.sendMessage(b -> b.queueUrl(url).messageBody("job"));
        long before = System.nanoTime();
        assertEquals(1, receive(sqs, url).size());
        // the 1 s lease lapses into 6 s of backoff: wait for that, then check it inside the backoff
        Map<String, String> during = await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(100))
                .until(() -> attributes(sqs, url), a -> !"1".equals(a.get("ApproximateNumberOfMessagesNotVisible")));
        assertEquals("1", during.get("ApproximateNumberOfMessagesDelayed"), "waiting out a backoff counts as delayed");
        assertEquals("0", during.get("ApproximateNumberOfMessagesNotVisible"));
        assertTrue(receive(sqs, url).isEmpty(), "not delivered during the backoff");
        List<Message> again = await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(100))
                .until(() -> receive(sqs, url), got -> !got.isEmpty());
        long afterMillis = (System.nanoTime() - before) / 1_000_000;
        assertEquals("2", again.get(0).attributesAsStrings().get("ApproximateReceiveCount"));
        assertTrue(afterMillis >= 6_900, "delivered again after lease (1 s) + backoff (6 s): " + afterMillis + " ms");

        // the receive after maxReceiveCount (2) hands the message to the dead-letter queue, not waited for
        // the 2nd lease lapses and the message is visible at once: no backoff before the hand-off
        await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(100))
                .until(() -> "1".equals(attributes(sqs, url).get("ApproximateNumberOfMessages")));
        assertTrue(receive(sqs, url).isEmpty(), "the 3rd receive hands it off instead");
        List<Message> dead = List.of();
        for (int i = 0; i < 120 && dead.isEmpty(); i++) {
            dead = sqs.receiveMessage(b -> b.queueUrl(dlq).waitTimeSeconds(1)).messages();
        }
        assertEquals(List.of("job"), dead.stream().map(Message::body).toList());

        sqs.setQueueAttributes(b -> b.queueUrl(url).attributesWithStrings(Map.of("SluiceRedeliveryBackoff", "")));
        assertFalse(attributes(sqs, url).containsKey("SluiceRedeliveryBackoff"), "an empty value removes it");
    }

    private static Map<String, String> attributes(SqsClient sqs, String url) {
        return sqs.getQueueAttributes(b -> b.queueUrl(url).attributeNamesWithStrings("All")).attributesAsStrings();
    }

    private static List<Message> receive(SqsClient sqs, String url) {
        return sqs.receiveMessage(b -> b.queueUrl(url).maxNumberOfMessages(10)
                .messageSystemAttributeNamesWithStrings("ApproximateReceiveCount")).messages();
    }
}
