package io.sluice.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import software.amazon.awssdk.services.sqs.SqsClient;

/**
 * Shards, not queues, are Raft groups: queues on a 3-backend cluster with 6 shards create no group beyond the 6, and
 * a backend restarted with them serves again well within 30 s. CI creates 300 queues (50 per shard);
 * {@code scripts/scale-suite.sh} the full 1,000 ({@code -Dsluice.scale.queues=1000}).
 */
class ShardScaleIT {
    static final int QUEUES = Integer.getInteger("sluice.scale.queues", 300);
    static final int SHARDS = 6;

    @ParameterizedTest
    @MethodSource("io.sluice.it.LocalCluster#topologies")
    void manyQueuesStayOnTheConfiguredShards(LocalCluster.Topology topology) throws Exception {
        try (LocalCluster cluster = LocalCluster.start(topology, "scale", SHARDS, 3, Map.of());
             SqsClient sqs = cluster.sqs(0)) {
            List<LocalCluster.Member> backends = cluster.backends();
            long start = System.nanoTime();
            ExecutorService pool = Executors.newFixedThreadPool(8);
            try {
                List<Future<?>> creates = new ArrayList<>();
                for (int q = 0; q < QUEUES; q++) {
                    int n = q;
                    creates.add(pool.submit(() -> sqs.createQueue(b -> b.queueName("scale-" + n))));
                }
                for (Future<?> f : creates) {
                    f.get(120, TimeUnit.SECONDS);
                }
            } finally {
                pool.shutdownNow();
            }
            System.out.printf("%d queues created in %d ms%n", QUEUES, (System.nanoTime() - start) / 1_000_000);
            assertEquals(QUEUES, sqs.listQueues(b -> b.queueNamePrefix("scale-")).queueUrls().size());
            for (LocalCluster.Member b : backends) {
                assertEquals(SHARDS, b.hostedShards(), "no Raft group per queue on " + b.name);
            }
            // the queue metrics at this scale: each partition exported once, by its primary
            // (a backend names a queue once its catalog copy has it: within sluice.catalog.refresh-ms)
            await().atMost(Duration.ofSeconds(120)).untilAsserted(() -> {
                java.util.Set<String> exported = new java.util.HashSet<>();
                StringBuilder report = new StringBuilder();
                for (LocalCluster.Member b : backends) {
                    long t0 = System.nanoTime();
                    String text = java.net.http.HttpClient.newHttpClient().send(
                            ProcessFixtures.adminRequest(java.net.URI.create("http://127.0.0.1:"
                                    + b.adminPort + "/metrics")).build(),
                            java.net.http.HttpResponse.BodyHandlers.ofString()).body();
                    long scrapeMillis = (System.nanoTime() - t0) / 1_000_000;
                    PromScrape m = new PromScrape(text);
                    List<PromScrape.Sample> sent = m.find("sluice_queue_messages_sent_total");
                    for (PromScrape.Sample x : sent) {
                        assertTrue(exported.add(x.labels().get("queue") + "/" + x.labels().get("partition")),
                                "exported twice: " + x.labels());
                    }
                    report.append(String.format("backend %s /metrics with %d queues: %d partitions exported,"
                            + " %,d samples, %,d bytes, %d ms%n", b.name, QUEUES, sent.size(), m.samples().size(),
                            text.length(), scrapeMillis));
                }
                assertEquals(QUEUES, exported.size(), "every partition exported once over the backends");
                System.out.print(report);
            });

            LocalCluster.Member restarted = backends.get(1);
            // (combined: n2, while the client talks to n1)
            cluster.stop(restarted.name);
            long restart = System.nanoTime();
            cluster.start(restarted.name);
            await().atMost(Duration.ofSeconds(120)).until(() -> restarted.hostedShards() == SHARDS);
            long millis = (System.nanoTime() - restart) / 1_000_000;
            System.out.printf("%s %s restarted with %d queues on %d shards: serving its shards after %d ms%n",
                    restarted.role, restarted.name, QUEUES, SHARDS, millis);
            assertTrue(millis < 30_000, "start-up took " + millis + " ms");
            String url = sqs.getQueueUrl(b -> b.queueName("scale-" + (QUEUES - 1))).queueUrl();
            sqs.sendMessage(b -> b.queueUrl(url).messageBody("still served"));
            assertEquals("still served", sqs.receiveMessage(b -> b.queueUrl(url).waitTimeSeconds(5))
                    .messages().get(0).body());
        }
    }
}
