package io.sluice.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.metadata.image.MetadataCommand;
import io.sluice.metadata.raft.MetadataClient;
import io.sluice.metadata.raft.MetadataPeers;
import java.net.URI;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;

/**
 * Effects run where their data lives, on real processes (3 metadata members, 2 backends, 2 shards of one replica
 * each, so that one shard can be down while the other serves: a test-only layout; R = 3 puts every shard of a
 * 3-backend cluster on every backend):
 * <ul>
 *   <li>a dead-letter hand-off is executed by the source partition's primary, not by frontends: its dead-letter queue's
 *       shard down, the hand-off stays pending (counted and aged in the primary's metrics) and completes once that
 *       shard is back, with exactly one copy;</li>
 *   <li>queue configuration reaches every partition from the catalog through the shards' leaders: the frontend writes
 *       the catalog only and waits while the leaders configure the partitions (a change in effect when the call
 *       answers); a SetQueueAttributes whose frontend crashed after its catalog write (the catalog written, nothing
 *       else) still takes effect.</li>
 * </ul>
 */
@org.junit.jupiter.api.TestInstance(org.junit.jupiter.api.TestInstance.Lifecycle.PER_CLASS)
class EffectsWhereDataLivesIT {
    LocalCluster cluster;
    SqsClient sqs;
    MetadataClient metadata;

    @org.junit.jupiter.api.BeforeAll
    void start() throws Exception {
        // the dead-backend grace is long: an outage must not move a one-replica shard elsewhere
        cluster = LocalCluster.split("effects", 2, 2, 1, Map.of("SLUICE_REPLICATION_FACTOR", "1",
                "SLUICE_BACKEND_DEAD_AFTER_MS", "600000"));
        sqs = cluster.sqs(0);
        metadata = new MetadataClient(MetadataPeers.parse(cluster.metadataPeers));
        // the shards were placed while b1 alone was up (then a rebalance moves one of them to b2), or once b2 had
        // registered too (then they are one per backend already; waiting for a move failed the setup then)
        ClusterState.awaitTrue("each backend hosting one shard (rebalanced if need be)", Duration.ofMinutes(2),
                () -> {
                    boolean balanced = cluster.member("b1").hostedShards() == 1
                            && cluster.member("b2").hostedShards() == 1;
                    if (!balanced) {
                        metadata.submit(new MetadataCommand.Rebalance(1));
                    }
                    return balanced;
                }, cluster::state);
    }

    @org.junit.jupiter.api.AfterAll
    void stop() {
        if (metadata != null) {
            metadata.close();
        }
        if (sqs != null) {
            sqs.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void aHandOffWhoseDeadLetterShardIsDownCompletesOnceItIsBackWithOneCopy() throws Exception {
        {
            String source = sqs.createQueue(b -> b.queueName("source")).queueUrl();
            String sourceHost = cluster.shardLeader("source", 0);
            String dlqName = null;
            for (int i = 0; i < 6 && dlqName == null; i++) {
                String name = "dlq-" + i;
                sqs.createQueue(b -> b.queueName(name));
                if (!cluster.shardLeader(name, 0).equals(sourceHost)) {
                    dlqName = name;
                }
            }
            assertNotNull(dlqName, "a queue placed on the other backend's shard within 6 queues: " + cluster.state());
            String target = dlqName;
            String dlq = sqs.getQueueUrl(b -> b.queueName(target)).queueUrl();
            String dlqHost = cluster.shardLeader(target, 0);
            String dlqArn = sqs.getQueueAttributes(b -> b.queueUrl(dlq).attributeNames(QueueAttributeName.QUEUE_ARN))
                    .attributes().get(QueueAttributeName.QUEUE_ARN);
            sqs.setQueueAttributes(b -> b.queueUrl(source).attributes(Map.of(QueueAttributeName.REDRIVE_POLICY,
                    "{\"deadLetterTargetArn\":\"" + dlqArn + "\",\"maxReceiveCount\":\"1\"}")));

            Set<String> sent = new HashSet<>();
            for (int i = 0; i < 5; i++) {
                int n = i;
                sent.add(sqs.sendMessage(b -> b.queueUrl(source).messageBody("poison " + n)).messageId());
            }
            cluster.kill(dlqHost);

            // every message received once (its visibility 1 s), then a receive past maxReceiveCount hands it off
            Set<String> received = new HashSet<>();
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (received.size() < 5 && System.nanoTime() < deadline) {
                sqs.receiveMessage(b -> b.queueUrl(source).maxNumberOfMessages(10).visibilityTimeout(1)
                        .waitTimeSeconds(1)).messages().forEach(m -> received.add(m.messageId()));
            }
            assertEquals(sent, received, "each message received once");
            URI sourceAdmin = URI.create("http://127.0.0.1:" + cluster.member(sourceHost).adminPort);
            ClusterState.awaitTrue("all five handed off (pending at the source's primary)", Duration.ofSeconds(60),
                    () -> {
                        List<Message> again = sqs.receiveMessage(b -> b.queueUrl(source).maxNumberOfMessages(10)
                                .waitTimeSeconds(1)).messages();
                        assertEquals(List.of(), again, "a message over maxReceiveCount is not delivered again");
                        return pending(sourceAdmin, "source") == 5;
                    }, cluster::state);

            Thread.sleep(5_000); // retried meanwhile, against a shard that is down
            assertEquals(5, pending(sourceAdmin, "source"), "still pending while the dead-letter shard is down");
            double age = PromScrape.of(sourceAdmin).sum("sluice_queue_dead_letter_pending_age_seconds", "queue",
                    "source");
            assertTrue(age >= 5, "the pending hand-offs' age shows: " + age);

            cluster.start(dlqHost);
            ClusterState.awaitTrue("the hand-offs complete once the dead-letter shard is back", Duration.ofSeconds(120),
                    () -> pending(sourceAdmin, "source") == 0, cluster::state);

            Map<String, Integer> copies = SqsClients.copiesById(sqs, dlq);
            assertEquals(sent, copies.keySet(), "every hand-off reached the dead-letter queue");
            assertTrue(copies.values().stream().allMatch(c -> c == 1), "exactly one copy of each: " + copies);
            Map<QueueAttributeName, String> counts = sqs.getQueueAttributes(b -> b.queueUrl(dlq).attributeNames(
                    QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES,
                    QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES_NOT_VISIBLE)).attributes();
            assertEquals("0", counts.get(QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES), counts.toString());
            assertEquals("5", counts.get(QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES_NOT_VISIBLE),
                    counts.toString());
        }
    }

    /**
     * A SetQueueAttributes whose frontend crashed between its catalog write and telling the partitions: the catalog
     * holds a redrive policy the partition has never been told about. The shard's leader reconciles its partitions
     * with the catalog, so the policy takes effect: a message received past maxReceiveCount moves to the dead-letter
     * queue.
     */
    @Test
    void configurationWrittenOnlyToTheCatalogReachesThePartition() throws Exception {
        String source = sqs.createQueue(b -> b.queueName("config-source")).queueUrl();
        String dlq = sqs.createQueue(b -> b.queueName("config-dlq")).queueUrl();
        String dlqArn = sqs.getQueueAttributes(b -> b.queueUrl(dlq).attributeNames(QueueAttributeName.QUEUE_ARN))
                .attributes().get(QueueAttributeName.QUEUE_ARN);
        String sent = sqs.sendMessage(b -> b.queueUrl(source).messageBody("configured late")).messageId();

        Map<String, String> attributes = new HashMap<>(metadata.fetchImage().queues().get("config-source").attributes());
        attributes.put("RedrivePolicy", "{\"deadLetterTargetArn\":\"" + dlqArn + "\",\"maxReceiveCount\":\"1\"}");
        metadata.submit(new MetadataCommand.SetQueueAttributes("config-source", attributes)); // the catalog only

        List<Message> moved = ClusterState.await("the message handed off under the catalog's redrive policy",
                Duration.ofSeconds(90), () -> {
                    sqs.receiveMessage(b -> b.queueUrl(source).visibilityTimeout(1).waitTimeSeconds(1));
                    return sqs.receiveMessage(b -> b.queueUrl(dlq).waitTimeSeconds(1).visibilityTimeout(60)).messages();
                }, m -> !m.isEmpty(), cluster::state);
        assertEquals(sent, moved.get(0).messageId(), "the source's message, in the dead-letter queue");
    }

    /**
     * The frontend writes the catalog only; the partitions' shard leaders configure them from it, asked at once, so
     * the change is in effect when SetQueueAttributes answers (the leaders' periodic reconcile is 10 s away), on every
     * partition, across both shards.
     */
    @Test
    void setQueueAttributesIsInEffectOnEveryPartitionWhenItAnswers() {
        String url = sqs.createQueue(b -> b.queueName("delayed-later").attributesWithStrings(
                Map.of("SluicePartitions", "4"))).queueUrl();
        long start = System.nanoTime();
        sqs.setQueueAttributes(b -> b.queueUrl(url).attributes(Map.of(QueueAttributeName.DELAY_SECONDS, "60")));
        long tookMillis = (System.nanoTime() - start) / 1_000_000;
        // a leader not asked would leave the frontend's wait to time out (5 s) and the change to its next reconcile
        assertTrue(tookMillis < 4_000, "configured by the leaders on request, not at a timeout: " + tookMillis + " ms");
        for (int i = 0; i < 8; i++) {
            int n = i;
            sqs.sendMessage(b -> b.queueUrl(url).messageBody("delayed " + n));
        }
        Map<QueueAttributeName, String> counts = sqs.getQueueAttributes(b -> b.queueUrl(url).attributeNames(
                QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES,
                QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES_DELAYED)).attributes();
        assertEquals("8", counts.get(QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES_DELAYED), counts.toString());
        assertEquals("0", counts.get(QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES), counts.toString());
        sqs.deleteQueue(b -> b.queueUrl(url));
    }

    private static double pending(URI admin, String queue) throws Exception {
        return PromScrape.of(admin).sum("sluice_queue_dead_letter_pending", "queue", queue);
    }
}
