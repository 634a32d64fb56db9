package io.sluice.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.sluice.metadata.image.ClusterImage;
import io.sluice.metadata.image.PartitionAssignment;
import io.sluice.metadata.raft.MetadataClient;
import io.sluice.metadata.raft.MetadataPeers;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.QueueDoesNotExistException;

/**
 * The combined topology of {@code deploy/local/cluster.sh} ({@code SLUICE_TOPOLOGY=combined}): three processes, each a
 * metadata member, a backend and an SQS frontend ({@code sluice node}). The script's contract (pid files
 * {@code DIR/node-<n>.pid}, one SQS URL per node, loopback only), a message sent through one node and received
 * through another, every node's status naming the metadata members and its shards, and a fault under load: the node
 * leading the busy partition's shard (so also a frontend the load uses, a metadata member and a secondary of other
 * shards) killed with SIGKILL and restarted loses nothing acknowledged, and the cluster takes writes again after.
 */
@org.junit.jupiter.api.Timeout(value = 15, unit = TimeUnit.MINUTES) // a hung cluster, not a slow one
class CombinedClusterIT {
    static final int BASE = 23000;
    static final Duration CEILING = Duration.ofMinutes(3);
    static final String PEERS = "n1=127.0.0.1:" + (BASE + 101) + ",n2=127.0.0.1:" + (BASE + 102) + ",n3=127.0.0.1:"
            + (BASE + 103);

    @Test
    void threeCombinedNodesServeAndAKilledNodeLosesNothing() throws Exception {
        Path dir = Files.createTempDirectory(SluiceProcess.itDir(), "combined-");
        try {
            String started = cluster("start", dir);
            List<URI> endpoints = started.lines().filter(l -> l.startsWith("http://127.0.0.1:"))
                    .map(l -> URI.create(l.trim())).toList();
            assertEquals(3, endpoints.size(), started);
            for (int n = 1; n <= 3; n++) {
                Path pidFile = dir.resolve("node-" + n + ".pid");
                assertTrue(Files.exists(pidFile), "node-" + n + ".pid");
                java.util.Set<String> sockets = ListeningSockets.of(Long.parseLong(Files.readString(pidFile).trim()));
                // SQS, admin, metadata Raft and shard Raft ports: four doors, each on the address it was given
                assertTrue(sockets.size() >= 4, "node-" + n + " listens on its four ports: " + sockets);
                assertEquals(java.util.Set.of(), BindAddressIT.onOtherAddresses(sockets, "127.0.0.1"),
                        "node-" + n + " listens beyond 127.0.0.1: " + sockets);
            }
            try (var files = Files.list(dir)) {
                assertEquals(3, files.filter(f -> f.toString().endsWith(".pid")).count(), "three processes");
            }

            try (SqsClient one = SqsClients.client(endpoints.get(0), "sluice", "sluice-dev-secret");
                 SqsClient three = SqsClients.client(endpoints.get(2), "sluice", "sluice-dev-secret")) {
                String url = one.createQueue(b -> b.queueName("via-node-one")).queueUrl();
                one.sendMessage(b -> b.queueUrl(url).messageBody("through node one"));
                String body = await().atMost(Duration.ofSeconds(120)).ignoreException(QueueDoesNotExistException.class)
                        .until(() -> three.receiveMessage(b -> b.queueUrl(url).waitTimeSeconds(1)).messages(),
                                m -> !m.isEmpty()).get(0).body();
                assertEquals("through node one", body, "served by another node");
            }
            // the console of another node lists it with its counts (one ALL_COUNTS read per shard, summed there): the
            // message received above is in flight
            String console = "http://127.0.0.1:" + (BASE + 312);
            String session = ConsoleSession.signIn(console, java.util.Map.of("access_key", "sluice", "secret_key",
                    "sluice-dev-secret"));
            await().atMost(Duration.ofSeconds(30)).until(() -> ConsoleSession.get(console,
                    "/console/live/queues?filter=via-node-one", session).body()
                    .contains("<td class=\"num\">0</td><td class=\"num\">1</td>"));
            // a cluster's frontend takes signatures scoped to its own region only (sluice dev takes any)
            try (SqsClient elsewhere = SqsClient.builder().endpointOverride(endpoints.get(1))
                    .region(software.amazon.awssdk.regions.Region.EU_WEST_1)
                    .credentialsProvider(software.amazon.awssdk.auth.credentials.StaticCredentialsProvider.create(
                            software.amazon.awssdk.auth.credentials.AwsBasicCredentials.create("sluice",
                                    "sluice-dev-secret")))
                    .httpClient(software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient.create()).build()) {
                var refused = org.junit.jupiter.api.Assertions.assertThrows(
                        software.amazon.awssdk.services.sqs.model.SqsException.class, () -> elsewhere.listQueues());
                assertEquals("SignatureDoesNotMatch", refused.awsErrorDetails().errorCode(), refused.toString());
            }
            for (int n = 1; n <= 3; n++) {
                JsonNode status = status(BASE + 310 + n);
                assertEquals(3, status.path("metadata").size(), "node-" + n + " names the metadata members");
                assertEquals("n" + n, status.path("node").asText());
                assertEquals(3, status.path("hostedShards").size(), "node-" + n + " hosts every shard (R = 3)");
            }

            faultUnderLoad(dir, endpoints);

            String status = cluster("status", dir);
            assertTrue(status.contains("node-3 running"), status);
            assertTrue(status.contains("under-replicated partitions: 0"), status);
        } finally {
            cluster("stop", dir);
        }
    }

    /** Paced load over all three nodes; the primary node of its queue killed (SIGKILL), down 3 s, restarted. */
    private static void faultUnderLoad(Path dir, List<URI> endpoints) throws Exception {
        CompletableFuture<Void> recovered = new CompletableFuture<>();
        String victim;
        ClusterFaultIT.Load load = ClusterFaultIT.startLoad(endpoints, "combined-fault-" + System.currentTimeMillis(),
                recovered, CombinedClusterIT::state);
        try {
            // a read of the catalog, repeated while the busy machine (three nodes and the load) lets it time out
            String group = ClusterState.await("the shard group of " + load.queue(), CEILING,
                    () -> groupOf(dir, load.queue()), g -> g != null, CombinedClusterIT::state);
            victim = ClusterState.await("the primary node of " + load.queue(), CEILING, () -> leaderOf(group),
                    v -> v != null, CombinedClusterIT::state);
            long pid = Long.parseLong(Files.readString(dir.resolve(victim + ".pid")).trim());
            ProcessHandle handle = ProcessHandle.of(pid).orElseThrow();
            new ProcessBuilder("kill", "-9", Long.toString(pid)).start().waitFor();
            handle.onExit().get(30, TimeUnit.SECONDS);
            Thread.sleep(3_000);
            cluster("start", dir); // relaunches the node, returns once every node hosts its shards again
        } finally {
            recovered.complete(null);
        }
        LoadGenerator.Result r = load.run().get(10, TimeUnit.MINUTES);
        String line = String.format("combined node %s | %,d | %d | %d | %d | %d ms / %d ms", victim, r.acknowledged(),
                r.lost(), r.duplicates(), r.errors(), r.longestSendGapMillis(), r.longestReceiveGapMillis());
        System.out.println("fault under load: " + line + " " + load.generator().errorKinds());
        assertTrue(r.acknowledgedInTail() > 0, "the cluster took writes after the restart: " + line + state());
        assertEquals(0, r.lost(), "every acknowledged send was received: " + line);
    }

    private static String groupOf(Path dir, String queue) {
        Path tls = dir.resolve("tls"); // a node's certificate: the cluster's CA made one per node
        try (MetadataClient metadata = new MetadataClient(MetadataPeers.parse(PEERS), io.sluice.common.raft.RaftTransport
                .mutualTls(tls.resolve("node-1.pem"), tls.resolve("node-1-key.pem"), tls.resolve("ca.pem")))) {
            ClusterImage image = metadata.fetchImage();
            long queueId = image.queues().get(queue).queueId();
            String shardId = image.partitions().get(PartitionAssignment.key(queueId, 0)).shardId();
            return image.shards().get(shardId).groupId();
        }
    }

    /** The node ({@code node-n}) leading {@code group}; null if none does now. */
    private static String leaderOf(String group) {
        for (int n = 1; n <= 3; n++) {
            JsonNode status = status(BASE + 310 + n);
            if (status == null) {
                continue;
            }
            for (JsonNode shard : status.path("hostedShards")) {
                if (shard.path("groupId").asText().equals(group) && shard.path("leader").asBoolean()) {
                    return "node-" + n;
                }
            }
        }
        return null;
    }

    private static String state() {
        Map<String, Integer> ports = new LinkedHashMap<>();
        for (int n = 1; n <= 3; n++) {
            ports.put("node-" + n, BASE + 310 + n);
        }
        return ClusterState.describe(ports);
    }

    private static JsonNode status(int adminPort) {
        return ClusterFaultIT.status(adminPort);
    }

    private static String cluster(String command, Path dir) throws IOException, InterruptedException {
        // snapshots every 100 entries: the fault also exercises log purging, snapshot install and restart; the
        // script's JVM flags for a combined node, plus the tests' class archive (ClusterScriptIT runs its defaults)
        List<String> jvm = new ArrayList<>(ClassArchive.jvmOptions());
        jvm.addAll(List.of("-Xmx1g", "-XX:+UseSerialGC"));
        return ClusterScriptIT.run(command, dir, BASE, Map.of("SLUICE_TOPOLOGY", "combined",
                "SLUICE_BACKEND_SNAPSHOT_EVERY", "100", "SLUICE_JAVA_OPTS", String.join(" ", jvm)));
    }
}
