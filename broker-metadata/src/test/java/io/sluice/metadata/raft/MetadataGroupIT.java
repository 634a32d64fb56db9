package io.sluice.metadata.raft;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.catalog.QueueCatalog;
import io.sluice.common.SystemClock;
import io.sluice.metadata.image.ClusterImage;
import io.sluice.metadata.image.MetadataCommand;
import io.sluice.metadata.image.PartitionAssignment;
import io.sluice.metadata.image.PartitionLoad;
import io.sluice.metadata.image.ShardReport;
import io.sluice.testing.Ports;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A 3-member metadata group of real Ratis servers talking gRPC on loopback: catalog changes survive the leader's loss
 * and a full restart, placement is balanced, a dead backend's partitions are re-replicated, caches converge.
 */
class MetadataGroupIT {
    static final long DEAD_AFTER_MILLIS = 2_000;

    @TempDir
    Path dir;
    final Map<String, MetadataServer> servers = new LinkedHashMap<>();
    final List<AutoCloseable> closeables = new ArrayList<>();
    MetadataPeers peers;
    SplitPolicy.Settings autoSplit = SplitPolicy.Settings.DISABLED;

    @AfterEach
    void closeAll() throws Exception {
        for (AutoCloseable c : closeables) {
            c.close();
        }
        servers.values().forEach(MetadataServer::close);
    }

    void startGroup(int snapshotEvery) throws IOException {
        Map<String, String> addresses = new LinkedHashMap<>();
        for (int i = 1; i <= 3; i++) {
            addresses.put("m" + i, "127.0.0.1:" + Ports.free());
        }
        peers = new MetadataPeers(addresses);
        for (String id : addresses.keySet()) {
            start(id, snapshotEvery);
        }
    }

    MetadataServer start(String id, int snapshotEvery) throws IOException {
        MetadataServer s = new MetadataServer(id, peers, dir.resolve(id), SystemClock.INSTANCE, 3, DEAD_AFTER_MILLIS,
                snapshotEvery);
        s.autoSplit(autoSplit);
        s.start();
        servers.put(id, s);
        return s;
    }

    MetadataClient client() {
        MetadataClient c = new MetadataClient(peers);
        closeables.add(c);
        return c;
    }

    String awaitLeader() {
        await().atMost(Duration.ofSeconds(120)).until(() -> servers.values().stream().anyMatch(MetadataServer::isLeader));
        return servers.values().stream().filter(MetadataServer::isLeader).findFirst().orElseThrow().nodeId();
    }

    @Test
    void catalogChangesSurviveLeaderLossAndAFullRestart() throws Exception {
        startGroup(5);
        MetadataClient client = client();
        CachedCatalog catalog = new CachedCatalog(client, 1000);
        closeables.add(catalog);
        for (int i = 0; i < 8; i++) {
            catalog.create("q" + i, false, Map.of("VisibilityTimeout", "30"), Map.of("n", "" + i), 1, 0);
        }
        catalog.setAttributes("q1", Map.of("VisibilityTimeout", "99"), 0);
        catalog.setTags("q2", Map.of("team", "x"));
        catalog.delete("q3", 0);

        String leader = awaitLeader();
        servers.remove(leader).close();
        long start = System.nanoTime();
        catalog.create("after-failover", false, Map.of(), Map.of(), 1, 0);
        long failoverMillis = (System.nanoTime() - start) / 1_000_000;
        System.out.printf("metadata leader %s stopped: next write committed after %d ms%n", leader, failoverMillis);
        assertTrue(failoverMillis < 15_000, "writes resumed after " + failoverMillis + " ms");

        ClusterImage before = catalog.refresh();
        assertEquals("99", before.queues().get("q1").attributes().get("VisibilityTimeout"));
        assertEquals(Map.of("team", "x"), before.queues().get("q2").tags());
        assertFalse(before.queues().containsKey("q3"));
        assertTrue(before.queues().containsKey("after-failover"));

        start(leader, 5); // the old leader comes back and catches up (log or snapshot)
        await().atMost(Duration.ofSeconds(120)).until(() -> servers.get(leader).image().queues().equals(before.queues()));

        for (String id : List.copyOf(servers.keySet())) {
            servers.remove(id).close();
        }
        for (String id : peers.addresses().keySet()) {
            start(id, 5);
        }
        awaitLeader();
        ClusterImage afterRestart = catalog.refresh();
        assertEquals(before.queues(), afterRestart.queues(), "a full restart recovers the same catalog");
        assertEquals(before.nextQueueId(), afterRestart.nextQueueId());
        assertTrue(Files.walk(dir).anyMatch(p -> p.getFileName().toString().startsWith("snapshot.")),
                "snapshots were taken");
    }

    @Test
    void twelvePartitionsAreBalancedAndADeadBackendIsReplaced() throws Exception {
        startGroup(1000);
        MetadataClient client = client();
        List<String> backends = List.of("b1", "b2", "b3", "b4");
        for (String b : backends) {
            client.submit(new MetadataCommand.RegisterNode(b, "127.0.0.1:1"));
        }
        List<String> beating = new java.util.concurrent.CopyOnWriteArrayList<>(backends);
        ScheduledExecutorService heartbeats = Executors.newSingleThreadScheduledExecutor();
        closeables.add(heartbeats::shutdownNow);
        heartbeats.scheduleWithFixedDelay(() -> beating.forEach(b -> {
            try {
                client.heartbeat(b);
            } catch (RuntimeException e) {
                // the next beat will do
            }
        }), 0, 200, TimeUnit.MILLISECONDS);
        await().atMost(Duration.ofSeconds(120)).until(() -> backends.stream().allMatch(b ->
                servers.values().stream().anyMatch(s -> s.isLeader() && s.lastHeartbeatMillis(b) > 0)));

        for (int q = 0; q < 4; q++) {
            client.submit(new MetadataCommand.CreateQueue("p" + q, false, Map.of(), Map.of(), 3));
        }
        ClusterImage image = client.fetchImage();
        assertEquals(12, image.partitions().size());
        Map<String, Integer> load = image.replicasPerNode();
        double average = 12 * 3 / 4.0;
        load.values().forEach(n -> assertTrue(n <= average + 1, "unbalanced: " + load));
        System.out.println("replicas per backend: " + load);

        beating.remove("b4");
        long stopped = System.nanoTime();
        await().atMost(Duration.ofSeconds(120)).until(() -> client.fetchImage().partitions().values().stream()
                .noneMatch(a -> a.replicas().contains("b4")));
        System.out.printf("backend b4 silent: re-replicated after %d ms (grace %d ms)%n",
                (System.nanoTime() - stopped) / 1_000_000, DEAD_AFTER_MILLIS);
        for (PartitionAssignment a : client.fetchImage().partitions().values()) {
            assertEquals(3, a.replicas().stream().distinct().count(), a.toString());
        }
    }

    @Test
    void aQueueDeletedThroughOneCacheDisappearsFromAnotherWithinItsRefreshBound() throws Exception {
        startGroup(1000);
        CachedCatalog a = new CachedCatalog(client(), 300);
        CachedCatalog b = new CachedCatalog(client(), 300);
        closeables.add(a);
        closeables.add(b);
        assertTrue(a.create("shared", false, Map.of(), Map.of(), 1, 0) instanceof QueueCatalog.Created);
        await().atMost(Duration.ofSeconds(120)).until(() -> b.get("shared").isPresent());
        long start = System.nanoTime();
        assertNotNull(a.delete("shared", 0).orElseThrow());
        assertTrue(a.get("shared").isEmpty(), "the writer reads its own write at once");
        await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(20)).until(() -> b.get("shared").isEmpty());
        long millis = (System.nanoTime() - start) / 1_000_000;
        System.out.printf("delete visible on the other frontend after %d ms (refresh 300 ms)%n", millis);
        assertTrue(millis < 300 + 1_000, "within the refresh bound plus one fetch: " + millis + " ms");
        MetadataClient c = client();
        assertEquals(c.fetchImage().appliedIndex(), c.imageIndex(), "what a cache asks before it fetches the image");
        await().atMost(Duration.ofSeconds(30)).until(() -> b.image().appliedIndex() == c.imageIndex());
    }

    @Test
    void cachesFollowTheCatalogThroughDeltasAndEndEqualToTheLeadersImage() throws Exception {
        startGroup(1000);
        MetadataClient client = client();
        CachedCatalog writer = new CachedCatalog(client(), 60_000);
        CachedCatalog frontend = new CachedCatalog(client(), 60_000); // refreshed by hand below
        CachedCatalog backend = new CachedCatalog(client(), 60_000, false);
        closeables.add(writer);
        closeables.add(frontend);
        closeables.add(backend);
        writer.create("before", false, Map.of(), Map.of(), 1, 0);
        frontend.refresh();
        backend.refresh();
        assertEquals(1, frontend.imageFetches());
        for (int i = 0; i < 20; i++) {
            writer.create("q" + i, false, Map.of(), Map.of("n", Integer.toString(i)), 1, 0);
        }
        writer.setAttributes("q1", Map.of("VisibilityTimeout", "99"), 0);
        writer.delete("q3", 0);
        client.submit(new MetadataCommand.SetAccessKey("AKIDDELTAS", "delta-secret", List.of()));

        ClusterImage caughtUp = frontend.refresh();
        assertEquals(1, frontend.imageFetches(), "no second whole image");
        assertEquals(1, frontend.deltaFetches());
        assertEquals(client.fetchImage(), caughtUp, "the delta replayed gives the leader's image");
        assertTrue(caughtUp.accessKeys().containsKey("AKIDDELTAS"));
        ClusterImage secretless = backend.refresh();
        assertEquals(1, backend.deltaFetches());
        assertEquals(client.fetchImageWithoutSecrets(), secretless);
        assertTrue(secretless.accessKeys().isEmpty(), "a backend's copy never holds a secret");
    }

    @Test
    void loadsReportedWithHeartbeatsSplitAHotQueueOnTheLeader() throws Exception {
        autoSplit = new SplitPolicy.Settings(true, 100, 0, 5_000, 4, 600_000);
        startGroup(1000);
        MetadataClient client = client();
        client.submit(new MetadataCommand.RegisterNode("b1", "127.0.0.1:1"));
        client.submit(new MetadataCommand.CreateQueue("hot", false, Map.of(), Map.of(), 1));
        client.submit(new MetadataCommand.CreateQueue("calm", false, Map.of(), Map.of(), 1));
        long hot = client.fetchImage().queues().get("hot").queueId();
        long calm = client.fetchImage().queues().get("calm").queueId();
        long start = System.nanoTime();
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500)).until(() -> {
            long seconds = (System.nanoTime() - start) / 1_000_000_000;
            // what a backend leading both partitions reports: 500 sends/s on one, 50/s on the other
            client.heartbeat("b1", List.of(new PartitionLoad(hot, 0, 500 * seconds, 0, 0),
                    new PartitionLoad(calm, 0, 50 * seconds, 0, 0)));
            return client.fetchImage().queues().get("hot").partitions() == 2;
        });
        System.out.printf("a hot queue split %d s after its loads were first reported%n",
                (System.nanoTime() - start) / 1_000_000_000);
        assertEquals(1, client.fetchImage().queues().get("calm").partitions(), "50 sends/s is under the threshold");
        assertEquals(1, servers.values().stream().mapToLong(MetadataServer::splits).sum(), "the leader split once");
        assertEquals(2, client.fetchImage().partitionsOf(hot).size(), "the new partition is placed");
    }

    @Test
    void shardReportsSentWithHeartbeatsAreAnsweredByTheLeader() throws Exception {
        startGroup(1000);
        MetadataClient client = client();
        client.submit(new MetadataCommand.RegisterNode("b1", "127.0.0.1:1"));
        client.submit(new MetadataCommand.RegisterNode("b2", "127.0.0.1:2"));
        ShardReport s1 = new ShardReport("shard-1", "b1", List.of("b1", "b2"), 1, Map.of("b2", 1_234L), true, 99, 0);
        LeaderHealth health = await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(200)).until(() -> {
            client.heartbeat("b1", List.of(), List.of(s1));
            client.heartbeat("b2", List.of());
            return client.health();
        }, h -> h.alive().equals(java.util.Set.of("b1", "b2")) && h.shards().size() == 1);
        String leader = servers.values().stream().filter(MetadataServer::isLeader).findFirst().orElseThrow().nodeId();
        assertEquals(leader, health.leader(), "the answer names the metadata leader");
        ShardReport got = health.shards().get(0);
        assertEquals(s1.withAge(got.ageMillis()), got, "the report as sent");
        assertTrue(got.ageMillis() < 6_000, "a report younger than its 6 s: " + got.ageMillis());
        // b1 reports leading no shard: its report leaves at once
        client.heartbeat("b1", List.of(), List.of());
        assertTrue(client.health().shards().isEmpty());
    }

    @Test
    void aQueueCreatedThroughOneCacheIsFoundAtOnceThroughAnother() throws Exception {
        startGroup(1000);
        CachedCatalog a = new CachedCatalog(client(), 60_000);
        CachedCatalog b = new CachedCatalog(client(), 60_000); // periodic refresh far away: only a read-through helps
        closeables.add(a);
        closeables.add(b);
        b.refresh();
        assertTrue(b.get("fresh").isEmpty());
        assertTrue(a.create("fresh", false, Map.of(), Map.of(), 1, 0) instanceof QueueCatalog.Created);
        assertTrue(b.get("fresh").isPresent(), "a miss asks the group before answering QueueDoesNotExist");
    }
}
