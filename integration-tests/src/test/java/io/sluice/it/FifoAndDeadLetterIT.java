package io.sluice.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.sqs.model.ListMessageMoveTasksResultEntry;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;
import software.amazon.awssdk.services.sqs.model.ResourceNotFoundException;
import software.amazon.awssdk.services.sqs.model.SendMessageResponse;
import software.amazon.awssdk.services.sqs.model.SqsException;

/** FIFO ordering, group blocking, deduplication; dead-letter queues and redrive through the SDK. */
class FifoAndDeadLetterIT extends SharedServer {

    static String createFifo(String prefix, Map<String, String> extra) {
        java.util.HashMap<String, String> attrs = new java.util.HashMap<>(extra);
        attrs.put("FifoQueue", "true");
        return sqs.createQueue(b -> b.queueName(unique(prefix) + ".fifo").attributesWithStrings(attrs)).queueUrl();
    }

    @Test
    void fifoKeepsGroupOrderBlocksTheGroupAndDeduplicates() {
        String url = createFifo("order", Map.of());
        for (int i = 1; i <= 3; i++) {
            int n = i;
            sqs.sendMessage(b -> b.queueUrl(url).messageBody("g1-" + n).messageGroupId("g1").messageDeduplicationId("d" + n));
        }
        SendMessageResponse other = sqs.sendMessage(b -> b.queueUrl(url).messageBody("g2-1").messageGroupId("g2")
                .messageDeduplicationId("d4"));
        assertNotNull(other.sequenceNumber());

        List<Message> first = sqs.receiveMessage(b -> b.queueUrl(url).maxNumberOfMessages(2).visibilityTimeout(30)).messages();
        assertEquals(List.of("g1-1", "g1-2"), first.stream().map(Message::body).toList());
        List<Message> next = sqs.receiveMessage(b -> b.queueUrl(url).maxNumberOfMessages(10)).messages();
        assertEquals(List.of("g2-1"), next.stream().map(Message::body).toList(), "g1 is blocked while in flight");

        SendMessageResponse dup = sqs.sendMessage(b -> b.queueUrl(url).messageBody("g1-1 again").messageGroupId("g1")
                .messageDeduplicationId("d1"));
        first.forEach(m -> sqs.deleteMessage(b -> b.queueUrl(url).receiptHandle(m.receiptHandle())));
        List<Message> rest = sqs.receiveMessage(b -> b.queueUrl(url).maxNumberOfMessages(10)).messages();
        assertEquals(List.of("g1-3"), rest.stream().map(Message::body).toList(), "the duplicate was not enqueued");
        assertEquals(first.get(0).messageId(), dup.messageId(), "a duplicate send returns the original id");
    }

    /**
     * A receive retried with its ReceiveRequestAttemptId gets what the first attempt got, even after receives in between
     * found the queue empty (a frontend then probes before it leases; a retry must still reach the partition).
     */
    @Test
    void aRetriedReceiveAttemptGetsTheSameMessagesAfterEmptyReceives() {
        String url = createFifo("attempt", Map.of());
        sqs.sendMessage(b -> b.queueUrl(url).messageBody("only").messageGroupId("g").messageDeduplicationId("d"));
        Message got = sqs.receiveMessage(b -> b.queueUrl(url).visibilityTimeout(60).receiveRequestAttemptId("a1"))
                .messages().get(0);
        for (int i = 0; i < 3; i++) {
            assertEquals(List.of(), sqs.receiveMessage(b -> b.queueUrl(url)).messages(), "the group is in flight");
        }
        List<Message> retried = sqs.receiveMessage(b -> b.queueUrl(url).visibilityTimeout(60)
                .receiveRequestAttemptId("a1")).messages();
        assertEquals(List.of(got.messageId()), retried.stream().map(Message::messageId).toList(),
                "the retry is answered with the first attempt's message");
    }

    @Test
    void fifoSendRulesAreEnforced() {
        String url = createFifo("rules", Map.of());
        SqsException noGroup = assertThrows(SqsException.class, () -> sqs.sendMessage(b -> b.queueUrl(url)
                .messageBody("x").messageDeduplicationId("d")));
        assertEquals("MissingParameter", noGroup.awsErrorDetails().errorCode());
        SqsException noDedup = assertThrows(SqsException.class, () -> sqs.sendMessage(b -> b.queueUrl(url)
                .messageBody("x").messageGroupId("g")));
        assertEquals("InvalidParameterValue", noDedup.awsErrorDetails().errorCode());
        String cbd = createFifo("cbd", Map.of("ContentBasedDeduplication", "true"));
        String a = sqs.sendMessage(b -> b.queueUrl(cbd).messageBody("same").messageGroupId("g")).messageId();
        String b2 = sqs.sendMessage(b -> b.queueUrl(cbd).messageBody("same").messageGroupId("g")).messageId();
        assertEquals(a, b2);
        assertEquals("1", MessagingIT.approximate(cbd, QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES));
    }

    @Test
    void exhaustedMessagesMoveToTheDeadLetterQueueAndCanBeRedriven() {
        String dlq = createQueue("dlq");
        String dlqArn = sqs.getQueueAttributes(b -> b.queueUrl(dlq).attributeNames(QueueAttributeName.QUEUE_ARN))
                .attributes().get(QueueAttributeName.QUEUE_ARN);
        String source = sqs.createQueue(b -> b.queueName(unique("src")).attributes(Map.of(QueueAttributeName.REDRIVE_POLICY,
                "{\"deadLetterTargetArn\":\"" + dlqArn + "\",\"maxReceiveCount\":\"2\"}"))).queueUrl();
        String sourceArn = sqs.getQueueAttributes(b -> b.queueUrl(source).attributeNames(QueueAttributeName.QUEUE_ARN))
                .attributes().get(QueueAttributeName.QUEUE_ARN);
        String id = sqs.sendMessage(b -> b.queueUrl(source).messageBody("poison")).messageId();

        for (int i = 0; i < 2; i++) {
            assertEquals(id, sqs.receiveMessage(b -> b.queueUrl(source).visibilityTimeout(0)).messages().get(0).messageId());
        }
        assertFalse(sqs.receiveMessage(b -> b.queueUrl(source)).hasMessages(), "the third receive hands it off");
        Message dead = sqs.receiveMessage(b -> b.queueUrl(dlq).waitTimeSeconds(10).visibilityTimeout(0)
                .attributeNamesWithStrings("All")).messages().get(0);
        assertEquals(id, dead.messageId());
        assertEquals("poison", dead.body());
        assertEquals(sourceArn, dead.attributesAsStrings().get("DeadLetterQueueSourceArn"));
        assertEquals("3", dead.attributesAsStrings().get("ApproximateReceiveCount"), "the count carries on");
        assertEquals(List.of(source), sqs.listDeadLetterSourceQueues(b -> b.queueUrl(dlq)).queueUrls());

        String handle = sqs.startMessageMoveTask(b -> b.sourceArn(dlqArn)).taskHandle();
        assertNotNull(handle);
        ListMessageMoveTasksResultEntry done = await().atMost(Duration.ofSeconds(120)).until(() ->
                sqs.listMessageMoveTasks(b -> b.sourceArn(dlqArn)).results().get(0), t -> "COMPLETED".equals(t.status()));
        assertEquals(1L, done.approximateNumberOfMessagesMoved());
        Message back = sqs.receiveMessage(b -> b.queueUrl(source).waitTimeSeconds(5)).messages().get(0);
        assertEquals(id, back.messageId(), "redriven to its source with its id");
        assertFalse(sqs.receiveMessage(b -> b.queueUrl(dlq)).hasMessages());
    }

    @Test
    void moveTaskErrors() {
        String plain = createQueue("notdlq");
        String arn = sqs.getQueueAttributes(b -> b.queueUrl(plain).attributeNames(QueueAttributeName.QUEUE_ARN))
                .attributes().get(QueueAttributeName.QUEUE_ARN);
        SqsException notDlq = assertThrows(SqsException.class, () -> sqs.startMessageMoveTask(b -> b.sourceArn(arn)));
        assertEquals("InvalidParameterValue", notDlq.awsErrorDetails().errorCode());
        assertThrows(ResourceNotFoundException.class,
                () -> sqs.startMessageMoveTask(b -> b.sourceArn("arn:aws:sqs:us-east-1:000000000000:" + unique("none"))));
        SqsException badHandle = assertThrows(SqsException.class, () -> sqs.cancelMessageMoveTask(b -> b.taskHandle("???")));
        assertEquals("InvalidParameterValue", badHandle.awsErrorDetails().errorCode());
    }

    /**
     * MaxNumberOfMessagesPerSecond holds for the whole queue, not per partition: 20 messages over 2 partitions at 5/s
     * take at least 3 s (each partition moves at 2.5/s, 2 per batch; a per-partition rate would take about 1 s).
     */
    @Test
    void aMoveTaskKeepsItsRateOverAllPartitions() {
        String dlqArn = deadLetterQueueWith(20, 2);
        String destination = createQueue("paced");
        long start = System.nanoTime();
        sqs.startMessageMoveTask(b -> b.sourceArn(dlqArn).destinationArn(arnOf(destination))
                .maxNumberOfMessagesPerSecond(5));
        ListMessageMoveTasksResultEntry done = await().atMost(Duration.ofSeconds(60)).until(() ->
                sqs.listMessageMoveTasks(b -> b.sourceArn(dlqArn)).results().get(0), t -> "COMPLETED".equals(t.status()));
        long tookMillis = (System.nanoTime() - start) / 1_000_000;
        assertEquals(20L, done.approximateNumberOfMessagesMoved());
        assertEquals(5, done.maxNumberOfMessagesPerSecond());
        assertTrue(tookMillis >= 3_000, "20 messages at 5/s over the whole queue took only " + tookMillis + " ms");
        assertEquals(20, stored(destination));
    }

    @Test
    void aCancelledMoveTaskStopsAndLeavesTheRestInTheDeadLetterQueue() throws InterruptedException {
        String dlqArn = deadLetterQueueWith(30);
        String destination = createQueue("cancelled");
        String handle = sqs.startMessageMoveTask(b -> b.sourceArn(dlqArn).destinationArn(arnOf(destination))
                .maxNumberOfMessagesPerSecond(1)).taskHandle();
        await().atMost(Duration.ofSeconds(30)).until(() -> sqs.listMessageMoveTasks(b -> b.sourceArn(dlqArn)).results()
                .get(0).approximateNumberOfMessagesMoved() >= 1);
        long movedAtCancel = sqs.cancelMessageMoveTask(b -> b.taskHandle(handle)).approximateNumberOfMessagesMoved();
        assertTrue(movedAtCancel >= 1 && movedAtCancel < 30, "moved before the cancel: " + movedAtCancel);
        assertEquals("InvalidParameterValue", assertThrows(SqsException.class, () -> sqs.cancelMessageMoveTask(
                b -> b.taskHandle(handle))).awsErrorDetails().errorCode(), "only active tasks can be cancelled");
        Thread.sleep(3_000); // three more batches' worth at 1/s, had the cancel not stopped it
        ListMessageMoveTasksResultEntry cancelled = sqs.listMessageMoveTasks(b -> b.sourceArn(dlqArn)).results().get(0);
        assertEquals("CANCELLED", cancelled.status());
        long moved = cancelled.approximateNumberOfMessagesMoved();
        assertTrue(moved <= movedAtCancel + 1, "at most the batch in flight finished after the cancel: " + moved);
        assertEquals(moved, stored(destination));
        assertEquals(30 - moved, stored(urlOf(dlqArn)), "the rest stays in the dead-letter queue");
    }

    /** A queue some redrive policy targets, holding {@code n} messages sent to it directly; returns its ARN. */
    private static String deadLetterQueueWith(int n) {
        return deadLetterQueueWith(n, 1);
    }

    private static String deadLetterQueueWith(int n, int partitions) {
        String dlq = sqs.createQueue(b -> b.queueName(unique("dlq")).attributesWithStrings(
                Map.of("SluicePartitions", Integer.toString(partitions)))).queueUrl();
        String dlqArn = arnOf(dlq);
        sqs.createQueue(b -> b.queueName(unique("src")).attributes(Map.of(QueueAttributeName.REDRIVE_POLICY,
                "{\"deadLetterTargetArn\":\"" + dlqArn + "\",\"maxReceiveCount\":\"2\"}")));
        for (int i = 0; i < n; i++) {
            int k = i;
            sqs.sendMessage(b -> b.queueUrl(dlq).messageBody("dead " + k));
        }
        return dlqArn;
    }

    private static String arnOf(String url) {
        return sqs.getQueueAttributes(b -> b.queueUrl(url).attributeNames(QueueAttributeName.QUEUE_ARN))
                .attributes().get(QueueAttributeName.QUEUE_ARN);
    }

    /** Stored messages, visible or not. */
    private static int stored(String url) {
        Map<QueueAttributeName, String> a = sqs.getQueueAttributes(b -> b.queueUrl(url).attributeNames(
                QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES,
                QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES_NOT_VISIBLE)).attributes();
        return Integer.parseInt(a.get(QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES))
                + Integer.parseInt(a.get(QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES_NOT_VISIBLE));
    }

    private static String urlOf(String arn) {
        return sqs.getQueueUrl(b -> b.queueName(arn.substring(arn.lastIndexOf(':') + 1))).queueUrl();
    }

    @Test
    void aMoveToAQueueOfTheOtherTypeIsRefusedAndKeepsEveryMessage() {
        String dlqArn = deadLetterQueueWith(5);
        String fifoArn = arnOf(createFifo("dest", Map.of()));
        SqsException e = assertThrows(SqsException.class, () -> sqs.startMessageMoveTask(b -> b.sourceArn(dlqArn)
                .destinationArn(fifoArn)));
        assertEquals("InvalidParameterValue", e.awsErrorDetails().errorCode());
        assertEquals(5, stored(urlOf(dlqArn)));
    }

    @Test
    void aMoveTheDestinationRefusesFailsAndKeepsEveryMessage() {
        String dlqArn = deadLetterQueueWith(5);
        String full = sqs.createQueue(b -> b.queueName(unique("full")).attributesWithStrings(
                Map.of("SluiceMaxBacklog", "2"))).queueUrl();
        String fullArn = arnOf(full);
        sqs.startMessageMoveTask(b -> b.sourceArn(dlqArn).destinationArn(fullArn));
        await().atMost(Duration.ofSeconds(60)).until(() -> "FAILED".equals(
                sqs.listMessageMoveTasks(b -> b.sourceArn(dlqArn)).results().get(0).status()));
        ListMessageMoveTasksResultEntry failed = sqs.listMessageMoveTasks(b -> b.sourceArn(dlqArn)).results().get(0);
        assertEquals("RequestThrottled", failed.failureReason());
        // the copies go in one send per destination partition, which the destination's limit refuses whole
        assertEquals(0, stored(full), "the destination took none of the refused batch");
        assertEquals(0L, failed.approximateNumberOfMessagesMoved());
        String dlqUrl = urlOf(dlqArn);
        assertEquals(5, stored(dlqUrl), "every refused message is still in the dead-letter queue");
        await().atMost(Duration.ofSeconds(30)).until(() -> MessagingIT.approximate(dlqUrl,
                QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES).equals("5")); // released, not left leased
    }

    @Test
    void redrivePolicyTargetMustExist() {
        SqsException e = assertThrows(SqsException.class, () -> sqs.createQueue(b -> b.queueName(unique("src"))
                .attributes(Map.of(QueueAttributeName.REDRIVE_POLICY, "{\"deadLetterTargetArn\":"
                        + "\"arn:aws:sqs:us-east-1:000000000000:nope\",\"maxReceiveCount\":3}"))));
        assertEquals("InvalidParameterValue", e.awsErrorDetails().errorCode());
        assertTrue(e.statusCode() == 400);
    }
}
