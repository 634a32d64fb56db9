package io.sluice.it;

import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** One {@code sluice backend} as a real process on loopback. */
final class BackendProcess {
    final String id;
    final int raftPort;
    final int adminPort;
    private final Path dataDir;
    private final String metadataPeers;
    private Process process;

    BackendProcess(String id, String metadataPeers) throws IOException {
        this.id = id;
        this.metadataPeers = metadataPeers;
        this.dataDir = Files.createTempDirectory(SluiceProcess.itDir(), "backend-" + id + "-");
        this.raftPort = MetadataProcess.freePort();
        this.adminPort = MetadataProcess.freePort();
    }

    void start() throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Path log = dataDir.resolveSibling(dataDir.getFileName() + ".log");
        process = new ProcessBuilder(List.of(java, "-Xmx384m", "-XX:+UseSerialGC", "-jar", SluiceProcess.jar(),
                "backend", "--node-id", id, "--metadata-peers", metadataPeers, "--raft-port", Integer.toString(raftPort),
                "--data-dir", dataDir.toString(), "--admin-port", Integer.toString(adminPort)))
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        HttpClient http = HttpClient.newHttpClient();
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100)).until(() -> {
            if (!process.isAlive()) {
                throw new IllegalStateException("backend " + id + " exited; see " + log);
            }
            try {
                return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + adminPort + "/health")).build(),
                        HttpResponse.BodyHandlers.ofString()).statusCode() == 200;
            } catch (IOException e) {
                return false;
            }
        });
    }

    /** How many shard groups this backend hosts now (from its /admin/status), -1 if it cannot answer. */
    int hostedShards() {
        try {
            var r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + adminPort
                    + "/admin/status")).build(), HttpResponse.BodyHandlers.ofString());
            return new com.fasterxml.jackson.databind.ObjectMapper().readTree(r.body()).path("hostedShards").size();
        } catch (Exception e) {
            return -1;
        }
    }

    /** Whether this backend leads the shard group {@code groupId} now. */
    boolean leads(String groupId) {
        try {
            var r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + adminPort
                    + "/admin/status")).build(), HttpResponse.BodyHandlers.ofString());
            for (var shard : new com.fasterxml.jackson.databind.ObjectMapper().readTree(r.body()).path("hostedShards")) {
                if (shard.path("groupId").asText().equals(groupId)) {
                    return shard.path("leader").asBoolean();
                }
            }
            return false;
        } catch (Exception e) {
            return false;
        }
    }

    void kill() throws InterruptedException {
        process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
    }

    void stop() throws InterruptedException {
        if (process != null && process.isAlive()) {
            process.destroy();
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                kill();
            }
        }
    }
}
