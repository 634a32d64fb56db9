package io.sluice.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;

/**
 * The 3-member metadata group of a split cluster ({@link LocalCluster}: real processes, one backend, one frontend; one
 * cluster for the two cluster tests, in order: the first ends with the group whole again, the second leaves it
 * leaderless).
 * Members are killed with SIGKILL: catalog changes survive, writes resume on a new leader (the time is printed), a full
 * restart of the group loses nothing, and sends and receives on existing queues go on while the group has no leader at
 * all. And {@code sluice dev --metadata-peers} takes its catalog from such a group.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class MetadataClusterIT {
    private static final List<String> METADATA = List.of("m1", "m2", "m3");
    private static LocalCluster cluster;

    @BeforeAll
    static void startCluster() throws Exception {
        cluster = LocalCluster.split("meta", 1, 1, 1, Map.of());
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    @Order(1)
    void catalogSurvivesKillingTheLeaderAndAFullRestart() throws Exception {
        try (SqsClient sqs = cluster.sqs(0)) {
            for (int i = 0; i < 5; i++) {
                int n = i;
                sqs.createQueue(b -> b.queueName("cat-" + n));
            }
            String q1 = sqs.getQueueUrl(b -> b.queueName("cat-1")).queueUrl();
            sqs.setQueueAttributes(b -> b.queueUrl(q1).attributes(Map.of(QueueAttributeName.VISIBILITY_TIMEOUT, "77")));
            String q2 = sqs.getQueueUrl(b -> b.queueName("cat-2")).queueUrl();
            sqs.tagQueue(b -> b.queueUrl(q2).tags(Map.of("owner", "ops")));
            sqs.deleteQueue(b -> b.queueUrl(sqs.getQueueUrl(r -> r.queueName("cat-3")).queueUrl()));

            String leader = awaitMetadataLeader();
            cluster.kill(leader);
            long killed = System.nanoTime();
            sqs.createQueue(b -> b.queueName("after-kill"));
            long millis = (System.nanoTime() - killed) / 1_000_000;
            System.out.printf("metadata leader %s killed (SIGKILL): next catalog write committed after %d ms%n",
                    leader, millis);
            assertTrue(millis < 20_000, "writes resumed after " + millis + " ms");
            List<String> expected = List.of("after-kill", "cat-0", "cat-1", "cat-2", "cat-4");
            assertEquals(expected, names(sqs));

            cluster.start(leader);
            for (String m : METADATA) {
                cluster.stop(m);
            }
            for (String m : METADATA) { // all launched before any is awaited: the group needs a majority to serve
                cluster.member(m).launch();
            }
            for (String m : METADATA) {
                cluster.member(m).awaitHealthy();
            }
            awaitMetadataLeader();
            sqs.createQueue(b -> b.queueName("after-restart")); // retried by the SDK until the group serves
            assertEquals(List.of("after-kill", "after-restart", "cat-0", "cat-1", "cat-2", "cat-4"), names(sqs));
            assertEquals("77", sqs.getQueueAttributes(b -> b.queueUrl(q1).attributeNames(
                    QueueAttributeName.VISIBILITY_TIMEOUT)).attributesAsStrings().get("VisibilityTimeout"));
            assertEquals(Map.of("owner", "ops"), sqs.listQueueTags(b -> b.queueUrl(q2)).tags());

            int admin = cluster.member(awaitMetadataLeader()).adminPort;
            String status = runAdmin("status", admin);
            assertTrue(status.lines().anyMatch(l -> l.startsWith("metadata") && l.contains("leader")), status);
            assertTrue(status.lines().anyMatch(l -> l.startsWith("partition cat-1/0 leader=")), status);
            String queues = runAdmin("queues", admin);
            assertTrue(queues.contains("cat-4") && queues.contains("replicas ["), queues);
        }
    }

    @Test
    @Order(2)
    void sendsAndReceivesGoOnWhileTheMetadataGroupHasNoLeader() throws Exception {
        try (SqsClient sqs = cluster.sqs(0)) {
            String url = sqs.createQueue(b -> b.queueName("steady")).queueUrl();
            sqs.sendMessage(b -> b.queueUrl(url).messageBody("warm-up")); // the frontend knows the shard's leader
            Message warm = sqs.receiveMessage(b -> b.queueUrl(url).waitTimeSeconds(5)).messages().get(0);
            sqs.deleteMessage(b -> b.queueUrl(url).receiptHandle(warm.receiptHandle()));
            String leader = awaitMetadataLeader();
            String other = METADATA.stream().filter(m -> !m.equals(leader)).findFirst().orElseThrow();
            cluster.kill(leader);
            cluster.kill(other); // one member left: no majority, no leader
            long start = System.nanoTime();
            for (int i = 0; i < 50; i++) {
                int n = i;
                sqs.sendMessage(b -> b.queueUrl(url).messageBody("m" + n));
                Message m = sqs.receiveMessage(b -> b.queueUrl(url).waitTimeSeconds(1)).messages().get(0);
                sqs.deleteMessage(b -> b.queueUrl(url).receiptHandle(m.receiptHandle()));
            }
            long millis = (System.nanoTime() - start) / 1_000_000;
            System.out.printf("50 send/receive/delete round trips with no metadata leader: %d ms%n", millis);
            assertTrue(millis < 30_000, "the data plane did not wait on the catalog: " + millis + " ms");
        }
        stopCluster(); // leaderless from here on: not kept running through the next test
        cluster = null;
    }

    /**
     * {@code sluice dev --metadata-peers} (a contract of the dev command): its catalog is an external metadata group,
     * its data local. A queue it creates is in the group's catalog.
     */
    @Test
    @Order(3)
    void aDevServerUsesAnExternalMetadataGroupWhenGivenOne() throws Exception {
        try (MetadataProcess.Group group = new MetadataProcess.Group("meta-dev")) {
            group.startAll();
            group.awaitLeader();
            try (SluiceProcess dev = SluiceProcess.start("dev-peers", "--metadata-peers", group.peers);
                 SqsClient sqs = SqsClients.client(dev.endpoint())) {
                String url = sqs.createQueue(b -> b.queueName("on-the-group")).queueUrl();
                sqs.sendMessage(b -> b.queueUrl(url).messageBody("kept locally"));
                assertEquals("kept locally", sqs.receiveMessage(b -> b.queueUrl(url).waitTimeSeconds(5)).messages()
                        .get(0).body());
                String queues = runAdmin("queues", group.awaitLeader().adminPort);
                assertTrue(queues.contains("on-the-group") && queues.contains("replicas [\"local\"]"), queues);
            }
        }
    }

    private static String awaitMetadataLeader() {
        String leader = ClusterState.await("a metadata leader", Duration.ofSeconds(60), cluster::metadataLeader,
                l -> l != null, cluster::state);
        assertNotNull(leader);
        return leader;
    }

    private static List<String> names(SqsClient sqs) {
        return sqs.listQueues().queueUrls().stream().map(u -> u.substring(u.lastIndexOf('/') + 1)).sorted().toList();
    }

    private static String runAdmin(String command, int adminPort) throws Exception {
        return SluiceProcess.runCli("admin", command, "--admin-url", "http://127.0.0.1:" + adminPort, "--token",
                ProcessFixtures.READ_TOKEN);
    }
}
