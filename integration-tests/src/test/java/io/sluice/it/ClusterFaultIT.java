package io.sluice.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.sluice.common.raft.RaftTransport;
import io.sluice.it.LocalCluster.Topology;
import io.sluice.metadata.image.ClusterImage;
import io.sluice.metadata.image.PartitionAssignment;
import io.sluice.metadata.raft.MetadataClient;
import io.sluice.metadata.raft.MetadataPeers;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Faults under load on the clusters of {@code deploy/local/cluster.sh}, in each topology of {@code -Dsluice.topologies}
 * (the 3/3/2 split one by default; {@code split,combined} in scripts/fault-suite.sh): producers and consumers (the
 * async load generator, every frontend) run while one process is killed with SIGKILL and then restarted: the primary
 * of the busy partition, a secondary of it, a frontend (split only: in the combined topology every node is a
 * frontend, and the node kills cover it), the metadata leader. After each, every acknowledged send has been received
 * (zero lost), and the duplicates and the unavailability window (longest time without a successful send or receive)
 * are printed. Backends snapshot every 100 entries, so restarts also go through purged logs and snapshot installs.
 * The load runs until the scenario is over (the victim restarted and the cluster serving), then
 * {@link #TAIL_SECONDS} more, at a paced 300 msg/s; no assertion is on how long the scenario took (a slow day makes
 * it slower), only on what was lost and that writes flowed again after it; every wait's ceiling that trips prints
 * the cluster's state.
 *
 * <p>It runs from {@code scripts/fault-suite.sh} ({@code -Dsluice.faults=full}) on both topologies: the primary, a
 * secondary, a frontend and the metadata leader each under its own load, and the rolling restart of every backend
 * (every node). In CI, {@link NemesisIT} kills the busy queue's primary under load (and more, at random) with a
 * history checker, {@link CombinedClusterIT} kills a combined node, and {@code MetadataClusterIT} the metadata
 * leader.
 */
@org.junit.jupiter.api.Timeout(value = 20, unit = java.util.concurrent.TimeUnit.MINUTES) // a hung cluster, not a slow one
class ClusterFaultIT {
    static final HttpClient HTTP = HttpClient.newHttpClient();
    static final List<String> report = new ArrayList<>();
    /** Seconds of load after a scenario completed: the cluster must take writes again in it. */
    static final int TAIL_SECONDS = 8;
    /** Ceiling of one wait for a hung cluster (not a slow one: these normally take seconds). */
    static final Duration CEILING = Duration.ofMinutes(3);
    /** Ceiling of a whole load run (scenario, tail and drain). */
    static final Duration LOAD_CEILING = Duration.ofMinutes(10);
    /** One cluster per topology, started by the first test that needs it and stopped after the last. */
    private static final Map<Topology, Deployment> clusters = new EnumMap<>(Topology.class);

    static Stream<Topology> topologies() {
        return LocalCluster.topologies();
    }

    /**
     * A cluster.sh cluster of one topology and how to address its processes: {@code role-n} names (its pid files),
     * admin ports by name, which of them host shards, which metadata members, which serve SQS.
     */
    record Deployment(Topology topology, Path dir, int base, List<URI> endpoints) {
        static Deployment start(Topology topology) throws IOException, InterruptedException {
            int base = topology == Topology.SPLIT ? 22000 : 24000;
            Path dir = Files.createTempDirectory(SluiceProcess.itDir(), "fault-" + topology.name().toLowerCase() + "-");
            Deployment d = new Deployment(topology, dir, base, new ArrayList<>());
            String out = d.cluster("start");
            out.lines().filter(l -> l.startsWith("http://127.0.0.1:"))
                    .forEach(l -> d.endpoints.add(URI.create(l.trim())));
            assertEquals(topology == Topology.SPLIT ? 2 : 3, d.endpoints.size(), out);
            return d;
        }

        boolean split() {
            return topology == Topology.SPLIT;
        }

        /** The processes holding shard replicas ({@code backend-n} or {@code node-n}) and their admin ports. */
        Map<String, Integer> shardHosts() {
            return processes("backend", 210);
        }

        /** The metadata members ({@code metadata-n} or {@code node-n}) and their admin ports. */
        Map<String, Integer> metadataMembers() {
            return processes("metadata", 110);
        }

        /** {@code role-n} at admin port base + offset + n when split; every {@code node-n} (B+310+n) when combined. */
        private Map<String, Integer> processes(String role, int adminOffset) {
            Map<String, Integer> ports = new LinkedHashMap<>();
            for (int n = 1; n <= 3; n++) {
                ports.put((split() ? role : "node") + "-" + n, base + (split() ? adminOffset : 310) + n);
            }
            return ports;
        }

        /** What every process of the cluster reports now: for failure messages. */
        String state() {
            if (split()) {
                return ClusterState.describe(ClusterState.clusterScriptPorts(base));
            }
            return ClusterState.describe(shardHosts());
        }

        /** A metadata client speaking the cluster's mutual TLS with the certificate of one of its processes. */
        MetadataClient metadata() {
            Path tls = dir.resolve("tls");
            String process = split() ? "frontend-1" : "node-1";
            String id = split() ? "m" : "n";
            String peers = id + "1=127.0.0.1:" + (base + 101) + "," + id + "2=127.0.0.1:" + (base + 102) + "," + id
                    + "3=127.0.0.1:" + (base + 103);
            return new MetadataClient(MetadataPeers.parse(peers), RaftTransport.mutualTls(
                    tls.resolve(process + ".pem"), tls.resolve(process + "-key.pem"), tls.resolve("ca.pem")));
        }

        String cluster(String command) throws IOException, InterruptedException {
            Map<String, String> env = new LinkedHashMap<>();
            // snapshots every 100 entries: the faults then also exercise log purging, snapshot install and restart
            env.put("SLUICE_BACKEND_SNAPSHOT_EVERY", "100");
            env.put("SLUICE_TOPOLOGY", topology.name().toLowerCase(java.util.Locale.ROOT));
            return ClusterScriptIT.run(command, dir, base, env);
        }
    }

    private static synchronized Deployment cluster(Topology topology) throws IOException, InterruptedException {
        Deployment d = clusters.get(topology);
        if (d == null) {
            d = Deployment.start(topology);
            clusters.put(topology, d);
        }
        return d;
    }

    @AfterAll
    static void stopClusters() throws Exception {
        for (Deployment d : clusters.values()) {
            d.cluster("stop");
        }
        System.out.println("fault | acknowledged | lost | duplicates | errors | longest gap send / receive");
        report.forEach(System.out::println);
    }

    @ParameterizedTest
    @MethodSource("topologies")
    @EnabledIfSystemProperty(named = "sluice.faults", matches = "full")
    void killThePrimaryOfTheBusyPartition(Topology topology) throws Exception {
        Deployment d = cluster(topology);
        faultUnderLoad(d, "primary", queue -> hostOf(d, queue, true));
    }

    @ParameterizedTest
    @MethodSource("topologies")
    @EnabledIfSystemProperty(named = "sluice.faults", matches = "full")
    void killASecondaryOfTheBusyPartition(Topology topology) throws Exception {
        Deployment d = cluster(topology);
        faultUnderLoad(d, "secondary", queue -> hostOf(d, queue, false));
    }

    @ParameterizedTest
    @MethodSource("topologies")
    @EnabledIfSystemProperty(named = "sluice.faults", matches = "full")
    void killAFrontend(Topology topology) throws Exception {
        Assumptions.assumeTrue(topology == Topology.SPLIT,
                "every combined node is a frontend: the primary, secondary and metadata leader kills cover it");
        faultUnderLoad(cluster(topology), "frontend", queue -> "frontend-1");
    }

    @ParameterizedTest
    @MethodSource("topologies")
    @EnabledIfSystemProperty(named = "sluice.faults", matches = "full")
    void killTheMetadataLeader(Topology topology) throws Exception {
        Deployment d = cluster(topology);
        faultUnderLoad(d, "metadata leader", queue -> metadataLeader(d));
    }

    /**
     * The rolling upgrade of operations.md under load: each backend (each node) in turn gets SIGTERM, is started
     * again, and the next one goes only once it is ready (/ready) and every shard has all its replicas in sync again
     * (sluice_shard_replicas_in_sync == sluice_shard_replicas). Nothing acknowledged may be lost.
     */
    @ParameterizedTest
    @MethodSource("topologies")
    @EnabledIfSystemProperty(named = "sluice.faults", matches = "full")
    void rollingRestartOfEveryBackend(Topology topology) throws Exception {
        Deployment d = cluster(topology);
        CompletableFuture<Void> rolled = new CompletableFuture<>();
        Load load = startLoad(d.endpoints(), "rolling-" + System.currentTimeMillis(), rolled, d::state);
        long started = System.currentTimeMillis();
        try {
            for (Map.Entry<String, Integer> host : d.shardHosts().entrySet()) {
                long pid = Long.parseLong(Files.readString(d.dir().resolve(host.getKey() + ".pid")).trim());
                ProcessHandle handle = ProcessHandle.of(pid).orElseThrow();
                long t0 = System.currentTimeMillis();
                new ProcessBuilder("kill", "-TERM", Long.toString(pid)).start().waitFor();
                handle.onExit().get(60, TimeUnit.SECONDS); // SIGTERM's own bound is 30 s (then it halts)
                long t1 = System.currentTimeMillis();
                d.cluster("start");
                long t2 = System.currentTimeMillis();
                ClusterState.awaitTrue(host.getKey() + " ready and every shard in sync after its restart",
                        CEILING, () -> ready(host.getValue()) && allShardsInSync(d), d::state);
                System.out.printf("rolling restart (%s): %s stopped in %d ms, serving %d ms later, in sync %d ms"
                        + " after that%n", topology, host.getKey(), t1 - t0, t2 - t1, System.currentTimeMillis() - t2);
            }
        } finally {
            rolled.complete(null); // the load runs its tail, then drains
        }
        long rollMillis = System.currentTimeMillis() - started;
        LoadGenerator.Result r = load.run().get(LOAD_CEILING.toSeconds(), TimeUnit.SECONDS);
        String line = String.format("%s: rolling restart (%d s) | %,d | %d | %d | %d | %d ms / %d ms", topology,
                rollMillis / 1000, r.acknowledged(), r.lost(), r.duplicates(), r.errors(), r.longestSendGapMillis(),
                r.longestReceiveGapMillis());
        report.add(line);
        System.out.println("fault under load: " + line + " " + load.generator().errorKinds());
        assertTrue(r.acknowledgedInTail() > 0, "the cluster took writes after the roll: " + line + d.state());
        assertEquals(0, r.lost(), "every acknowledged send was received: " + line);
    }

    private static boolean ready(int adminPort) {
        try {
            return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + adminPort + "/ready"))
                    .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString()).statusCode() == 200;
        } catch (IOException | InterruptedException e) {
            return false;
        }
    }

    /** Every shard has a leader reporting all its replicas in sync. */
    private static boolean allShardsInSync(Deployment d) throws Exception {
        Map<String, Boolean> shards = new java.util.TreeMap<>();
        for (int adminPort : d.shardHosts().values()) {
            PromScrape m = PromScrape.of(URI.create("http://127.0.0.1:" + adminPort));
            m.find("sluice_shard_leader_known").forEach(s -> shards.putIfAbsent(s.labels().get("shard"), false));
            for (PromScrape.Sample replicas : m.find("sluice_shard_replicas")) {
                String shard = replicas.labels().get("shard");
                shards.put(shard, m.sum("sluice_shard_replicas_in_sync", "shard", shard) == replicas.value());
            }
        }
        return !shards.isEmpty() && shards.values().stream().allMatch(b -> b);
    }

    /** A paced load (300 msg/s, 4 producers and 4 consumers over both frontends) running in the background. */
    record Load(LoadGenerator generator, CompletableFuture<LoadGenerator.Result> run, String queue) {
    }

    /**
     * The fault tests' load (also {@link CombinedClusterIT}'s) on queue {@code queue} over {@code endpoints}; returns
     * once messages flow in its measured window ({@code state} describes the cluster if they never do). The load
     * lasts until {@code scenarioDone} completes, then {@link #TAIL_SECONDS} more, then drains: it covers the whole
     * scenario however long a slow day makes it.
     */
    static Load startLoad(List<URI> endpoints, String queue, CompletableFuture<?> scenarioDone,
                          java.util.function.Supplier<String> state) {
        LoadGenerator.Options o = new LoadGenerator.Options();
        o.endpoints.addAll(endpoints);
        o.warmupSeconds = 3;
        o.seconds = TAIL_SECONDS;
        o.until = scenarioDone;
        o.untilCeilingSeconds = (int) LOAD_CEILING.toSeconds();
        o.producers = 4;
        o.consumers = 4;
        o.rate = 300;
        o.visibilitySeconds = 5; // a lease whose answer died with a process comes back soon
        o.drainSeconds = 120;
        o.queueName = queue;
        LoadGenerator generator = new LoadGenerator(o);
        CompletableFuture<LoadGenerator.Result> run = CompletableFuture.supplyAsync(() -> {
            try {
                return generator.run();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        ClusterState.awaitTrue("messages flowing through the cluster", CEILING,
                () -> generator.receivedInWindow() > 300 || run.isDone(), state);
        return new Load(generator, run, o.queueName);
    }

    interface Target {
        /** The process to kill ({@code role-n}), chosen once the load queue exists. */
        String choose(String queue) throws Exception;
    }

    /** Under one load run, kills the target (SIGKILL, 3 s down, restarted and serving again). */
    private void faultUnderLoad(Deployment d, String fault, Target target) throws Exception {
        CompletableFuture<Void> recovered = new CompletableFuture<>();
        Load load = startLoad(d.endpoints(), "fault-" + fault.replaceAll("[ ,]+", "-") + "-" + System.currentTimeMillis(),
                recovered, d::state);
        String victim;
        try {
            victim = target.choose(load.queue());
            long pid = Long.parseLong(Files.readString(d.dir().resolve(victim + ".pid")).trim());
            ProcessHandle handle = ProcessHandle.of(pid).orElseThrow();
            new ProcessBuilder("kill", "-9", Long.toString(pid)).start().waitFor();
            handle.onExit().get(30, TimeUnit.SECONDS);
            Thread.sleep(3_000); // the outage itself: down for 3 s before it is started again
            d.cluster("start"); // relaunches what is down, returns once the cluster serves again
        } finally {
            recovered.complete(null); // the load runs its tail, then drains
        }

        LoadGenerator.Result r = load.run().get(LOAD_CEILING.toSeconds(), TimeUnit.SECONDS);
        String line = String.format("%s: %s (%s) | %,d | %d | %d | %d | %d ms / %d ms", d.topology(), fault, victim,
                r.acknowledged(), r.lost(), r.duplicates(), r.errors(), r.longestSendGapMillis(),
                r.longestReceiveGapMillis());
        report.add(line);
        System.out.println("fault under load: " + line + " " + load.generator().errorKinds());
        assertTrue(r.acknowledgedInTail() > 0, "the cluster took writes after the restart: " + line + d.state());
        assertEquals(0, r.lost(), "every acknowledged send was received: " + line);
    }

    /** The process leading (or following in) the shard that holds the queue's partition 0, waiting for one. */
    private static String hostOf(Deployment d, String queue, boolean leader) throws Exception {
        String group = groupOf(d, queue);
        return ClusterState.await((leader ? "the primary of " : "a secondary of ") + queue, CEILING,
                () -> hostWith(d, group, leader), h -> h != null, d::state);
    }

    private static String groupOf(Deployment d, String queue) {
        try (MetadataClient metadata = d.metadata()) {
            ClusterImage image = metadata.fetchImage();
            long queueId = image.queues().get(queue).queueId();
            String shardId = image.partitions().get(PartitionAssignment.key(queueId, 0)).shardId();
            return image.shards().get(shardId).groupId();
        }
    }

    /** The process hosting {@code group} as its leader (or as a follower); null if none now. */
    private static String hostWith(Deployment d, String group, boolean leader) {
        for (Map.Entry<String, Integer> host : d.shardHosts().entrySet()) {
            JsonNode status = status(host.getValue());
            if (status == null) {
                continue;
            }
            for (JsonNode shard : status.path("hostedShards")) {
                if (shard.path("groupId").asText().equals(group) && shard.path("leader").asBoolean() == leader) {
                    return host.getKey();
                }
            }
        }
        return null;
    }

    private static String metadataLeader(Deployment d) {
        return ClusterState.await("the metadata leader", CEILING, () -> {
            for (Map.Entry<String, Integer> member : d.metadataMembers().entrySet()) {
                JsonNode status = status(member.getValue());
                if (status != null) {
                    for (JsonNode m : status.path("metadata")) {
                        if (m.path("role").asText().equals("leader")) {
                            String n = m.path("id").asText().substring(1);
                            return (d.split() ? "metadata-" : "node-") + n;
                        }
                    }
                }
            }
            return null;
        }, m -> m != null, d::state);
    }

    /** A process's {@code /admin/status}, or null when it does not answer. */
    static JsonNode status(int adminPort) {
        return LocalCluster.status(URI.create("http://127.0.0.1:" + adminPort));
    }
}
