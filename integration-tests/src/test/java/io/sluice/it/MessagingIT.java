package io.sluice.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.SdkBytes;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.BatchEntryIdsNotDistinctException;
import software.amazon.awssdk.services.sqs.model.EmptyBatchRequestException;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.MessageAttributeValue;
import software.amazon.awssdk.services.sqs.model.MessageSystemAttributeName;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;
import software.amazon.awssdk.services.sqs.model.ReceiptHandleIsInvalidException;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchRequestEntry;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchResponse;
import software.amazon.awssdk.services.sqs.model.SqsException;
import software.amazon.awssdk.services.sqs.model.TooManyEntriesInBatchRequestException;

/** Sending, receiving, visibility and long polls through the AWS SDK (its MD5 checks are on). */
class MessagingIT extends SharedServer {

    @Test
    void messageWithAttributesRoundTripsAndIsDeleted() {
        String url = createQueue("roundtrip");
        String body = "line one\r\nline two <&>\"' \u00e9\u20ac\uD83D\uDE00";
        Map<String, MessageAttributeValue> attrs = Map.of(
                "s", MessageAttributeValue.builder().dataType("String").stringValue("v\r").build(),
                "n", MessageAttributeValue.builder().dataType("Number.int").stringValue("42").build(),
                "b", MessageAttributeValue.builder().dataType("Binary").binaryValue(SdkBytes.fromByteArray(new byte[] {0, 1, 2})).build());
        String id = sqs.sendMessage(b -> b.queueUrl(url).messageBody(body).messageAttributes(attrs)).messageId();
        Message m = sqs.receiveMessage(b -> b.queueUrl(url).messageAttributeNames("All")
                .messageSystemAttributeNames(MessageSystemAttributeName.ALL)).messages().get(0);
        assertEquals(id, m.messageId());
        assertEquals(body, m.body());
        assertEquals(attrs, m.messageAttributes());
        assertEquals("1", m.attributesAsStrings().get("ApproximateReceiveCount"));
        assertEquals(SluiceProcess.ACCESS_KEY, m.attributesAsStrings().get("SenderId"));
        sqs.deleteMessage(b -> b.queueUrl(url).receiptHandle(m.receiptHandle()));
        sqs.deleteMessage(b -> b.queueUrl(url).receiptHandle(m.receiptHandle()));
        assertEquals("0", approximate(url, QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES_NOT_VISIBLE));
    }

    @Test
    void attributeSelectionAndItsDigestCoverOnlyWhatIsReturned() {
        String url = createQueue("select");
        sqs.sendMessage(b -> b.queueUrl(url).messageBody("x").messageAttributes(Map.of(
                "foo.a", MessageAttributeValue.builder().dataType("String").stringValue("1").build(),
                "bar", MessageAttributeValue.builder().dataType("String").stringValue("2").build())));
        Message m = sqs.receiveMessage(b -> b.queueUrl(url).messageAttributeNames("foo.*")).messages().get(0);
        assertEquals(List.of("foo.a"), List.copyOf(m.messageAttributes().keySet()));
        assertTrue(m.attributes().isEmpty(), "no system attributes unless asked");
    }

    @Test
    void visibilityTimeoutHidesThenReturnsAndHeartbeatExtends() {
        String url = createQueue("visibility");
        sqs.sendMessage(b -> b.queueUrl(url).messageBody("work"));
        Message first = sqs.receiveMessage(b -> b.queueUrl(url).visibilityTimeout(2)).messages().get(0);
        assertFalse(sqs.receiveMessage(b -> b.queueUrl(url)).hasMessages());
        sqs.changeMessageVisibility(b -> b.queueUrl(url).receiptHandle(first.receiptHandle()).visibilityTimeout(4));
        await().during(Duration.ofMillis(2500)).atMost(Duration.ofSeconds(3)).pollInterval(Duration.ofMillis(250))
                .until(() -> !sqs.receiveMessage(b -> b.queueUrl(url)).hasMessages()); // the heartbeat extended the lease
        Message again = sqs.receiveMessage(b -> b.queueUrl(url).waitTimeSeconds(5).attributeNamesWithStrings("All"))
                .messages().get(0);
        assertEquals(first.messageId(), again.messageId());
        assertEquals("2", again.attributesAsStrings().get("ApproximateReceiveCount"));
        assertNotEquals(first.receiptHandle(), again.receiptHandle());
        sqs.changeMessageVisibility(b -> b.queueUrl(url).receiptHandle(again.receiptHandle()).visibilityTimeout(0));
        assertTrue(sqs.receiveMessage(b -> b.queueUrl(url)).hasMessages(), "visibility 0 releases at once");
    }

    @Test
    void longPollReturnsAsSoonAsAMessageArrives() {
        String url = createQueue("longpoll");
        long start = System.nanoTime();
        CompletableFuture<List<Message>> poll = CompletableFuture.supplyAsync(
                () -> sqs.receiveMessage(b -> b.queueUrl(url).waitTimeSeconds(15)).messages());
        server.awaitParkedPolls(1);
        sqs.sendMessage(b -> b.queueUrl(url).messageBody("wake up"));
        List<Message> got = poll.join();
        long millis = (System.nanoTime() - start) / 1_000_000;
        assertEquals("wake up", got.get(0).body());
        assertTrue(millis < 10_000, "returned early, after " + millis + " ms");
    }

    @Test
    void aParkedLongPollWakesWhenADelayedMessageSentAfterItBecomesVisible() {
        delayedMessageWakesAParkedPoll(sqs, createQueue("delayed-wake"), server::awaitParkedPolls);
    }

    /**
     * Two polls parked on an empty queue; then messages delayed 2 s and 3 s are sent: nothing arrives when their delays
     * end, yet each poll must return one of them then, not at the end of its 20 s wait (the second deadline is not the
     * first one the queue knew of). Also run on the cluster ({@link ClusterEndToEndIT}).
     */
    static void delayedMessageWakesAParkedPoll(SqsClient sqs, String url, java.util.function.IntConsumer awaitParked) {
        java.util.concurrent.ExecutorService pollers = java.util.concurrent.Executors.newFixedThreadPool(2);
        List<CompletableFuture<List<Message>>> polls = IntStream.range(0, 2).mapToObj(i -> CompletableFuture.supplyAsync(
                () -> sqs.receiveMessage(b -> b.queueUrl(url).waitTimeSeconds(20)).messages(), pollers)).toList();
        pollers.shutdown(); // the two polls run to their end
        awaitParked.accept(2);
        long sent = System.nanoTime();
        sqs.sendMessage(b -> b.queueUrl(url).messageBody("in 2 s").delaySeconds(2));
        sqs.sendMessage(b -> b.queueUrl(url).messageBody("in 3 s").delaySeconds(3));
        java.util.Set<String> got = new java.util.HashSet<>();
        for (CompletableFuture<List<Message>> poll : polls) {
            poll.join().forEach(m -> got.add(m.body()));
        }
        long millis = (System.nanoTime() - sent) / 1_000_000;
        assertEquals(java.util.Set.of("in 2 s", "in 3 s"), got);
        assertTrue(millis >= 2_900 && millis < 15_000, "woken when the delays ended, not at the polls' end: " + millis
                + " ms after the sends");
    }

    @Test
    void longPollTimesOutEmptyAfterItsWait() {
        String url = createQueue("timeout");
        long start = System.nanoTime();
        assertFalse(sqs.receiveMessage(b -> b.queueUrl(url).waitTimeSeconds(2)).hasMessages());
        long millis = (System.nanoTime() - start) / 1_000_000;
        assertTrue(millis >= 1900 && millis < 6000, "waited " + millis + " ms");
    }

    @Test
    void longPollWakesForADelayedMessage() {
        String url = createQueue("delayed");
        sqs.sendMessage(b -> b.queueUrl(url).messageBody("later").delaySeconds(2));
        assertFalse(sqs.receiveMessage(b -> b.queueUrl(url)).hasMessages(), "delayed");
        assertEquals("1", approximate(url, QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES_DELAYED));
        long start = System.nanoTime();
        List<Message> got = sqs.receiveMessage(b -> b.queueUrl(url).waitTimeSeconds(10)).messages();
        long millis = (System.nanoTime() - start) / 1_000_000;
        assertEquals("later", got.get(0).body());
        assertTrue(millis < 6000, "woke when the delay ended, after " + millis + " ms");
    }

    @Test
    void queueWaitTimeAppliesWhenTheRequestGivesNone() {
        String url = sqs.createQueue(b -> b.queueName(unique("qwait"))
                .attributes(Map.of(QueueAttributeName.RECEIVE_MESSAGE_WAIT_TIME_SECONDS, "1"))).queueUrl();
        long start = System.nanoTime();
        assertFalse(sqs.receiveMessage(b -> b.queueUrl(url)).hasMessages());
        assertTrue((System.nanoTime() - start) / 1_000_000 >= 900);
    }

    @Test
    void batchSendReportsPerEntryFailures() {
        String url = createQueue("batch");
        SendMessageBatchResponse r = sqs.sendMessageBatch(b -> b.queueUrl(url).entries(
                SendMessageBatchRequestEntry.builder().id("ok1").messageBody("fine").build(),
                SendMessageBatchRequestEntry.builder().id("bad").messageBody("nul \u0000 char").build(),
                SendMessageBatchRequestEntry.builder().id("ok2").messageBody("also fine").delaySeconds(0).build()));
        assertEquals(List.of("ok1", "ok2"), r.successful().stream().map(e -> e.id()).sorted().toList());
        assertEquals(1, r.failed().size());
        assertEquals("bad", r.failed().get(0).id());
        assertEquals("InvalidMessageContents", r.failed().get(0).code());
        assertTrue(r.failed().get(0).senderFault());
        assertEquals(2, sqs.receiveMessage(b -> b.queueUrl(url).maxNumberOfMessages(10)).messages().size());
    }

    @Test
    void batchRequestLevelErrors() {
        String url = createQueue("batcherr");
        assertThrows(EmptyBatchRequestException.class, () -> sqs.sendMessageBatch(b -> b.queueUrl(url).entries(List.of())));
        List<SendMessageBatchRequestEntry> eleven = IntStream.range(0, 11)
                .mapToObj(i -> SendMessageBatchRequestEntry.builder().id("e" + i).messageBody("x").build()).toList();
        assertThrows(TooManyEntriesInBatchRequestException.class, () -> sqs.sendMessageBatch(b -> b.queueUrl(url).entries(eleven)));
        assertThrows(BatchEntryIdsNotDistinctException.class, () -> sqs.sendMessageBatch(b -> b.queueUrl(url).entries(
                SendMessageBatchRequestEntry.builder().id("same").messageBody("x").build(),
                SendMessageBatchRequestEntry.builder().id("same").messageBody("y").build())));
        SqsException badId = assertThrows(SqsException.class, () -> sqs.sendMessageBatch(b -> b.queueUrl(url).entries(
                SendMessageBatchRequestEntry.builder().id("bad id!").messageBody("x").build())));
        assertEquals("AWS.SimpleQueueService.InvalidBatchEntryId", badId.awsErrorDetails().errorCode());
        String big = "x".repeat(600_000);
        SqsException tooLong = assertThrows(SqsException.class, () -> sqs.sendMessageBatch(b -> b.queueUrl(url).entries(
                SendMessageBatchRequestEntry.builder().id("a").messageBody(big).build(),
                SendMessageBatchRequestEntry.builder().id("b").messageBody(big).build())));
        assertEquals("AWS.SimpleQueueService.BatchRequestTooLong", tooLong.awsErrorDetails().errorCode());
    }

    @Test
    void batchDeleteAndVisibilityReportBadHandles() {
        String url = createQueue("batchdel");
        sqs.sendMessage(b -> b.queueUrl(url).messageBody("a"));
        Message m = sqs.receiveMessage(b -> b.queueUrl(url)).messages().get(0);
        var vis = sqs.changeMessageVisibilityBatch(b -> b.queueUrl(url).entries(
                e -> e.id("good").receiptHandle(m.receiptHandle()).visibilityTimeout(60),
                e -> e.id("junk").receiptHandle("not-a-handle").visibilityTimeout(60)));
        assertEquals("good", vis.successful().get(0).id());
        assertEquals("ReceiptHandleIsInvalid", vis.failed().get(0).code());
        var del = sqs.deleteMessageBatch(b -> b.queueUrl(url).entries(
                e -> e.id("good").receiptHandle(m.receiptHandle()),
                e -> e.id("junk").receiptHandle("not-a-handle")));
        assertEquals("good", del.successful().get(0).id());
        assertEquals("ReceiptHandleIsInvalid", del.failed().get(0).code());
        assertEquals("0", approximate(url, QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES_NOT_VISIBLE));
    }

    @Test
    void parameterErrorsCarryTheSpecCodes() {
        String url = createQueue("params");
        SqsException max = assertThrows(SqsException.class, () -> sqs.receiveMessage(b -> b.queueUrl(url).maxNumberOfMessages(11)));
        assertEquals("InvalidParameterValue", max.awsErrorDetails().errorCode());
        assertEquals("Value 11 for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided.",
                max.awsErrorDetails().errorMessage());
        SqsException wait = assertThrows(SqsException.class, () -> sqs.receiveMessage(b -> b.queueUrl(url).waitTimeSeconds(21)));
        assertEquals("InvalidParameterValue", wait.awsErrorDetails().errorCode());
        ReceiptHandleIsInvalidException handle = assertThrows(ReceiptHandleIsInvalidException.class,
                () -> sqs.deleteMessage(b -> b.queueUrl(url).receiptHandle("garbage")));
        assertEquals(404, handle.statusCode());
        SqsException tooBig = assertThrows(SqsException.class,
                () -> sqs.sendMessage(b -> b.queueUrl(url).messageBody("x".repeat(1_048_577))));
        assertEquals("InvalidParameterValue", tooBig.awsErrorDetails().errorCode());
        SqsException missingBody = assertThrows(SqsException.class, () -> sqs.sendMessage(b -> b.queueUrl(url).messageBody("")));
        assertEquals("MissingParameter", missingBody.awsErrorDetails().errorCode());
        SqsException badChar = assertThrows(SqsException.class, () -> sqs.sendMessage(b -> b.queueUrl(url).messageBody("\u0008")));
        assertEquals("InvalidMessageContents", badChar.awsErrorDetails().errorCode());
    }

    @Test
    void largestMessageIsAccepted() {
        String url = createQueue("large");
        String body = "y".repeat(1_048_576);
        sqs.sendMessage(b -> b.queueUrl(url).messageBody(body));
        assertEquals(body, sqs.receiveMessage(b -> b.queueUrl(url)).messages().get(0).body());
    }

    static String approximate(String url, QueueAttributeName name) {
        return sqs.getQueueAttributes(b -> b.queueUrl(url).attributeNames(name)).attributes().get(name);
    }
}
