package io.sluice.it;

import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sluice.testing.Ports;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** One {@code sluice metadata} member as a real process; {@link Group} runs three of them on loopback. */
final class MetadataProcess {
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    final String id;
    final Path dataDir;
    final int adminPort;
    private final String peers;
    private final Map<String, String> env;
    private Process process;

    private MetadataProcess(String id, String peers, Path dataDir, int adminPort, Map<String, String> env) {
        this.id = id;
        this.peers = peers;
        this.dataDir = dataDir;
        this.adminPort = adminPort;
        this.env = env;
    }

    void start() throws IOException {
        Path log = dataDir.resolveSibling(dataDir.getFileName() + ".log");
        process = ProcessFixtures.launch(List.of("-Xmx256m", "-XX:+UseSerialGC"), List.of("metadata", "--node-id", id,
                "--peers", peers, "--data-dir", dataDir.toString(), "--admin-port", Integer.toString(adminPort)), log, env);
        ProcessFixtures.awaitHealthy(process, adminPort, log, "metadata " + id);
    }

    URI adminUri(String path) {
        return URI.create("http://127.0.0.1:" + adminPort + path);
    }

    /** This member's /admin/status, or null if it cannot answer. */
    JsonNode status() {
        try {
            HttpResponse<String> r = HTTP.send(ProcessFixtures.adminRequest(adminUri("/admin/status"))
                    .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
            return r.statusCode() == 200 ? new ObjectMapper().readTree(r.body()) : null;
        } catch (Exception e) {
            return null;
        }
    }

    boolean isLeader() {
        JsonNode s = status();
        if (s == null) {
            return false;
        }
        for (JsonNode m : s.path("metadata")) {
            if (m.path("id").asText().equals(id)) {
                return m.path("role").asText().equals("leader");
            }
        }
        return false;
    }

    void kill() throws InterruptedException {
        ProcessFixtures.kill(process);
    }

    void stop() throws InterruptedException {
        ProcessFixtures.stop(process);
    }

    /** A one-member metadata group on free loopback ports (not started), with {@code env} as its configuration. */
    static MetadataProcess single(String name, Map<String, String> env) throws IOException {
        Path base = Files.createTempDirectory(SluiceProcess.itDir(), name + "-");
        return new MetadataProcess("m1", "m1=127.0.0.1:" + Ports.free(), base.resolve("m1"), Ports.free(), env);
    }

    /** Its log (output of the process). */
    Path log() {
        return dataDir.resolveSibling(dataDir.getFileName() + ".log");
    }

    /** Three members on free loopback ports. */
    static final class Group implements AutoCloseable {
        final Map<String, MetadataProcess> members = new LinkedHashMap<>();
        final String peers;

        Group(String name) throws IOException {
            this(name, Map.of());
        }

        /** @param env configuration for every member, as SLUICE_... variables */
        Group(String name, Map<String, String> env) throws IOException {
            Path base = Files.createTempDirectory(SluiceProcess.itDir(), name + "-");
            Map<String, Integer> raftPorts = new LinkedHashMap<>();
            for (int i = 1; i <= 3; i++) {
                raftPorts.put("m" + i, Ports.free());
            }
            List<String> parts = new ArrayList<>();
            raftPorts.forEach((id, port) -> parts.add(id + "=127.0.0.1:" + port));
            peers = String.join(",", parts);
            for (String id : raftPorts.keySet()) {
                members.put(id, new MetadataProcess(id, peers, base.resolve(id), Ports.free(), env));
            }
        }

        void startAll() throws IOException {
            for (MetadataProcess m : members.values()) {
                m.start();
            }
        }

        MetadataProcess awaitLeader() {
            await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(100))
                    .until(() -> members.values().stream().anyMatch(MetadataProcess::isLeader));
            return members.values().stream().filter(MetadataProcess::isLeader).findFirst().orElseThrow();
        }

        @Override
        public void close() throws InterruptedException {
            for (MetadataProcess m : members.values()) {
                m.stop();
            }
        }
    }
}
