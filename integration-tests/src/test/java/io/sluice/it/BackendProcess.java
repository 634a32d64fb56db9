package io.sluice.it;


import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** One {@code sluice backend} as a real process on loopback. */
final class BackendProcess {
    final String id;
    final int raftPort;
    final int adminPort;
    private final Path dataDir;
    private final String metadataPeers;
    private final List<String> extraArgs;
    private java.util.Map<String, String> env = java.util.Map.of();
    private Process process;

    BackendProcess(String id, String metadataPeers, String... extraArgs) throws IOException {
        this.id = id;
        this.metadataPeers = metadataPeers;
        this.extraArgs = List.of(extraArgs);
        this.dataDir = Files.createTempDirectory(SluiceProcess.itDir(), "backend-" + id + "-");
        this.raftPort = MetadataProcess.freePort();
        this.adminPort = MetadataProcess.freePort();
    }

    /** Environment (configuration keys as SLUICE_...) for its next start. */
    BackendProcess withEnv(java.util.Map<String, String> env) {
        this.env = java.util.Map.copyOf(env);
        return this;
    }

    /** Starts backends {@code b<from>..b<to>} of the metadata group {@code peers}, adding each to {@code into}. */
    static void startNumbered(List<BackendProcess> into, String peers, int from, int to) throws IOException {
        for (int i = from; i <= to; i++) {
            BackendProcess b = new BackendProcess("b" + i, peers);
            into.add(b); // before start: the caller's finally stops it even if its start fails
            b.start();
        }
    }

    void start() throws IOException {
        Path log = dataDir.resolveSibling(dataDir.getFileName() + ".log");
        List<String> args = new java.util.ArrayList<>(List.of("backend", "--node-id", id, "--metadata-peers",
                metadataPeers, "--raft-port", Integer.toString(raftPort), "--data-dir", dataDir.toString(),
                "--admin-port", Integer.toString(adminPort)));
        args.addAll(extraArgs);
        process = ProcessFixtures.launch(List.of("-Xmx384m", "-XX:+UseSerialGC"), args, log, env);
        ProcessFixtures.awaitHealthy(process, adminPort, log, "backend " + id);
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
        return hostedShard(groupId).path("leader").asBoolean();
    }

    /** Partitions of the shard group this replica stores that are not retired (-1 if it has none of the group). */
    int livePartitions(String groupId) {
        return hostedShard(groupId).path("livePartitions").asInt(-1);
    }

    /** This backend's status line of a hosted shard group (missing if it does not host it, or is unreachable). */
    private com.fasterxml.jackson.databind.JsonNode hostedShard(String groupId) {
        try {
            var r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + adminPort
                    + "/admin/status")).build(), HttpResponse.BodyHandlers.ofString());
            for (var shard : new com.fasterxml.jackson.databind.ObjectMapper().readTree(r.body()).path("hostedShards")) {
                if (shard.path("groupId").asText().equals(groupId)) {
                    return shard;
                }
            }
            return com.fasterxml.jackson.databind.node.MissingNode.getInstance();
        } catch (Exception e) {
            return com.fasterxml.jackson.databind.node.MissingNode.getInstance();
        }
    }

    /** Deletes everything in its data folder (the process must be stopped): a lost disk. */
    void wipeData() throws IOException {
        try (var walk = Files.walk(dataDir)) {
            for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                if (!p.equals(dataDir)) {
                    Files.delete(p);
                }
            }
        }
    }

    /** Its {@code GET /ready} status code, or -1 if it cannot answer. */
    int readyStatus() {
        try {
            return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + adminPort
                    + "/ready")).build(), HttpResponse.BodyHandlers.ofString()).statusCode();
        } catch (Exception e) {
            return -1;
        }
    }

    void kill() throws InterruptedException {
        ProcessFixtures.kill(process);
    }

    void stop() throws InterruptedException {
        ProcessFixtures.stop(process);
    }
}
