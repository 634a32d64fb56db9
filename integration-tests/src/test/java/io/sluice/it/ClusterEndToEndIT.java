package io.sluice.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.metadata.image.ClusterImage;
import io.sluice.metadata.image.PartitionAssignment;
import io.sluice.metadata.raft.MetadataClient;
import io.sluice.metadata.raft.MetadataPeers;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.ListMessageMoveTasksResultEntry;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchRequestEntry;

/**
 * The cluster end to end with real processes, through the AWS SDK: in the split topology 3 metadata members, 3
 * backends hosting replicated shards (R = 3) and a stateless frontend; in the combined one (scripts/fault-suite.sh,
 * {@code -Dsluice.topologies=split,combined}) three {@code sluice node} processes. A long poll through a shard wakes on a send; the leader
 * of the queue's shard is killed with SIGKILL in the middle of sends: no acknowledged message is lost (duplicates are
 * counted and printed); twelve 1 MiB messages sent at once come back intact; a deleted queue's partition is retired on
 * every replica; a message move task finishes after a SIGKILL of the node driving it, every message moved once; a
 * queue's redelivery backoff holds as on {@code sluice dev} ({@link RedeliveryBackoffIT}), and so does a FIFO queue's
 * producer order ({@link ProducerOrderIT}).
 */
class ClusterEndToEndIT {

    @ParameterizedTest
    @MethodSource("io.sluice.it.LocalCluster#topologies")
    void acknowledgedMessagesSurviveKillingTheirShardsLeader(LocalCluster.Topology topology) throws Exception {
        try (LocalCluster cluster = LocalCluster.start(topology, "e2e", 2, 3, Map.of());
             SqsClient first = cluster.sqs(0);
             MetadataClient metadata = new MetadataClient(MetadataPeers.parse(cluster.metadataPeers))) {
            emptyReceivesWriteNothing(cluster, first);
            RedeliveryBackoffIT.backoffHolds(first, "backoff"); // the attribute through the replicated path
            ProducerOrderIT.producerOrderHolds(first, "order"); // producer order, replicated
            String url = first.createQueue(b -> b.queueName("replicated")).queueUrl();

            long start = System.nanoTime();
            CompletableFuture<List<Message>> parked = CompletableFuture.supplyAsync(() ->
                    first.receiveMessage(b -> b.queueUrl(url).waitTimeSeconds(10)).messages());
            cluster.frontends().get(0).awaitParkedPolls(1);
            first.sendMessage(b -> b.queueUrl(url).messageBody("wake"));
            Message woken = parked.join().get(0);
            System.out.printf("long poll through a shard woke after %d ms%n", (System.nanoTime() - start) / 1_000_000);
            first.deleteMessage(b -> b.queueUrl(url).receiptHandle(woken.receiptHandle()));
            // nothing arrives when a delayed message becomes visible: the shard's leader wakes the parked poll then
            MessagingIT.delayedMessageWakesAParkedPoll(first, url, n -> cluster.frontends().get(0).awaitParkedPolls(n));

            String leader = cluster.shardLeader("replicated", 0);
            // in the combined topology the leader is also a frontend: the client talks to a node that stays up
            try (SqsClient sqs = SqsClients.client(cluster.frontendOtherThan(leader).endpoint())) {
                Set<String> acknowledged = new HashSet<>();
                for (int i = 0; i < 50; i++) {
                    int n = i;
                    acknowledged.add(sqs.sendMessage(b -> b.queueUrl(url).messageBody("m" + n)).messageId());
                }
                cluster.kill(leader);
                long killed = System.nanoTime();
                acknowledged.add(sqs.sendMessage(b -> b.queueUrl(url).messageBody("after the kill")).messageId());
                System.out.printf("shard leader %s killed (SIGKILL): first send acknowledged after %d ms%n", leader,
                        (System.nanoTime() - killed) / 1_000_000);
                for (int i = 0; i < 20; i++) {
                    int n = i;
                    acknowledged.add(sqs.sendMessage(b -> b.queueUrl(url).messageBody("late" + n)).messageId());
                }

                // Drain: a send the SDK retried after an unknown outcome (during the failover) may be stored twice,
                // under two ids with one body: at-least-once, counted as duplicates. Nothing acknowledged may miss.
                Set<String> received = new HashSet<>();
                Map<String, Integer> copiesPerBody = new java.util.HashMap<>();
                int emptyRounds = 0;
                for (int round = 0; round < 300 && emptyRounds < 3; round++) {
                    List<Message> got = sqs.receiveMessage(b -> b.queueUrl(url).maxNumberOfMessages(10)
                            .waitTimeSeconds(1)).messages();
                    emptyRounds = got.isEmpty() ? emptyRounds + 1 : 0;
                    for (Message m : got) {
                        received.add(m.messageId());
                        copiesPerBody.merge(m.body(), 1, Integer::sum);
                        sqs.deleteMessage(b -> b.queueUrl(url).receiptHandle(m.receiptHandle()));
                    }
                }
                int duplicates = copiesPerBody.values().stream().mapToInt(n -> n - 1).sum();
                System.out.printf("acknowledged %d, received %d distinct ids, %d duplicates (retried sends)%n",
                        acknowledged.size(), received.size(), duplicates);
                Set<String> lost = new HashSet<>(acknowledged);
                lost.removeAll(received);
                assertEquals(Set.of(), lost, "no acknowledged message lost");
                assertEquals(71, copiesPerBody.size(), "every body sent arrived, nothing else");

                // 1 MiB messages sent at once: the frontend's shard client batches them into entries under Ratis'
                // limit (a batch over it would fail every send in it); all come back intact
                String big = sqs.createQueue(b -> b.queueName("big")).queueUrl();
                String mebibyte = "y".repeat(1024 * 1024 - 8);
                List<CompletableFuture<String>> bigSends = new ArrayList<>();
                java.util.concurrent.ExecutorService senders = java.util.concurrent.Executors.newFixedThreadPool(12);
                for (int i = 0; i < 12; i++) {
                    String body = String.format("%02d", i) + mebibyte;
                    bigSends.add(CompletableFuture.supplyAsync(() -> sqs.sendMessage(b -> b.queueUrl(big)
                            .messageBody(body)).messageId(), senders));
                }
                bigSends.forEach(CompletableFuture::join);
                senders.shutdown();
                Set<String> bigBodies = new HashSet<>();
                for (int round = 0; round < 60 && bigBodies.size() < 12; round++) {
                    for (Message m : sqs.receiveMessage(b -> b.queueUrl(big).maxNumberOfMessages(10)
                            .waitTimeSeconds(1)).messages()) {
                        assertEquals(mebibyte, m.body().substring(2), "intact");
                        bigBodies.add(m.body().substring(0, 2));
                        sqs.deleteMessage(b -> b.queueUrl(big).receiptHandle(m.receiptHandle()));
                    }
                }
                assertEquals(12, bigBodies.size(), "every 1 MiB message came back");

                // DeleteQueue drops the queue's routes from the catalog first: its shard's leader then retires the
                // orphaned partition (messages and all) on every replica
                String doomed = sqs.createQueue(b -> b.queueName("doomed")).queueUrl();
                sqs.sendMessage(b -> b.queueUrl(doomed).messageBody("left behind?"));
                ClusterImage withDoomed = metadata.fetchImage();
                long doomedId = withDoomed.queues().get("doomed").queueId();
                String doomedGroup = withDoomed.shards().get(withDoomed.partitions()
                        .get(PartitionAssignment.key(doomedId, 0)).shardId()).groupId();
                List<LocalCluster.Member> replicas = cluster.backends().stream()
                        .filter(b -> b.livePartitions(doomedGroup) > 0).toList();
                Map<LocalCluster.Member, Integer> before = new java.util.HashMap<>();
                replicas.forEach(b -> before.put(b, b.livePartitions(doomedGroup)));
                assertTrue(replicas.size() >= 2, "the doomed queue's shard is replicated: " + before);
                sqs.deleteQueue(b -> b.queueUrl(doomed));
                await().atMost(Duration.ofSeconds(60)).until(() -> replicas.stream()
                        .allMatch(b -> b.livePartitions(doomedGroup) == before.get(b) - 1));
            }
            cluster.start(leader); // back, so that another backend may go down without losing the majority
            await().atMost(Duration.ofSeconds(60)).until(() -> cluster.member(leader).hostedShards() == 2);
            moveTaskSurvivesAKillOfTheNodeDrivingIt(cluster);
        }
    }

    /** Polling an empty queue writes nothing to its shard's log once a receive there found nothing (it probes). */
    private static void emptyReceivesWriteNothing(LocalCluster cluster, SqsClient sqs) throws Exception {
        String url = sqs.createQueue(b -> b.queueName("empty")).queueUrl();
        URI admin = URI.create("http://127.0.0.1:" + cluster.frontends().get(0).adminPort);
        PromScrape before = PromScrape.of(admin);
        assertFalse(before.find("sluice_shard_commands_total").isEmpty(), "the frontend counts the commands it writes");
        for (int i = 0; i < 20; i++) {
            assertEquals(List.of(), sqs.receiveMessage(b -> b.queueUrl(url)).messages());
        }
        double written = PromScrape.of(admin).sum("sluice_shard_commands_total")
                - before.sum("sluice_shard_commands_total");
        System.out.printf("20 receives of an empty queue wrote %.0f commands%n", written);
        assertTrue(written >= 1 && written <= 3, "20 empty receives wrote " + written + " commands (the first leases)");
        sqs.sendMessage(b -> b.queueUrl(url).messageBody("arrived"));
        assertEquals("arrived", sqs.receiveMessage(b -> b.queueUrl(url)).messages().get(0).body(),
                "a receive after an empty one finds what arrived since");
    }

    /**
     * A message move task is replicated state of its dead-letter queue's partition, driven by that partition's
     * primary: killed (SIGKILL) while the task moves (paced at 10 messages/s), the new primary finishes it, and every
     * message is moved exactly once (the batch the dead primary had leased is finished by the next one; its copies,
     * if made twice, are stored once).
     */
    private static void moveTaskSurvivesAKillOfTheNodeDrivingIt(LocalCluster cluster) throws Exception {
        try (SqsClient setup = cluster.sqs(0)) {
            String dlq = setup.createQueue(b -> b.queueName("parked")).queueUrl();
            String dlqArn = arnOf(setup, dlq);
            setup.createQueue(b -> b.queueName("redriving").attributes(Map.of(QueueAttributeName.REDRIVE_POLICY,
                    "{\"deadLetterTargetArn\":\"" + dlqArn + "\",\"maxReceiveCount\":\"3\"}")));
            String destination = setup.createQueue(b -> b.queueName("moved-to")).queueUrl();
            String destinationArn = arnOf(setup, destination);
            Set<String> parked = new HashSet<>();
            for (int i = 0; i < 6; i++) {
                int batch = i;
                setup.sendMessageBatch(b -> b.queueUrl(dlq).entries(java.util.stream.IntStream.range(0, 10)
                        .mapToObj(n -> SendMessageBatchRequestEntry.builder().id("e" + n).messageBody(
                                "parked " + batch + "/" + n).build()).toList()))
                        .successful().forEach(r -> parked.add(r.messageId()));
            }
            assertEquals(60, parked.size());
            String driver = cluster.shardLeader("parked", 0);
            try (SqsClient sqs = SqsClients.client(cluster.frontendOtherThan(driver).endpoint())) {
                sqs.startMessageMoveTask(b -> b.sourceArn(dlqArn).destinationArn(destinationArn)
                        .maxNumberOfMessagesPerSecond(10));
                await().atMost(Duration.ofSeconds(60)).until(() -> task(sqs, dlqArn)
                        .approximateNumberOfMessagesMoved() >= 15);
                cluster.kill(driver);
                long movedAtKill = task(sqs, dlqArn).approximateNumberOfMessagesMoved();
                System.out.printf("move task: primary %s killed after %d of 60 moved%n", driver, movedAtKill);
                ListMessageMoveTasksResultEntry done = await().atMost(Duration.ofSeconds(120))
                        .ignoreExceptions().until(() -> task(sqs, dlqArn), t -> "COMPLETED".equals(t.status()));
                assertEquals(60L, done.approximateNumberOfMessagesMoved(), done.toString());
                assertEquals(60L, done.approximateNumberOfMessagesToMove(), done.toString());

                Map<String, Integer> copies = SqsClients.copiesById(sqs, destination);
                assertEquals(parked, copies.keySet(), "every parked message moved, with its id");
                assertTrue(copies.values().stream().allMatch(c -> c == 1), "each moved once: " + copies);
                Map<QueueAttributeName, String> left = sqs.getQueueAttributes(b -> b.queueUrl(dlq).attributeNames(
                        QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES,
                        QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES_NOT_VISIBLE)).attributes();
                assertEquals("0", left.get(QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES), left.toString());
                assertEquals("0", left.get(QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES_NOT_VISIBLE),
                        left.toString());
            }
        }
    }

    private static String arnOf(SqsClient sqs, String url) {
        return sqs.getQueueAttributes(b -> b.queueUrl(url).attributeNames(QueueAttributeName.QUEUE_ARN))
                .attributes().get(QueueAttributeName.QUEUE_ARN);
    }

    private static ListMessageMoveTasksResultEntry task(SqsClient sqs, String sourceArn) {
        return sqs.listMessageMoveTasks(b -> b.sourceArn(sourceArn)).results().get(0);
    }
}
