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

            try (SqsClient one = SqsClients.client(URI.create(endpoints.get(0)), "sluice", "sluice-dev-secret");
                 SqsClient two = SqsClients.client(URI.create(endpoints.get(1)), "sluice", "sluice-dev-secret")) {
                String url = one.createQueue(b -> b.queueName("via-script")).queueUrl();
                one.sendMessage(b -> b.queueUrl(url).messageBody("through frontend one"));
                String body = await().atMost(Duration.ofSeconds(10)).ignoreException(QueueDoesNotExistException.class)
                        .until(() -> two.receiveMessage(b -> b.queueUrl(url).waitTimeSeconds(1)).messages(),
                                m -> !m.isEmpty()).get(0).body();
                assertEquals("through frontend one", body, "served by the other frontend");
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
