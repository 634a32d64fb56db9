package io.sluice.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;
import software.amazon.awssdk.services.sqs.model.SqsException;

/**
 * The acceptance check of the queue metrics: after a scripted workload, /metrics shows exactly what the workload did
 * (depth by state, sends, receives, deletes, dead-letter hand-offs, empty receives, throttles), the oldest
 * message's age within a second of its true age, and the same depth as GetQueueAttributes.
 */
class QueueMetricsIT {
    static SluiceProcess server;
    static SqsClient sqs;

    @BeforeAll
    static void start() throws Exception {
        Path keys = Files.createTempFile(SluiceProcess.itDir(), "keys", ".json");
        Files.writeString(keys, "{\"keys\": [{\"accessKey\": \"noisy\", \"secretKey\": \"n-secret\", \"admin\": true}]}");
        server = SluiceProcess.start("metrics", Map.of("SLUICE_AUTH_KEYS_FILE", keys.toString(),
                "SLUICE_FRONTEND_KEY_RATE_LIMITS", "noisy=2", "SLUICE_FRONTEND_KEY_RATE_BURST_MS", "1000"));
        sqs = SqsClients.client(server.endpoint());
    }

    @AfterAll
    static void stop() throws Exception {
        sqs.close();
        server.stop();
    }

    @Test
    void producerOrderIsMeasuredLateMessagesCounted() throws Exception {
        String url = sqs.createQueue(b -> b.queueName("metrics-order.fifo").attributesWithStrings(Map.of(
                "FifoQueue", "true", "SluiceReorderWindowMillis", "200"))).queueUrl();
        long onTime = System.currentTimeMillis() - 2_000;
        send(url, "on-time", onTime); // ~2 s of skew
        List<Message> first = await().atMost(Duration.ofSeconds(120)).until(() -> sqs.receiveMessage(b -> b
                .queueUrl(url).waitTimeSeconds(1).messageAttributeNames("All")).messages(), got -> !got.isEmpty());
        assertFalse(first.get(0).messageAttributes().containsKey("Sluice.Late"));
        sqs.deleteMessage(b -> b.queueUrl(url).receiptHandle(first.get(0).receiptHandle()));
        // produced before "on-time", ~20 s of skew when it is sent (however long the receive above took)
        send(url, "straggler", Math.min(onTime - 1, System.currentTimeMillis() - 20_000));
        List<Message> late = await().atMost(Duration.ofSeconds(120)).until(() -> sqs.receiveMessage(b -> b
                .queueUrl(url).waitTimeSeconds(1).messageAttributeNames("All")).messages(), got -> !got.isEmpty());
        assertEquals("true", late.get(0).messageAttributes().get("Sluice.Late").stringValue());

        PromScrape m = PromScrape.of(server.adminEndpoint());
        String[] q = {"queue", "metrics-order.fifo"};
        assertEquals(1, m.sum("sluice_queue_messages_late_total", q[0], q[1]));
        assertEquals(2, m.sum("sluice_queue_arrival_skew_seconds_count", q[0], q[1]));
        assertEquals(0, m.sum("sluice_queue_arrival_skew_seconds_bucket", q[0], q[1], "le", "1.0"));
        assertEquals(1, m.sum("sluice_queue_arrival_skew_seconds_bucket", q[0], q[1], "le", "10.0"));
        assertEquals(2, m.sum("sluice_queue_arrival_skew_seconds_bucket", q[0], q[1], "le", "30.0"));
        double sum = m.sum("sluice_queue_arrival_skew_seconds_sum", q[0], q[1]);
        assertTrue(sum >= 22 && sum < 22 + 60, "sum of the two skews: " + sum);
        long p99 = Long.parseLong(sqs.getQueueAttributes(b -> b.queueUrl(url).attributeNamesWithStrings(
                "SluiceArrivalSkewP99Millis")).attributesAsStrings().get("SluiceArrivalSkewP99Millis"));
        assertTrue(p99 >= 20_000 && p99 < 30_000, "p99 of one 2 s and one 20 s skew: " + p99);
    }

    private static void send(String url, String body, long producerTime) {
        sqs.sendMessage(b -> b.queueUrl(url).messageBody(body).messageGroupId("g").messageDeduplicationId(body)
                .messageAttributes(Map.of("Sluice.ProducerTime", software.amazon.awssdk.services.sqs.model
                        .MessageAttributeValue.builder().dataType("Number").stringValue(Long.toString(producerTime))
                        .build())));
    }

    @Test
    void metricsMatchTheWorkload() throws Exception {
        String dlqUrl = sqs.createQueue(b -> b.queueName("metrics-dlq")).queueUrl();
        String dlqArn = sqs.getQueueAttributes(b -> b.queueUrl(dlqUrl).attributeNames(QueueAttributeName.QUEUE_ARN))
                .attributes().get(QueueAttributeName.QUEUE_ARN);
        String url = sqs.createQueue(b -> b.queueName("metrics-work").attributes(Map.of(QueueAttributeName.REDRIVE_POLICY,
                "{\"deadLetterTargetArn\":\"" + dlqArn + "\",\"maxReceiveCount\":\"1\"}"))).queueUrl();

        // 10 sends, one delayed; remember when the 5th was sent: it will be the oldest message left
        long fifthBefore = 0;
        long fifthAfter = 0;
        for (int i = 0; i < 10; i++) {
            int n = i;
            long before = System.currentTimeMillis();
            sqs.sendMessage(b -> b.queueUrl(url).messageBody("m" + n).delaySeconds(n == 9 ? 120 : 0));
            if (i == 4) {
                fifthBefore = before;
                fifthAfter = System.currentTimeMillis();
            }
            if (i == 3) {
                Thread.sleep(1100); // time must pass: the first four are clearly older, so reporting their age fails
            }
        }
        List<Message> first = sqs.receiveMessage(b -> b.queueUrl(url).maxNumberOfMessages(4).visibilityTimeout(1))
                .messages();
        assertEquals(4, first.size());
        assertEquals(List.of("m0", "m1", "m2", "m3"), first.stream().map(Message::body).sorted().toList());
        sqs.deleteMessage(b -> b.queueUrl(url).receiptHandle(first.get(0).receiptHandle()));
        sqs.deleteMessage(b -> b.queueUrl(url).receiptHandle(first.get(1).receiptHandle()));
        // the other two become visible again (1 s lease); their next receive exceeds maxReceiveCount 1
        await().atMost(Duration.ofSeconds(120)).until(() -> "7".equals(sqs.getQueueAttributes(b -> b.queueUrl(url)
                .attributeNamesWithStrings("ApproximateNumberOfMessages")).attributesAsStrings()
                .get("ApproximateNumberOfMessages")));
        List<Message> second = sqs.receiveMessage(b -> b.queueUrl(url).maxNumberOfMessages(10).visibilityTimeout(300))
                .messages();
        assertEquals(5, second.size(), "7 visible: 2 handed off, 5 delivered");
        assertTrue(second.stream().noneMatch(m -> first.stream().anyMatch(f -> f.messageId().equals(m.messageId()))),
                "the twice-received messages went to the dead-letter queue");
        sqs.sendMessage(b -> b.queueUrl(url).messageBody("m10"));
        sqs.sendMessage(b -> b.queueUrl(url).messageBody("m11"));

        String emptyUrl = sqs.createQueue(b -> b.queueName("metrics-empty")).queueUrl();
        sqs.receiveMessage(b -> b.queueUrl(emptyUrl).waitTimeSeconds(0));
        sqs.receiveMessage(b -> b.queueUrl(emptyUrl).waitTimeSeconds(1));

        String limitedUrl = sqs.createQueue(b -> b.queueName("metrics-limited")
                .attributesWithStrings(Map.of("SluiceMaxBacklog", "2"))).queueUrl();
        try (SqsClient once = SqsClients.client(server.endpoint(), SluiceProcess.ACCESS_KEY, SluiceProcess.SECRET_KEY,
                false)) {
            once.sendMessage(b -> b.queueUrl(limitedUrl).messageBody("1"));
            once.sendMessage(b -> b.queueUrl(limitedUrl).messageBody("2"));
            SqsException refused = assertThrows(SqsException.class,
                    () -> once.sendMessage(b -> b.queueUrl(limitedUrl).messageBody("3")));
            assertEquals("RequestThrottled", refused.awsErrorDetails().errorCode());
            assertEquals(403, refused.statusCode());
        }
        try (SqsClient noisy = SqsClients.client(server.endpoint(), "noisy", "n-secret", false)) {
            int throttled = 0;
            for (int i = 0; i < 5; i++) { // a burst of 2, then 2/s: at least 2 of 5 back-to-back sends are refused
                try {
                    noisy.sendMessage(b -> b.queueUrl(emptyUrl.replace("metrics-empty", "metrics-dlq"))
                            .messageBody("x"));
                } catch (SqsException e) {
                    assertEquals("RequestThrottled", e.awsErrorDetails().errorCode());
                    throttled++;
                }
            }
            assertTrue(throttled >= 2, "throttled " + throttled);
            int rateThrottles = throttled;
            int accepted = 5 - throttled;

            // the dead-letter hand-off is asynchronous: wait for the two to arrive
            await().atMost(Duration.ofSeconds(120)).untilAsserted(() -> assertEquals(2 + accepted,
                    PromScrape.of(server.adminEndpoint()).sum("sluice_queue_messages", "queue", "metrics-dlq",
                            "state", "visible"), "messages in the dead-letter queue"));

            long scrapeBefore = System.currentTimeMillis();
            PromScrape m = PromScrape.of(server.adminEndpoint());
            long scrapeAfter = System.currentTimeMillis();
            Map<String, String> attrs = sqs.getQueueAttributes(b -> b.queueUrl(url)
                    .attributeNames(QueueAttributeName.ALL)).attributesAsStrings();

            String[] q = {"queue", "metrics-work"};
            assertEquals(2, m.sum("sluice_queue_messages", q[0], q[1], "state", "visible"));
            assertEquals(5, m.sum("sluice_queue_messages", q[0], q[1], "state", "inflight"));
            assertEquals(1, m.sum("sluice_queue_messages", q[0], q[1], "state", "delayed"));
            assertEquals(attrs.get("ApproximateNumberOfMessages"), "2");
            assertEquals(attrs.get("ApproximateNumberOfMessagesNotVisible"), "5");
            assertEquals(attrs.get("ApproximateNumberOfMessagesDelayed"), "1");
            assertEquals(12, m.sum("sluice_queue_messages_sent_total", q));
            assertEquals(9, m.sum("sluice_queue_messages_received_total", q));
            assertEquals(2, m.sum("sluice_queue_messages_deleted_total", q));
            assertEquals(2, m.sum("sluice_queue_dead_lettered_total", q[0], q[1], "reason", "max_receives_exceeded"));
            assertEquals(0, m.sum("sluice_queue_dead_lettered_total", q[0], q[1], "reason", "retention_expired"));
            assertEquals(2, m.sum("sluice_queue_messages_sent_total", "queue", "metrics-dlq") - accepted,
                    "the dead-letter queue stored the two hand-offs");

            double age = m.find("sluice_queue_oldest_message_age_seconds", q).get(0).value();
            double lowest = (scrapeBefore - fifthAfter) / 1000.0;
            double highest = (scrapeAfter - fifthBefore) / 1000.0;
            assertTrue(age >= lowest - 1 && age <= highest + 1,
                    "oldest age " + age + " s, true age between " + lowest + " and " + highest);
            assertTrue(lowest > 1.5, "the workload took long enough for the age check to mean something");

            assertEquals(2, m.sum("sluice_queue_empty_receives_total", "queue", "metrics-empty"));
            assertEquals(1, m.sum("sluice_queue_throttled_total", "queue", "metrics-limited", "reason", "backlog"));
            assertEquals(rateThrottles, m.sum("sluice_queue_throttled_total", "queue", "metrics-dlq", "reason", "rate"));
            assertEquals(rateThrottles, m.sum("sqs_usage_throttled_total", "access_key", "noisy"));
            assertEquals(1, m.find("sluice_queue_messages_sent_total", q).size(),
                    "one series per partition: nothing double counted");
            assertTrue(m.sum("sqs_usage_bytes_total", "access_key", SluiceProcess.ACCESS_KEY, "direction", "in") > 0);
            assertTrue(m.sum("sqs_requests_seconds_count", "action", "SendMessage", "outcome", "403") >= 1);
            assertTrue(m.find("sqs_requests_seconds_bucket", "action", "ReceiveMessage").size() > 10,
                    "latency is a histogram");

            // every queue and request metric the alerts and the dashboard use is really exported (the shard and
            // metadata ones are checked on a cluster by ClusterScriptIT)
            java.util.Set<String> exported = new java.util.HashSet<>();
            m.names().forEach(n -> exported.add(AlertRulesTest.baseName(n)));
            for (String used : AlertRulesTest.referencedMetrics()) {
                if (!used.startsWith("sluice_shard_") && !used.startsWith("sluice_storage_")
                        && !used.startsWith("sluice_metadata_") && !used.startsWith("sluice_clock_")) {
                    assertTrue(exported.contains(used), "alerts or dashboard use " + used + ", not exported");
                }
            }
        }
    }
}
