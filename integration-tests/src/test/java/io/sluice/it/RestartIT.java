package io.sluice.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.IntStream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchRequestEntry;

/** Everything acknowledged before a stop (graceful or kill -9) is there after a restart on the same data. */
class RestartIT {

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void acknowledgedMessagesSurviveARestart(boolean kill) throws Exception {
        try (SluiceProcess server = SluiceProcess.start(kill ? "restart-kill" : "restart-stop")) {
            Set<String> sent = new HashSet<>();
            String url;
            try (SqsClient sqs = SqsClients.client(server.endpoint())) {
                url = sqs.createQueue(b -> b.queueName("durable")).queueUrl();
                for (int batch = 0; batch < 20; batch++) {
                    int base = batch * 10;
                    List<SendMessageBatchRequestEntry> entries = IntStream.range(0, 10).mapToObj(i ->
                            SendMessageBatchRequestEntry.builder().id("e" + i).messageBody("m" + (base + i)).build()).toList();
                    sqs.sendMessageBatch(b -> b.queueUrl(url).entries(entries)).successful()
                            .forEach(e -> sent.add(e.messageId()));
                }
                sent.add(sqs.sendMessage(b -> b.queueUrl(url).messageBody("single")).messageId());
                sqs.receiveMessage(b -> b.queueUrl(url).visibilityTimeout(0)); // a lease, released at once
            }
            assertEquals(201, sent.size());
            if (kill) {
                server.kill();
            } else {
                server.stop();
            }
            server.restart();
            try (SqsClient sqs = SqsClients.client(server.endpoint())) {
                String queue = sqs.getQueueUrl(b -> b.queueName("durable")).queueUrl();
                Set<String> received = new HashSet<>();
                for (int i = 0; i < 100 && received.size() < sent.size(); i++) {
                    List<Message> got = sqs.receiveMessage(b -> b.queueUrl(queue).maxNumberOfMessages(10)
                            .visibilityTimeout(600)).messages();
                    got.forEach(m -> received.add(m.messageId()));
                }
                assertEquals(sent, received, "every acknowledged message is back");
            }
        }
    }

    /**
     * A backlog past the partition's in-memory index (4,096 messages) waits on disk only (the cold tail): after a
     * kill -9 it is counted and delivered whole, each message once, without having been read back at the restart.
     */
    @org.junit.jupiter.api.Test
    void aBacklogPastTheIndexSurvivesAKillAndComesBackWhole() throws Exception {
        int count = 6_000;
        try (SluiceProcess server = SluiceProcess.start("restart-backlog")) {
            Set<String> sent = new HashSet<>();
            try (SqsClient sqs = SqsClients.client(server.endpoint())) {
                String url = sqs.createQueue(b -> b.queueName("backlog").attributesWithStrings(
                        java.util.Map.of("SluicePartitions", "1"))).queueUrl();
                for (int batch = 0; batch < count / 10; batch++) {
                    int base = batch * 10;
                    List<SendMessageBatchRequestEntry> entries = IntStream.range(0, 10).mapToObj(i ->
                            SendMessageBatchRequestEntry.builder().id("e" + i).messageBody("m" + (base + i)).build()).toList();
                    sqs.sendMessageBatch(b -> b.queueUrl(url).entries(entries)).successful()
                            .forEach(e -> sent.add(e.messageId()));
                }
            }
            assertEquals(count, sent.size());
            server.kill();
            server.restart();
            try (SqsClient sqs = SqsClients.client(server.endpoint())) {
                String queue = sqs.getQueueUrl(b -> b.queueName("backlog")).queueUrl();
                assertEquals(String.valueOf(count), sqs.getQueueAttributes(b -> b.queueUrl(queue).attributeNamesWithStrings(
                        "ApproximateNumberOfMessages")).attributesAsStrings().get("ApproximateNumberOfMessages"),
                        "the whole backlog is counted after the restart");
                java.util.Map<String, Integer> copies = new java.util.HashMap<>();
                for (int i = 0; i < count && copies.size() < count; i++) {
                    List<Message> got = sqs.receiveMessage(b -> b.queueUrl(queue).maxNumberOfMessages(10)
                            .visibilityTimeout(600)).messages();
                    got.forEach(m -> copies.merge(m.messageId(), 1, Integer::sum));
                }
                assertEquals(sent, copies.keySet(), "every acknowledged message is back");
                assertEquals(List.of(), copies.entrySet().stream().filter(e -> e.getValue() > 1).toList(),
                        "none twice (each leased for 10 minutes)");
            }
        }
    }
}
