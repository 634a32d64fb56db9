package io.sluice.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchRequestEntry;

/**
 * Hot queues split themselves (`sluice dev`, thresholds lowered: 50 sends/s per partition held for 10 s): a standard
 * queue flooded at 150 messages/s goes from 1 to 2 partitions by itself, stays there while the flood goes on (cool-down)
 * and loses nothing on the way; a queue flooded as hard that opted out, and a quiet one, keep theirs; the split is
 * counted in {@code sluice_queue_splits_total}.
 */
class AutoSplitIT {
    static SluiceProcess server;

    @BeforeAll
    static void start() throws Exception {
        server = SluiceProcess.start("autosplit", Map.of("SLUICE_AUTOSPLIT_SENDS_PER_SECOND_PER_PARTITION", "50",
                "SLUICE_AUTOSPLIT_SUSTAIN_SECONDS", "10", "SLUICE_AUTOSPLIT_COOLDOWN_SECONDS", "600",
                "SLUICE_ACCESS_LOG_LEVEL", "OFF"));
    }

    @AfterAll
    static void stop() throws Exception {
        server.stop();
    }

    private static String partitions(SqsClient sqs, String url) {
        return sqs.getQueueAttributes(b -> b.queueUrl(url).attributeNamesWithStrings("SluicePartitions"))
                .attributesAsStrings().getOrDefault("SluicePartitions", "1");
    }

    @Test
    void aFloodedQueueSplitsItselfAndLosesNothingWhileQuietAndOptedOutQueuesDoNot() throws Exception {
        try (SqsClient sqs = SqsClients.client(server.endpoint())) {
            String hot = sqs.createQueue(b -> b.queueName("hot")).queueUrl();
            String optedOut = sqs.createQueue(b -> b.queueName("opted-out")
                    .attributesWithStrings(Map.of("SluiceAutoSplit", "false"))).queueUrl();
            String quiet = sqs.createQueue(b -> b.queueName("quiet")).queueUrl();
            assertEquals("false", sqs.getQueueAttributes(b -> b.queueUrl(optedOut).attributeNamesWithStrings("All"))
                    .attributesAsStrings().get("SluiceAutoSplit"));
            Set<String> acknowledged = ConcurrentHashMap.newKeySet();
            AtomicBoolean flooding = new AtomicBoolean(true);
            List<Thread> flooders = new ArrayList<>();
            for (int t = 0; t < 6; t++) { // three threads each: 150 messages/s on either flooded queue
                String url = t < 3 ? hot : optedOut;
                Thread th = new Thread(() -> {
                    int n = 0;
                    while (flooding.get()) {
                        List<SendMessageBatchRequestEntry> entries = new ArrayList<>();
                        for (int i = 0; i < 10; i++) {
                            entries.add(SendMessageBatchRequestEntry.builder().id("e" + i).messageBody("m" + n++)
                                    .build());
                        }
                        var r = sqs.sendMessageBatch(b -> b.queueUrl(url).entries(entries));
                        if (url.equals(hot)) {
                            r.successful().forEach(s -> acknowledged.add(s.messageId()));
                        }
                        try {
                            Thread.sleep(200); // ~50 messages/s per thread: 150/s on the hot queue, 3 × the threshold
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                });
                th.start();
                flooders.add(th);
            }
            long start = System.nanoTime();
            try {
                await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofSeconds(1)).until(() -> {
                    sqs.sendMessage(b -> b.queueUrl(quiet).messageBody("calm"));
                    return partitions(sqs, hot).equals("2");
                });
                System.out.printf("auto-split: the flooded queue had 2 partitions after %d s%n",
                        (System.nanoTime() - start) / 1_000_000_000);
                Thread.sleep(20_000); // flooding on for two more windows: the cool-down keeps it at 2
            } finally {
                flooding.set(false);
                for (Thread th : flooders) {
                    th.join();
                }
            }
            assertEquals("2", partitions(sqs, hot), "split once, then cooled down");
            assertEquals("1", partitions(sqs, optedOut), "SluiceAutoSplit=false keeps the count");
            assertEquals("1", partitions(sqs, quiet), "a quiet queue never splits");
            assertFalse(sqs.getQueueAttributes(b -> b.queueUrl(quiet).attributeNamesWithStrings("All"))
                    .attributesAsStrings().containsKey("SluicePartitions"));
            assertEquals(1.0, PromScrape.of(server.adminEndpoint()).sum("sluice_queue_splits_total"), "one split counted");

            sqs.sendMessage(b -> b.queueUrl(hot).messageBody("after the split"));
            Map<String, Integer> copies = SqsClients.copiesById(sqs, hot);
            assertEquals(Set.of(), Set.copyOf(acknowledged.stream().filter(id -> !copies.containsKey(id)).toList()),
                    "every acknowledged message is received after the split");
            assertEquals(acknowledged.size() + 1, copies.size());
            System.out.printf("auto-split: %d acknowledged sends to the split queue, all received%n",
                    acknowledged.size());
        }
    }
}
