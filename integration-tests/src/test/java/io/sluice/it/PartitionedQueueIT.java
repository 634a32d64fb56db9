package io.sluice.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.common.ReceiptHandle;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.SqsException;

/** Queues with 4 partitions (the {@code SluicePartitions} extension attribute) under concurrent clients. */
class PartitionedQueueIT extends SharedServer {

    @Test
    void fifoWithFourPartitionsKeepsOrderPerGroupUnderConcurrentProducersAndConsumers() throws Exception {
        String url = sqs.createQueue(b -> b.queueName(unique("pfifo") + ".fifo").attributesWithStrings(Map.of(
                "FifoQueue", "true", "ContentBasedDeduplication", "true", "SluicePartitions", "4",
                "DeduplicationScope", "messageGroup"))).queueUrl();
        assertEquals("4", sqs.getQueueAttributes(b -> b.queueUrl(url).attributeNamesWithStrings("SluicePartitions"))
                .attributesAsStrings().get("SluicePartitions"));
        int groups = 8;
        int perGroup = 25;
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<?>> producers = new ArrayList<>();
            for (int g = 0; g < groups; g++) {
                int group = g;
                producers.add(pool.submit(() -> {
                    for (int i = 0; i < perGroup; i++) {
                        int n = i;
                        sqs.sendMessage(b -> b.queueUrl(url).messageGroupId("g" + group).messageBody("g" + group + ":" + n));
                    }
                }));
            }
            Map<String, List<Integer>> seen = new ConcurrentHashMap<>();
            List<Future<?>> consumers = new ArrayList<>();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            java.util.concurrent.atomic.AtomicInteger total = new java.util.concurrent.atomic.AtomicInteger();
            for (int c = 0; c < 4; c++) {
                consumers.add(pool.submit(() -> {
                    while (total.get() < groups * perGroup && System.nanoTime() < deadline) {
                        List<Message> got = sqs.receiveMessage(b -> b.queueUrl(url).maxNumberOfMessages(10)
                                .waitTimeSeconds(1)).messages();
                        for (Message m : got) {
                            String[] parts = m.body().split(":");
                            // Record before deleting: the next message of this group cannot be delivered until then.
                            seen.computeIfAbsent(parts[0], k -> new CopyOnWriteArrayList<>()).add(Integer.parseInt(parts[1]));
                            total.incrementAndGet();
                            sqs.deleteMessage(b -> b.queueUrl(url).receiptHandle(m.receiptHandle()));
                        }
                    }
                }));
            }
            for (Future<?> f : producers) {
                f.get(60, TimeUnit.SECONDS);
            }
            for (Future<?> f : consumers) {
                f.get(90, TimeUnit.SECONDS);
            }
            assertEquals(groups, seen.size());
            for (Map.Entry<String, List<Integer>> e : seen.entrySet()) {
                List<Integer> expected = new ArrayList<>();
                for (int i = 0; i < perGroup; i++) {
                    expected.add(i);
                }
                assertEquals(expected, e.getValue(), "order within " + e.getKey());
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * Each partition deduplicates its own messages and a group lives on one partition: a FIFO queue with several
     * partitions deduplicates per message group, or one deduplication id would pass once per partition.
     */
    @Test
    void aFifoQueueWithSeveralPartitionsDeduplicatesPerMessageGroupOnly() {
        String name = unique("pdedup") + ".fifo";
        software.amazon.awssdk.services.sqs.model.SqsException refused = org.junit.jupiter.api.Assertions.assertThrows(
                software.amazon.awssdk.services.sqs.model.SqsException.class, () -> sqs.createQueue(b -> b.queueName(name)
                        .attributesWithStrings(Map.of("FifoQueue", "true", "SluicePartitions", "4"))));
        assertEquals("InvalidAttributeValue", refused.awsErrorDetails().errorCode());
        org.junit.jupiter.api.Assertions.assertFalse(sqs.listQueues(b -> b.queueNamePrefix(name)).hasQueueUrls()
                && !sqs.listQueues(b -> b.queueNamePrefix(name)).queueUrls().isEmpty(), "nothing created");
        String url = sqs.createQueue(b -> b.queueName(name).attributesWithStrings(Map.of("FifoQueue", "true",
                "SluicePartitions", "4", "DeduplicationScope", "messageGroup"))).queueUrl();
        refused = org.junit.jupiter.api.Assertions.assertThrows(software.amazon.awssdk.services.sqs.model.SqsException.class,
                () -> sqs.setQueueAttributes(b -> b.queueUrl(url).attributesWithStrings(Map.of("DeduplicationScope",
                        "queue"))));
        assertEquals("InvalidAttributeValue", refused.awsErrorDetails().errorCode());
        assertEquals("messageGroup", sqs.getQueueAttributes(b -> b.queueUrl(url).attributeNamesWithStrings(
                "DeduplicationScope")).attributesAsStrings().get("DeduplicationScope"));
    }

    @Test
    void standardWithFourPartitionsSpreadsAndLosesNothing() {
        String url = sqs.createQueue(b -> b.queueName(unique("pstd")).attributesWithStrings(Map.of(
                "SluicePartitions", "4"))).queueUrl();
        Set<String> sent = new HashSet<>();
        for (int i = 0; i < 200; i++) {
            int n = i;
            sent.add(sqs.sendMessage(b -> b.queueUrl(url).messageBody("m" + n)).messageId());
        }
        assertEquals("200", sqs.getQueueAttributes(b -> b.queueUrl(url).attributeNamesWithStrings(
                "ApproximateNumberOfMessages")).attributesAsStrings().get("ApproximateNumberOfMessages"));
        Set<String> received = new HashSet<>();
        Set<Integer> partitions = new HashSet<>();
        drain(url, sent.size(), received, partitions);
        assertEquals(sent, received, "nothing lost");
        assertEquals(Set.of(0, 1, 2, 3), partitions, "sends spread over all four partitions");
    }

    /**
     * A standard queue that runs hot gets more partitions (SetQueueAttributes SluicePartitions): what it held stays,
     * new sends spread over all of them; the count never goes down, and a FIFO queue's never changes.
     */
    @Test
    void aStandardQueuesPartitionCountCanBeRaisedButNotLoweredAndFifoIsFixed() {
        String url = sqs.createQueue(b -> b.queueName(unique("praise"))).queueUrl();
        Set<String> sent = new HashSet<>();
        for (int i = 0; i < 20; i++) {
            int n = i;
            sent.add(sqs.sendMessage(b -> b.queueUrl(url).messageBody("before " + n)).messageId());
        }
        sqs.setQueueAttributes(b -> b.queueUrl(url).attributesWithStrings(Map.of("SluicePartitions", "4")));
        assertEquals("4", sqs.getQueueAttributes(b -> b.queueUrl(url).attributeNamesWithStrings("SluicePartitions"))
                .attributesAsStrings().get("SluicePartitions"));
        for (int i = 0; i < 200; i++) {
            int n = i;
            sent.add(sqs.sendMessage(b -> b.queueUrl(url).messageBody("after " + n)).messageId());
        }
        Set<String> received = new HashSet<>();
        Set<Integer> partitions = new HashSet<>();
        drain(url, sent.size(), received, partitions);
        assertEquals(sent, received, "nothing lost across the change");
        assertEquals(Set.of(0, 1, 2, 3), partitions, "the new partitions take sends");

        SqsException lower = org.junit.jupiter.api.Assertions.assertThrows(SqsException.class, () -> sqs
                .setQueueAttributes(b -> b.queueUrl(url).attributesWithStrings(Map.of("SluicePartitions", "2"))));
        assertEquals("InvalidAttributeValue", lower.awsErrorDetails().errorCode());
        String fifo = sqs.createQueue(b -> b.queueName(unique("praise") + ".fifo").attributesWithStrings(Map.of(
                "FifoQueue", "true", "SluicePartitions", "2", "DeduplicationScope", "messageGroup"))).queueUrl();
        SqsException fifoChange = org.junit.jupiter.api.Assertions.assertThrows(SqsException.class, () -> sqs
                .setQueueAttributes(b -> b.queueUrl(fifo).attributesWithStrings(Map.of("SluicePartitions", "4"))));
        assertEquals("InvalidAttributeValue", fifoChange.awsErrorDetails().errorCode());
        assertEquals("2", sqs.getQueueAttributes(b -> b.queueUrl(fifo).attributeNamesWithStrings("SluicePartitions"))
                .attributesAsStrings().get("SluicePartitions"), "unchanged");
    }

    /** Receives and deletes until {@code expected} messages came (bounded), noting ids and partitions. */
    private void drain(String url, int expected, Set<String> received, Set<Integer> partitions) {
        for (int round = 0; round < 100 && received.size() < expected; round++) {
            for (Message m : sqs.receiveMessage(b -> b.queueUrl(url).maxNumberOfMessages(10)).messages()) {
                received.add(m.messageId());
                // the handle's own encoding comes first, its MAC after it
                partitions.add(ReceiptHandle.decode(m.receiptHandle().substring(0,
                        ReceiptHandle.ENCODED_LENGTH)).orElseThrow().partition());
                sqs.deleteMessage(b -> b.queueUrl(url).receiptHandle(m.receiptHandle()));
            }
        }
    }

    @Test
    void partitionCountIsValidatedAndOnlyGrows() {
        SqsException bad = org.junit.jupiter.api.Assertions.assertThrows(SqsException.class, () -> sqs.createQueue(b -> b
                .queueName(unique("p")).attributesWithStrings(Map.of("SluicePartitions", "65"))));
        assertEquals("InvalidAttributeValue", bad.awsErrorDetails().errorCode());
        String name = unique("pfixed");
        sqs.createQueue(b -> b.queueName(name).attributesWithStrings(Map.of("SluicePartitions", "2")));
        SqsException changed = org.junit.jupiter.api.Assertions.assertThrows(SqsException.class, () -> sqs.createQueue(b -> b
                .queueName(name).attributesWithStrings(Map.of("SluicePartitions", "3"))));
        assertEquals("QueueAlreadyExists", changed.awsErrorDetails().errorCode());
        String url = sqs.getQueueUrl(r -> r.queueName(name)).queueUrl();
        // the count grows by itself (auto-split) or by SetQueueAttributes: an application's CreateQueue at startup,
        // naming the count it was created with or none, keeps working
        sqs.setQueueAttributes(b -> b.queueUrl(url).attributesWithStrings(Map.of("SluicePartitions", "4")));
        assertEquals(url, sqs.createQueue(b -> b.queueName(name)).queueUrl());
        assertEquals(url, sqs.createQueue(b -> b.queueName(name)
                .attributesWithStrings(Map.of("SluicePartitions", "2"))).queueUrl());
        assertEquals("QueueAlreadyExists", org.junit.jupiter.api.Assertions.assertThrows(SqsException.class,
                () -> sqs.createQueue(b -> b.queueName(name).attributesWithStrings(Map.of("SluicePartitions", "5"))))
                .awsErrorDetails().errorCode(), "more partitions than the queue has is a different value");
        assertTrue(sqs.getQueueAttributes(b -> b.queueUrl(sqs.getQueueUrl(r -> r.queueName(name)).queueUrl())
                .attributeNamesWithStrings("All")).attributesAsStrings().containsKey("SluicePartitions"));
    }
}
