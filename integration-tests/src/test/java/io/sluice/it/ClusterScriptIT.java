package io.sluice.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.QueueDoesNotExistException;

/**
 * The {@code deploy/local/cluster.sh} contract: {@code start DIR} runs 3 metadata, 3 backend and 2 frontend
 * processes with pid files {@code DIR/<role>-<n>.pid}, prints the frontend endpoints and returns once the cluster
 * serves; {@code status} and {@code stop} do what they say.
 */
class ClusterScriptIT {
    static final Path SCRIPT = Path.of(System.getProperty("sluice.scripts", "src/test/scripts"))
            .resolve("../../../../deploy/local/cluster.sh").normalize();

    @Test
    void startServesStatusReportsStopStops() throws Exception {
        Path dir = Files.createTempDirectory(SluiceProcess.itDir(), "cluster-");
        try {
            String started = run("start", dir);
            List<String> endpoints = started.lines().filter(l -> l.startsWith("http://127.0.0.1:")).toList();
            assertEquals(2, endpoints.size(), started);
            for (String role : List.of("metadata", "backend")) {
                for (int n = 1; n <= 3; n++) {
                    assertTrue(Files.exists(dir.resolve(role + "-" + n + ".pid")), role + "-" + n);
                }
            }
            assertTrue(Files.exists(dir.resolve("frontend-2.pid")));
            // every process listens on 127.0.0.1 only (cluster.sh passes no --host): SQS, admin and Raft ports alike
            try (var pids = Files.list(dir)) {
                for (Path pidFile : pids.filter(f -> f.toString().endsWith(".pid")).toList()) {
                    java.util.Set<String> sockets = ListeningSockets.of(Long.parseLong(Files.readString(pidFile).trim()));
                    assertTrue(!sockets.isEmpty(), pidFile + " listens");
                    assertEquals(java.util.Set.of(), BindAddressIT.onOtherAddresses(sockets, "127.0.0.1"),
                            pidFile.getFileName() + " listens beyond 127.0.0.1: " + sockets);
                }
            }

            try (SqsClient one = SqsClients.client(URI.create(endpoints.get(0)), "sluice", "sluice-dev-secret");
                 SqsClient two = SqsClients.client(URI.create(endpoints.get(1)), "sluice", "sluice-dev-secret")) {
                String url = one.createQueue(b -> b.queueName("via-script")).queueUrl();
                one.sendMessage(b -> b.queueUrl(url).messageBody("through frontend one"));
                String body = await().atMost(Duration.ofSeconds(120)).ignoreException(QueueDoesNotExistException.class)
                        .until(() -> two.receiveMessage(b -> b.queueUrl(url).waitTimeSeconds(1)).messages(),
                                m -> !m.isEmpty()).get(0).body();
                assertEquals("through frontend one", body, "served by the other frontend");
                metricsAreExportedOncePerPartition(one, two, 21000);
            }
            String status = run("status", dir);
            assertTrue(status.contains("backend-3 running"), status);
            assertTrue(status.lines().anyMatch(l -> l.startsWith("metadata") && l.endsWith("leader")), status);
            assertTrue(status.contains("under-replicated partitions: 0"), status);
        } finally {
            run("stop", dir);
        }
        try (var files = Files.list(dir)) {
            assertTrue(files.noneMatch(f -> f.toString().endsWith(".pid")), "pid files removed");
        }
    }

    /**
     * Each partition's figures come from its primary only: over all 8 processes every partition of a 3-partition
     * queue is exported exactly once, the sums match what was done and what GetQueueAttributes says, frontends and
     * metadata members export none, every shard has one leader and 3 replicas in sync, and every role is ready.
     */
    private static void metricsAreExportedOncePerPartition(SqsClient one, SqsClient two, int base) throws Exception {
        String url = one.createQueue(b -> b.queueName("metered").attributesWithStrings(
                java.util.Map.of("SluicePartitions", "3"))).queueUrl();
        for (int i = 0; i < 30; i++) {
            int n = i;
            one.sendMessage(b -> b.queueUrl(url).messageBody("m" + n));
        }
        int received = 0;
        while (received < 5) {
            int want = 5 - received;
            received += two.receiveMessage(b -> b.queueUrl(url).maxNumberOfMessages(want).visibilityTimeout(600)
                    .waitTimeSeconds(1)).messages().size();
        }
        List<Integer> backends = List.of(base + 211, base + 212, base + 213);
        List<Integer> others = List.of(base + 111, base + 112, base + 113, base + 311, base + 312);
        await().atMost(Duration.ofSeconds(120)).untilAsserted(() -> {
            List<PromScrape.Sample> sent = new java.util.ArrayList<>();
            double visible = 0;
            double inflight = 0;
            java.util.Map<String, Double> leaders = new java.util.TreeMap<>();
            for (int port : backends) {
                PromScrape m = PromScrape.of(URI.create("http://127.0.0.1:" + port));
                sent.addAll(m.find("sluice_queue_messages_sent_total", "queue", "metered"));
                visible += m.sum("sluice_queue_messages", "queue", "metered", "state", "visible");
                inflight += m.sum("sluice_queue_messages", "queue", "metered", "state", "inflight");
                for (PromScrape.Sample s : m.find("sluice_shard_leader")) {
                    leaders.merge(s.labels().get("shard"), s.value(), Double::sum);
                }
                for (PromScrape.Sample s : m.find("sluice_shard_replicas")) {
                    assertEquals(3, s.value(), "replicas of " + s.labels());
                    assertEquals(3, m.sum("sluice_shard_replicas_in_sync", "shard", s.labels().get("shard")),
                            "in sync: " + s.labels());
                }
            }
            assertEquals(List.of("0", "1", "2"), sent.stream().map(s -> s.labels().get("partition")).sorted().toList(),
                    "each partition exported once");
            assertEquals(30, sent.stream().mapToDouble(PromScrape.Sample::value).sum());
            assertEquals(25, visible);
            assertEquals(5, inflight);
            assertEquals(3, leaders.size(), "shards: " + leaders);
            leaders.forEach((shard, n) -> assertEquals(1, n, "leaders of " + shard));
            for (int port : others) {
                assertTrue(PromScrape.of(URI.create("http://127.0.0.1:" + port))
                        .find("sluice_queue_messages").isEmpty(), "port " + port + " exports no partition");
            }
        });
        java.util.Map<String, String> attrs = two.getQueueAttributes(b -> b.queueUrl(url).attributeNamesWithStrings(
                "ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible")).attributesAsStrings();
        assertEquals("25", attrs.get("ApproximateNumberOfMessages"));
        assertEquals("5", attrs.get("ApproximateNumberOfMessagesNotVisible"));
        java.util.Set<String> exported = new java.util.HashSet<>();
        for (int port : List.of(base + 111, base + 211, base + 212, base + 213, base + 311)) {
            PromScrape.of(URI.create("http://127.0.0.1:" + port)).names()
                    .forEach(n -> exported.add(AlertRulesTest.baseName(n)));
        }
        for (String used : AlertRulesTest.referencedMetrics()) {
            if (used.startsWith("sluice_shard_") || used.startsWith("sluice_storage_")
                    || used.startsWith("sluice_metadata_")) {
                assertTrue(exported.contains(used), "alerts or dashboard use " + used + ", not exported by the cluster");
            }
        }
        java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
        for (int port : List.of(base + 111, base + 112, base + 113, base + 211, base + 212, base + 213, base + 311,
                base + 312)) {
            assertEquals(200, http.send(java.net.http.HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                    + "/ready")).build(), java.net.http.HttpResponse.BodyHandlers.ofString()).statusCode(), "ready " + port);
        }
    }

    private static String run(String command, Path dir) throws IOException, InterruptedException {
        return run(command, dir, 21000, java.util.Map.of());
    }

    /** Runs {@code cluster.sh COMMAND DIR} with 3 shards, the built jar and default credentials; fails if it fails. */
    static String run(String command, Path dir, int basePort, java.util.Map<String, String> env)
            throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder("bash", SCRIPT.toString(), command, dir.toString())
                .redirectErrorStream(true);
        pb.environment().put("SLUICE_JAR", SluiceProcess.jar());
        pb.environment().put("SLUICE_CLUSTER_BASE_PORT", Integer.toString(basePort));
        pb.environment().put("SLUICE_SHARDS", "3");
        pb.environment().putAll(env);
        pb.environment().remove("SLUICE_ACCESS_KEY");
        pb.environment().remove("SLUICE_SECRET_KEY");
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(180, TimeUnit.SECONDS) || (p.exitValue() != 0 && !command.equals("stop"))) {
            throw new AssertionError("cluster.sh " + command + " failed:\n" + out);
        }
        return out;
    }
}
