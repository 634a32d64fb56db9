package io.sluice.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.common.raft.RaftTransport;
import io.sluice.metadata.image.ClusterImage;
import io.sluice.metadata.image.MetadataCommand;
import io.sluice.metadata.image.PartitionAssignment;
import io.sluice.metadata.image.ShardInfo;
import io.sluice.metadata.raft.MetadataClient;
import io.sluice.metadata.raft.MetadataPeers;
import io.sluice.metadata.raft.MetadataUnavailableException;
import io.sluice.partition.CommandCodec;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionId;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.util.TimeDuration;
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
                metricsAreExportedOncePerPartition(one, two, 21000, readToken(dir));
            }
            raftPortsRequireTheClusterCertificate(dir, 21000);
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
     * {@code SLUICE_NETNS=1}: each process on a host of its own (here the combined topology: three nodes). Each binds
     * only its host's address; the endpoints printed are those addresses; the frontends' secret is made in
     * DIR/secret-key (the documented placeholder is refused beyond loopback); a node cut off from the others
     * ({@code netns.sh isolate}) turns not ready and ready again after the heal; {@code stop} removes the hosts, also
     * after the processes were killed.
     */
    @Test
    void onHostsEachProcessHasAnAddressOfItsOwn() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(Hosts.wanted(), "network namespaces need root");
        Path dir = Files.createTempDirectory(SluiceProcess.itDir(), "cluster-ns-");
        java.util.Map<String, String> env = java.util.Map.of("SLUICE_NETNS", "1", "SLUICE_TOPOLOGY", "combined");
        Path netns = SCRIPT.resolveSibling("netns.sh");
        try {
            String started = run("start", dir, 24000, env);
            List<String> endpoints = started.lines().filter(l -> l.startsWith("http://10.231.240.")).toList();
            assertEquals(3, endpoints.size(), started);
            assertEquals("240", Files.readString(dir.resolve("netns")).strip());
            for (int n = 1; n <= 3; n++) {
                String host = "10.231.240." + (10 + n);
                long pid = Long.parseLong(Files.readString(dir.resolve("node-" + n + ".pid")).trim());
                java.util.Set<String> sockets = ListeningSockets.of(pid);
                assertEquals(4, sockets.size(), "SQS, admin, metadata and shard Raft ports: " + sockets);
                assertEquals(java.util.Set.of(), BindAddressIT.onOtherAddresses(sockets, host),
                        "node-" + n + " listens beyond its host's address");
            }
            String secret = Files.readString(dir.resolve("secret-key")).strip();
            assertEquals("rw-------", java.nio.file.attribute.PosixFilePermissions.toString(
                    Files.getPosixFilePermissions(dir.resolve("secret-key"))));
            try (SqsClient one = SqsClients.client(URI.create(endpoints.get(0)), "sluice", secret);
                 SqsClient two = SqsClients.client(URI.create(endpoints.get(1)), "sluice", secret)) {
                String url = one.createQueue(b -> b.queueName("on-hosts")).queueUrl();
                one.sendMessage(b -> b.queueUrl(url).messageBody("from host one"));
                assertEquals("from host one", await().atMost(Duration.ofSeconds(60))
                        .until(() -> two.receiveMessage(b -> b.queueUrl(url).waitTimeSeconds(1)).messages(),
                                m -> !m.isEmpty()).get(0).body());
            }
            URI ready = URI.create("http://10.231.240.13:24313/ready");
            exec("bash", netns.toString(), "isolate", "240", "node-3");
            await("node-3 not ready once cut off").atMost(Duration.ofSeconds(20)).until(() -> status(ready) == 503);
            exec("bash", netns.toString(), "heal", "240");
            await("node-3 ready after the heal").atMost(Duration.ofSeconds(60)).until(() -> status(ready) == 200);
            // a crash: the processes die, the hosts stay; stop removes them all the same
            for (int n = 1; n <= 3; n++) {
                exec("kill", "-9", Files.readString(dir.resolve("node-" + n + ".pid")).trim());
            }
        } finally {
            run("stop", dir, 24000, env);
        }
        assertTrue(exec("ip", "netns", "list").lines().noneMatch(l -> l.startsWith("sluice-240-")), "hosts removed");
        assertTrue(!Files.exists(dir.resolve("netns")));
    }

    private static int status(URI uri) {
        try {
            return java.net.http.HttpClient.newHttpClient().send(java.net.http.HttpRequest.newBuilder(uri)
                    .timeout(Duration.ofSeconds(5)).build(), java.net.http.HttpResponse.BodyHandlers.discarding())
                    .statusCode();
        } catch (IOException | InterruptedException e) {
            return -1;
        }
    }

    private static String exec(String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new AssertionError(String.join(" ", command) + " failed: " + out);
        }
        return out;
    }

    /**
     * Each partition's figures come from its primary only: over all 8 processes every partition of a 3-partition
     * queue is exported exactly once, the sums match what was done and what GetQueueAttributes says, frontends and
     * metadata members export none, every shard has one leader and 3 replicas in sync, and every role is ready.
     */
    /**
     * The read token cluster.sh made (owner-only): what Prometheus needs for /metrics, which answers 401 without it.
     */
    private static String readToken(Path dir) throws Exception {
        Path file = dir.resolve("read-token");
        assertEquals(java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"),
                Files.getPosixFilePermissions(file), "the read token is owner-only");
        java.net.http.HttpResponse<String> anonymous = java.net.http.HttpClient.newHttpClient().send(
                java.net.http.HttpRequest.newBuilder(URI.create("http://127.0.0.1:21211/metrics")).build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
        assertEquals(401, anonymous.statusCode(), "a cluster's /metrics needs a token: " + anonymous.body());
        return Files.readString(file).trim();
    }

    private static void metricsAreExportedOncePerPartition(SqsClient one, SqsClient two, int base, String token)
            throws Exception {
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
                PromScrape m = PromScrape.of(URI.create("http://127.0.0.1:" + port), token);
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
                assertTrue(PromScrape.of(URI.create("http://127.0.0.1:" + port), token)
                        .find("sluice_queue_messages").isEmpty(), "port " + port + " exports no partition");
            }
        });
        java.util.Map<String, String> attrs = two.getQueueAttributes(b -> b.queueUrl(url).attributeNamesWithStrings(
                "ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible")).attributesAsStrings();
        assertEquals("25", attrs.get("ApproximateNumberOfMessages"));
        assertEquals("5", attrs.get("ApproximateNumberOfMessagesNotVisible"));
        java.util.Set<String> exported = new java.util.HashSet<>();
        for (int port : List.of(base + 111, base + 211, base + 212, base + 213, base + 311)) {
            PromScrape.of(URI.create("http://127.0.0.1:" + port), token).names()
                    .forEach(n -> exported.add(AlertRulesTest.baseName(n)));
        }
        for (String used : AlertRulesTest.referencedMetrics()) {
            if (used.startsWith("sluice_shard_") || used.startsWith("sluice_storage_")
                    || used.startsWith("sluice_metadata_") || used.startsWith("sluice_clock_")) {
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

    /**
     * cluster.sh runs Raft over mutual TLS under a CA it made in DIR/tls. A client holding one of its certificates can
     * read and write the metadata group and a shard group; the same calls fail without a certificate (plaintext), with
     * a certificate from another CA for the same address, and with such a certificate while trusting the cluster's
     * CA. A backend with a foreign certificate never joins: it is never registered.
     */
    private static void raftPortsRequireTheClusterCertificate(Path dir, int base) throws Exception {
        Path tls = dir.resolve("tls");
        Path foreignDir = dir.resolve("foreign-tls");
        Process make = new ProcessBuilder("bash", SCRIPT.resolveSibling("../tls/make-certs.sh").normalize().toString(),
                foreignDir.toString(), "intruder=IP:127.0.0.1,DNS:localhost").redirectErrorStream(true).start();
        String made = new String(make.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(make.waitFor(60, TimeUnit.SECONDS) && make.exitValue() == 0, "make-certs.sh: " + made);
        RaftTransport member = clusterTransport(dir);
        java.util.Map<String, RaftTransport> intruders = new java.util.LinkedHashMap<>();
        intruders.put("plaintext", RaftTransport.PLAINTEXT);
        intruders.put("foreign CA", RaftTransport.mutualTls(foreignDir.resolve("intruder.pem"),
                foreignDir.resolve("intruder-key.pem"), foreignDir.resolve("ca.pem")));
        intruders.put("foreign certificate, cluster CA trusted", RaftTransport.mutualTls(
                foreignDir.resolve("intruder.pem"), foreignDir.resolve("intruder-key.pem"), tls.resolve("ca.pem")));
        String peersSpec = "m1=127.0.0.1:" + (base + 101) + ",m2=127.0.0.1:" + (base + 102) + ",m3=127.0.0.1:"
                + (base + 103);
        MetadataPeers peers = MetadataPeers.parse(peersSpec);

        ClusterImage image;
        try (MetadataClient control = metadataClient(peers, member)) {
            image = control.fetchImage();
            control.submit(new MetadataCommand.SetAccessKey("raft-probe-member", "probe-secret", List.of()));
        }
        PartitionAssignment partition = image.partitions().values().stream().filter(a -> a.shardId() != null)
                .findFirst().orElseThrow(() -> new AssertionError("a partition on a shard: " + image.partitions()));
        ShardInfo shard = image.shards().get(partition.shardId());
        List<RaftPeer> replicas = shard.replicas().stream().map(r -> RaftPeer.newBuilder().setId(r)
                .setAddress(image.nodes().get(r).address()).build()).toList();
        RaftGroup shardGroup = RaftGroup.valueOf(RaftGroupId.valueOf(java.util.UUID.fromString(shard.groupId())),
                replicas);
        // a harmless command (a retention sweep of one existing partition) and a read (pending dead letters)
        Message sweep = Message.valueOf(ByteString.copyFrom(CommandCodec.encode(List.of(new CommandCodec.Addressed(
                new PartitionId(partition.queueId(), partition.index()), new PartitionCommand.Expire(1))))));
        Message read = Message.valueOf(ByteString.copyFrom(new byte[] {5})); // ShardQueries.PENDING_DEAD_LETTERS
        assertTrue(shardCall(member, shardGroup, c -> c.io().send(sweep)), "a member submits to the shard");
        assertTrue(shardCall(member, shardGroup, c -> c.io().sendReadOnly(read)), "a member reads the shard");

        for (java.util.Map.Entry<String, RaftTransport> intruder : intruders.entrySet()) {
            String who = intruder.getKey();
            try (MetadataClient c = metadataClient(peers, intruder.getValue())) {
                assertThrows(MetadataUnavailableException.class, c::fetchImage, who + ": reads the catalog");
                assertThrows(MetadataUnavailableException.class, () -> c.submit(new MetadataCommand.SetAccessKey(
                        "raft-probe-" + who.replace(' ', '-'), "probe-secret", List.of())), who + ": writes the catalog");
            }
            assertFalse(shardCall(intruder.getValue(), shardGroup, c -> c.io().send(sweep)), who + ": submits to a shard");
            assertFalse(shardCall(intruder.getValue(), shardGroup, c -> c.io().sendReadOnly(read)), who + ": reads a shard");
        }
        try (MetadataClient control = metadataClient(peers, member)) {
            assertEquals(java.util.Set.of("raft-probe-member"), control.fetchImage().accessKeys().keySet().stream()
                    .filter(k -> k.startsWith("raft-probe-")).collect(java.util.stream.Collectors.toSet()),
                    "only the member's write reached the catalog");
        }

        // a backend with a foreign certificate starts, and never registers (so never joins a shard)
        Path intruderDir = dir.resolve("intruder-backend");
        Files.createDirectories(intruderDir);
        int adminPort = base + 251;
        Process intruder = ProcessFixtures.launch(List.of("-Xmx256m", "-XX:+UseSerialGC"), List.of("backend",
                        "--node-id", "intruder", "--metadata-peers", peersSpec,
                        "--raft-port", Integer.toString(base + 250), "--data-dir", intruderDir.resolve("data").toString(),
                        "--admin-port", Integer.toString(adminPort)), intruderDir.resolve("backend.log"),
                java.util.Map.of("SLUICE_CLUSTER_TLS_CERT_FILE", foreignDir.resolve("intruder.pem").toString(),
                        "SLUICE_CLUSTER_TLS_KEY_FILE", foreignDir.resolve("intruder-key.pem").toString(),
                        "SLUICE_CLUSTER_TLS_CA_FILE", foreignDir.resolve("ca.pem").toString()));
        try {
            ProcessFixtures.awaitHealthy(intruder, adminPort, intruderDir.resolve("backend.log"), "intruder backend");
            try (MetadataClient control = metadataClient(peers, member)) {
                await().during(Duration.ofSeconds(10)).atMost(Duration.ofSeconds(60)).until(
                        () -> !control.fetchImage().nodes().containsKey("intruder") && intruder.isAlive());
            }
            // it did try: its log says the group is out of its reach
            await().atMost(Duration.ofSeconds(60)).until(() -> Files.readString(intruderDir.resolve("backend.log"))
                    .contains("metadata group unavailable"));
        } finally {
            intruder.destroy();
            if (!intruder.waitFor(30, TimeUnit.SECONDS)) {
                intruder.destroyForcibly();
            }
        }
    }

    /** How a test reaches the Raft ports of a cluster.sh cluster in {@code dir}: as frontend-1, with its certificate. */
    static RaftTransport clusterTransport(Path dir) {
        Path tls = dir.resolve("tls");
        return RaftTransport.mutualTls(tls.resolve("frontend-1.pem"), tls.resolve("frontend-1-key.pem"),
                tls.resolve("ca.pem"));
    }

    private static MetadataClient metadataClient(MetadataPeers peers, RaftTransport transport) {
        return new MetadataClient(peers, transport, RetryPolicies.retryUpToMaximumCountWithFixedSleep(4,
                TimeDuration.valueOf(250, TimeUnit.MILLISECONDS)));
    }

    private interface ShardCall {
        RaftClientReply call(RaftClient client) throws IOException;
    }

    /** Whether {@code call} succeeds through a client of {@code transport} (a few retries: a leader may move). */
    private static boolean shardCall(RaftTransport transport, RaftGroup group, ShardCall call) {
        try (RaftClient client = transport.client(group).setRetryPolicy(RetryPolicies.retryUpToMaximumCountWithFixedSleep(
                4, TimeDuration.valueOf(250, TimeUnit.MILLISECONDS))).build()) {
            return call.call(client).isSuccess();
        } catch (IOException e) {
            return false;
        }
    }

    /** This test's own runs: cluster.sh makes its read token itself. */
    private static String run(String command, Path dir) throws IOException, InterruptedException {
        return script(command, dir, 21000, java.util.Map.of());
    }

    /**
     * Runs {@code cluster.sh COMMAND DIR} with 3 shards, the built jar and default credentials; fails if it fails. The
     * cluster's read token (DIR/read-token, which cluster.sh keeps when it exists) is the fixtures' own, so the tests'
     * status and scrape helpers read it as they read every other process they start.
     */
    static String run(String command, Path dir, int basePort, java.util.Map<String, String> env)
            throws IOException, InterruptedException {
        Path token = dir.resolve("read-token");
        if (!Files.exists(token)) {
            Files.createFile(token, java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
                    java.nio.file.attribute.PosixFilePermissions.fromString("rw-------")));
            Files.writeString(token, ProcessFixtures.READ_TOKEN);
        }
        return script(command, dir, basePort, env);
    }

    private static String script(String command, Path dir, int basePort, java.util.Map<String, String> env)
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
