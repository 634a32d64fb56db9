package io.sluice.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
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
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Faults under load on the 3/3/2 cluster of {@code deploy/local/cluster.sh}: producers and consumers (the async load
 * generator, both frontends) run while one process is killed with SIGKILL and then restarted: the primary of the
 * busy partition, a secondary of it, a frontend, the metadata leader. After each, every acknowledged send has been
 * received (zero lost), and the duplicates and the unavailability window (longest time without a successful send
 * or receive) are printed. Backends snapshot every 100 entries, so restarts also go through purged logs and
 * snapshot installs. The load runs until the scenario is over (the victim restarted and the cluster serving), then
 * {@link #TAIL_SECONDS} more, at a paced 300 msg/s; no assertion is on how long the scenario took (a slow day makes
 * it slower), only on what was lost and that writes flowed again after it; every wait's ceiling that trips prints
 * the cluster's state.
 *
 * <p>Two forms. CI runs the bounded one: the primary's kill (and, in {@link CombinedClusterIT}, the kill of a combined
 * node, which takes a primary, secondaries of other shards, a frontend and a metadata member down at once; the
 * metadata leader's loss under traffic is CI's in {@code MetadataClusterIT}). {@code scripts/fault-suite.sh} runs the
 * full one ({@code -Dsluice.faults=full}): the primary, a secondary, a frontend and the metadata leader each under
 * its own load, and the rolling restart of every backend.
 */
@org.junit.jupiter.api.Timeout(value = 20, unit = java.util.concurrent.TimeUnit.MINUTES) // a hung cluster, not a slow one
class ClusterFaultIT {
    static final int BASE = 22000;
    static final String PEERS = "m1=127.0.0.1:" + (BASE + 101) + ",m2=127.0.0.1:" + (BASE + 102) + ",m3=127.0.0.1:"
            + (BASE + 103);
    static final HttpClient HTTP = HttpClient.newHttpClient();
    static Path dir;
    static List<URI> endpoints = new ArrayList<>();
    static final List<String> report = new ArrayList<>();
    /** Seconds of load after a scenario completed: the cluster must take writes again in it. */
    static final int TAIL_SECONDS = 8;
    /** Ceiling of one wait for a hung cluster (not a slow one: these normally take seconds). */
    static final Duration CEILING = Duration.ofMinutes(3);
    /** Ceiling of a whole load run (scenario, tail and drain). */
    static final Duration LOAD_CEILING = Duration.ofMinutes(10);

    @BeforeAll
    static void startCluster() throws Exception {
        dir = Files.createTempDirectory(SluiceProcess.itDir(), "fault-");
        String out = cluster("start");
        out.lines().filter(l -> l.startsWith("http://127.0.0.1:")).forEach(l -> endpoints.add(URI.create(l.trim())));
        assertEquals(2, endpoints.size(), out);
    }

    @AfterAll
    static void stopCluster() throws Exception {
        cluster("stop");
        System.out.println("fault | acknowledged | lost | duplicates | errors | longest gap send / receive");
        report.forEach(System.out::println);
    }

    @Test
    void killThePrimaryOfTheBusyPartition() throws Exception {
        faultUnderLoad("primary", this::primaryOf);
    }

    @Test
    @EnabledIfSystemProperty(named = "sluice.faults", matches = "full")
    void killASecondaryOfTheBusyPartition() throws Exception {
        faultUnderLoad("secondary", this::secondaryOf);
    }

    @Test
    @EnabledIfSystemProperty(named = "sluice.faults", matches = "full")
    void killAFrontend() throws Exception {
        faultUnderLoad("frontend", queue -> "frontend-1");
    }

    @Test
    @EnabledIfSystemProperty(named = "sluice.faults", matches = "full")
    void killTheMetadataLeader() throws Exception {
        faultUnderLoad("metadata leader", queue -> metadataLeader());
    }

    /**
     * The rolling upgrade of operations.md under load: each backend in turn gets SIGTERM, is started again, and the
     * next one goes only once it is ready (/ready) and every shard has all its replicas in sync again
     * (sluice_shard_replicas_in_sync == sluice_shard_replicas). Nothing acknowledged may be lost.
     */
    @Test
    @EnabledIfSystemProperty(named = "sluice.faults", matches = "full")
    void rollingRestartOfEveryBackend() throws Exception {
        CompletableFuture<Void> rolled = new CompletableFuture<>();
        Load load = startLoad("rolling", rolled);
        long started = System.currentTimeMillis();
        try {
            for (int n = 1; n <= 3; n++) {
                long pid = Long.parseLong(Files.readString(dir.resolve("backend-" + n + ".pid")).trim());
                ProcessHandle handle = ProcessHandle.of(pid).orElseThrow();
                long t0 = System.currentTimeMillis();
                new ProcessBuilder("kill", "-TERM", Long.toString(pid)).start().waitFor();
                handle.onExit().get(60, TimeUnit.SECONDS); // SIGTERM's own bound is 30 s (then it halts)
                long t1 = System.currentTimeMillis();
                cluster("start");
                long t2 = System.currentTimeMillis();
                int adminPort = BASE + 210 + n;
                ClusterState.awaitTrue("backend-" + n + " ready and every shard in sync after its restart",
                        CEILING, () -> ready(adminPort) && allShardsInSync(), ClusterFaultIT::state);
                System.out.printf("rolling restart: backend-%d stopped in %d ms, serving %d ms later, in sync %d ms"
                        + " after that%n", n, t1 - t0, t2 - t1, System.currentTimeMillis() - t2);
            }
        } finally {
            rolled.complete(null); // the load runs its tail, then drains
        }
        long rollMillis = System.currentTimeMillis() - started;
        LoadGenerator.Result r = load.run().get(LOAD_CEILING.toSeconds(), TimeUnit.SECONDS);
        String line = String.format("rolling restart (%d s) | %,d | %d | %d | %d | %d ms / %d ms", rollMillis / 1000,
                r.acknowledged(), r.lost(), r.duplicates(), r.errors(), r.longestSendGapMillis(),
                r.longestReceiveGapMillis());
        report.add(line);
        System.out.println("fault under load: " + line + " " + load.generator().errorKinds());
        assertTrue(r.acknowledgedInTail() > 0, "the cluster took writes after the roll: " + line + state());
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
    private static boolean allShardsInSync() throws Exception {
        java.util.Map<String, Boolean> shards = new java.util.TreeMap<>();
        for (int n = 1; n <= 3; n++) {
            PromScrape m = PromScrape.of(URI.create("http://127.0.0.1:" + (BASE + 210 + n)));
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
     * Starts the load on a new queue and returns once messages flow in its measured window. The load lasts until
     * {@code scenarioDone} completes, then {@link #TAIL_SECONDS} more, then drains: it covers the whole scenario
     * however long a slow day makes it.
     */
    private static Load startLoad(String queuePrefix, CompletableFuture<?> scenarioDone) {
        return startLoad(endpoints, queuePrefix + "-" + System.currentTimeMillis(), scenarioDone, ClusterFaultIT::state);
    }

    /**
     * The fault tests' load (also {@link CombinedClusterIT}'s) on queue {@code queue} over {@code endpoints}; returns
     * once messages flow in its measured window ({@code state} describes the cluster if they never do).
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

    /** Under one load run, kills each target in turn (SIGKILL, 3 s down, restarted and serving before the next). */
    private void faultUnderLoad(String fault, Target... targets) throws Exception {
        CompletableFuture<Void> recovered = new CompletableFuture<>();
        Load load = startLoad("fault-" + fault.replaceAll("[ ,]+", "-"), recovered);
        List<String> victims = new ArrayList<>();
        try {
            for (Target target : targets) {
                String victim = target.choose(load.queue());
                victims.add(victim);
                long pid = Long.parseLong(Files.readString(dir.resolve(victim + ".pid")).trim());
                ProcessHandle handle = ProcessHandle.of(pid).orElseThrow();
                new ProcessBuilder("kill", "-9", Long.toString(pid)).start().waitFor();
                handle.onExit().get(30, TimeUnit.SECONDS);
                Thread.sleep(3_000); // the outage itself: down for 3 s before it is started again
                cluster("start"); // relaunches what is down, returns once the cluster serves again
            }
        } finally {
            recovered.complete(null); // the load runs its tail, then drains
        }
        String victim = String.join(", ", victims);

        LoadGenerator.Result r = load.run().get(LOAD_CEILING.toSeconds(), TimeUnit.SECONDS);
        String line = String.format("%s (%s) | %,d | %d | %d | %d | %d ms / %d ms", fault, victim, r.acknowledged(),
                r.lost(), r.duplicates(), r.errors(), r.longestSendGapMillis(), r.longestReceiveGapMillis());
        report.add(line);
        System.out.println("fault under load: " + line + " " + load.generator().errorKinds());
        assertTrue(r.acknowledgedInTail() > 0, "the cluster took writes after the restart: " + line + state());
        assertEquals(0, r.lost(), "every acknowledged send was received: " + line);
    }

    /** What every process of the cluster reports now: for failure messages. */
    private static String state() {
        return ClusterState.describe(ClusterState.clusterScriptPorts(BASE));
    }

    /** The backend leading the shard that holds the queue's partition: its primary. */
    private String primaryOf(String queue) throws Exception {
        String group = groupOf(queue);
        return ClusterState.await("the primary of " + queue, CEILING, () -> backendWith(group, true), b -> b != null,
                ClusterFaultIT::state);
    }

    private String secondaryOf(String queue) throws Exception {
        String group = groupOf(queue);
        return ClusterState.await("a secondary of " + queue, CEILING, () -> backendWith(group, false), b -> b != null,
                ClusterFaultIT::state);
    }

    private static String groupOf(String queue) throws Exception {
        try (MetadataClient metadata = new MetadataClient(MetadataPeers.parse(PEERS),
                ClusterScriptIT.clusterTransport(dir))) {
            ClusterImage image = metadata.fetchImage();
            long queueId = image.queues().get(queue).queueId();
            String shardId = image.partitions().get(PartitionAssignment.key(queueId, 0)).shardId();
            return image.shards().get(shardId).groupId();
        }
    }

    /** The backend ({@code backend-n}) hosting {@code group} as its leader (or as a follower); null if none now. */
    private static String backendWith(String group, boolean leader) {
        for (int n = 1; n <= 3; n++) {
            JsonNode status = status(BASE + 210 + n);
            if (status == null) {
                continue;
            }
            for (JsonNode shard : status.path("hostedShards")) {
                if (shard.path("groupId").asText().equals(group) && shard.path("leader").asBoolean() == leader) {
                    return "backend-" + n;
                }
            }
        }
        return null;
    }

    private static String metadataLeader() {
        return ClusterState.await("the metadata leader", CEILING, () -> {
            for (int n = 1; n <= 3; n++) {
                JsonNode status = status(BASE + 110 + n);
                if (status != null) {
                    for (JsonNode m : status.path("metadata")) {
                        if (m.path("role").asText().equals("leader")) {
                            return "metadata-" + m.path("id").asText().substring(1);
                        }
                    }
                }
            }
            return null;
        }, m -> m != null, ClusterFaultIT::state);
    }

    /** A process's {@code /admin/status}, or null when it does not answer. */
    static JsonNode status(int adminPort) {
        return LocalCluster.status(adminPort);
    }

    private static String cluster(String command) throws IOException, InterruptedException {
        // snapshots every 100 entries: the faults then also exercise log purging, snapshot install and restart
        return ClusterScriptIT.run(command, dir, BASE, java.util.Map.of("SLUICE_BACKEND_SNAPSHOT_EVERY", "100"));
    }
}
