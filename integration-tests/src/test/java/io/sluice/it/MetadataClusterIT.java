package io.sluice.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;

/**
 * A 3-member metadata group of real processes and a frontend using it. Members are killed with SIGKILL: catalog
 * changes survive, writes resume on a new leader (the time is printed), a full restart loses nothing, and sends and
 * receives on existing queues go on while the group has no leader at all.
 */
class MetadataClusterIT {

    @Test
    void catalogSurvivesKillingTheLeaderAndAFullRestart() throws Exception {
        try (MetadataProcess.Group group = new MetadataProcess.Group("meta")) {
            group.startAll();
            group.awaitLeader();
            try (SluiceProcess frontend = SluiceProcess.start("frontend", "--metadata-peers", group.peers);
                 SqsClient sqs = SqsClients.client(frontend.endpoint())) {
                for (int i = 0; i < 5; i++) {
                    int n = i;
                    sqs.createQueue(b -> b.queueName("cat-" + n));
                }
                String q1 = sqs.getQueueUrl(b -> b.queueName("cat-1")).queueUrl();
                sqs.setQueueAttributes(b -> b.queueUrl(q1).attributes(Map.of(QueueAttributeName.VISIBILITY_TIMEOUT, "77")));
                String q2 = sqs.getQueueUrl(b -> b.queueName("cat-2")).queueUrl();
                sqs.tagQueue(b -> b.queueUrl(q2).tags(Map.of("owner", "ops")));
                sqs.deleteQueue(b -> b.queueUrl(sqs.getQueueUrl(r -> r.queueName("cat-3")).queueUrl()));

                MetadataProcess leader = group.awaitLeader();
                leader.kill();
                long killed = System.nanoTime();
                sqs.createQueue(b -> b.queueName("after-kill"));
                long millis = (System.nanoTime() - killed) / 1_000_000;
                System.out.printf("metadata leader %s killed (SIGKILL): next catalog write committed after %d ms%n",
                        leader.id, millis);
                assertTrue(millis < 20_000, "writes resumed after " + millis + " ms");
                List<String> expected = List.of("after-kill", "cat-0", "cat-1", "cat-2", "cat-4");
                assertEquals(expected, names(sqs));

                leader.start();
                for (MetadataProcess m : group.members.values()) {
                    m.stop();
                }
                group.startAll();
                group.awaitLeader();
                sqs.createQueue(b -> b.queueName("after-restart")); // retried by the SDK until the group serves
                assertEquals(List.of("after-kill", "after-restart", "cat-0", "cat-1", "cat-2", "cat-4"), names(sqs));
                assertEquals("77", sqs.getQueueAttributes(b -> b.queueUrl(q1).attributeNames(
                        QueueAttributeName.VISIBILITY_TIMEOUT)).attributesAsStrings().get("VisibilityTimeout"));
                assertEquals(Map.of("owner", "ops"), sqs.listQueueTags(b -> b.queueUrl(q2)).tags());

                String status = runAdmin("status", group.awaitLeader().adminPort);
                assertTrue(status.lines().anyMatch(l -> l.startsWith("metadata") && l.contains("leader")), status);
                assertTrue(status.lines().anyMatch(l -> l.startsWith("partition cat-1/0 leader=local")), status);
                String queues = runAdmin("queues", group.awaitLeader().adminPort);
                assertTrue(queues.contains("cat-4") && queues.contains("replicas [\"local\"]"), queues);
            }
        }
    }

    @Test
    void sendsAndReceivesGoOnWhileTheMetadataGroupHasNoLeader() throws Exception {
        try (MetadataProcess.Group group = new MetadataProcess.Group("meta-down")) {
            group.startAll();
            group.awaitLeader();
            try (SluiceProcess frontend = SluiceProcess.start("frontend-nl", "--metadata-peers", group.peers);
                 SqsClient sqs = SqsClients.client(frontend.endpoint())) {
                String url = sqs.createQueue(b -> b.queueName("steady")).queueUrl();
                MetadataProcess leader = group.awaitLeader();
                MetadataProcess other = group.members.values().stream().filter(m -> m != leader).findFirst().orElseThrow();
                leader.kill();
                other.kill(); // one member left: no majority, no leader
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
                leader.start();
                other.start();
                group.awaitLeader();
            }
        }
    }

    private static List<String> names(SqsClient sqs) {
        return sqs.listQueues().queueUrls().stream().map(u -> u.substring(u.lastIndexOf('/') + 1)).sorted().toList();
    }

    private static String runAdmin(String command, int adminPort) throws Exception {
        return SluiceProcess.runCli("admin", command, "--admin-url", "http://127.0.0.1:" + adminPort, "--token",
                ProcessFixtures.READ_TOKEN);
    }

}
