package io.sluice.it;

import io.sluice.partition.PartitionOutcome;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.backend.raft.ShardClient;
import io.sluice.metadata.image.ClusterImage;
import io.sluice.metadata.image.ShardInfo;
import io.sluice.metadata.raft.MetadataClient;
import io.sluice.metadata.raft.MetadataPeers;
import io.sluice.partition.NewMessage;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionConfig;
import io.sluice.partition.PartitionId;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.junit.jupiter.api.Test;

/**
 * Real processes: 3 metadata members configured for 4 shards and 3 backends. The metadata leader creates the shards
 * once the backends are alive, each backend joins its shard groups, and a shard then takes writes through Raft;
 * after SIGKILL of one of its backends it still has everything acknowledged and keeps taking writes.
 */
class ShardedBackendsIT {
    /** Ceiling of one wait: for a hung cluster, not a slow one (these normally take seconds). */
    static final Duration CEILING = Duration.ofMinutes(3);

    /**
     * Full form only ({@code scripts/fault-suite.sh}): in CI a shard's loss of its leader is {@code ClusterEndToEndIT}'s,
     * of its primary under load {@code ClusterFaultIT}'s and of a whole combined node {@code CombinedClusterIT}'s, and
     * every cluster test has backends join their shards.
     */
    @Test
    @org.junit.jupiter.api.condition.EnabledIfSystemProperty(named = "sluice.faults", matches = "full")
    void backendsJoinTheirShardsAndAShardSurvivesLosingABackend() throws Exception {
        long starting = System.nanoTime();
        try (LocalCluster cluster = LocalCluster.split("sharded", 4, 3, 0, Map.of());
             MetadataClient metadata = new MetadataClient(MetadataPeers.parse(cluster.metadataPeers))) {
            List<LocalCluster.Member> backends = cluster.backends();
            System.out.printf("3 metadata members and 3 backends started, 4 shards x 3 replicas hosted, in %d ms%n",
                    (System.nanoTime() - starting) / 1_000_000);
            ClusterImage image = metadata.fetchImage();
            image.shards().values().forEach(s -> assertEquals(3, s.replicas().size(), s.toString()));
            // leadership balancing: each shard's leader hands the leadership to the shard's first replica once it
            // answers steadily, and the first replicas rotate over the backends, so every backend ends up primary of
            // some shard
            ClusterState.awaitTrue("each shard led by its first replica", CEILING, () -> image.shards().values()
                    .stream().allMatch(s -> backends.stream().filter(b -> b.name.equals(s.replicas().get(0)))
                            .findFirst().orElseThrow().leads(s.groupId())), cluster::state);
            for (LocalCluster.Member b : backends) {
                long led = image.shards().values().stream().filter(s -> b.leads(s.groupId())).count();
                System.out.printf("backend %s leads %d of 4 shards%n", b.name, led);
                org.junit.jupiter.api.Assertions.assertTrue(led >= 1, b.name + " leads a shard");
            }
            ShardInfo s1 = image.shards().get("s1");
            PartitionId p = new PartitionId(1, 0);
            try (ShardClient shard = new ShardClient(group(image, s1), 64, 2, Runnable::run)) {
                long start = System.nanoTime();
                ClusterState.awaitTrue("shard s1 serving a first write", CEILING, () -> shard.submit(p,
                        new PartitionCommand.Configure(PartitionConfig.STANDARD_DEFAULTS)).get(10, TimeUnit.SECONDS)
                        != null, cluster::state);
                System.out.printf("shard s1 served its first write %d ms after the shards were assigned%n",
                        (System.nanoTime() - start) / 1_000_000);
                shard.submit(p, new PartitionCommand.Send(List.of(NewMessage.of("a", "before"))))
                        .get(30, TimeUnit.SECONDS);

                ClusterState.awaitTrue("a leader of s1", CEILING, () -> backends.stream()
                        .anyMatch(b -> b.leads(s1.groupId())), cluster::state);
                LocalCluster.Member leader = backends.stream().filter(b -> b.leads(s1.groupId())).findFirst().orElseThrow();
                String victim = leader.name;
                cluster.kill(leader.name);
                long killed = System.nanoTime();
                awaitCommits(shard, p, "s1 after its leader's kill", cluster::state);
                commit(shard, p, new PartitionCommand.Send(List.of(NewMessage.of("b", "after"))),
                        "a write after the leader's kill", cluster::state);
                System.out.printf("shard s1's leader %s killed (SIGKILL): it committed again after %d ms%n", victim,
                        (System.nanoTime() - killed) / 1_000_000);
                PartitionOutcome got = shard.submit(p, new PartitionCommand.Receive(10, 60, null))
                        .get(30, TimeUnit.SECONDS);
                assertEquals(List.of("before", "after"), got.delivered().stream().map(d -> d.message().body()).toList());
            }
        }
    }

    /**
     * A dead replica replaced in the catalog is replaced in Raft too: the shard's leader changes the group's members,
     * the newcomer is caught up and counts toward the majority. Proof: after the swap, a second original replica is
     * killed; the shard still commits and still has every acknowledged message (the new member makes the majority).
     */
    @Test
    void aReplicaReplacedInTheCatalogIsReplacedInRaft() throws Exception {
        try (LocalCluster cluster = LocalCluster.split("replace", 1, 4, 1, Map.of("SLUICE_BACKEND_DEAD_AFTER_MS",
                "2000"));
             MetadataClient metadata = new MetadataClient(MetadataPeers.parse(cluster.metadataPeers))) {
            List<LocalCluster.Member> backends = cluster.backends();
            ClusterState.awaitTrue("shard s1 in the catalog", CEILING, () -> metadata.fetchImage().shards().size() == 1,
                    cluster::state);
            ShardInfo before = metadata.fetchImage().shards().get("s1");
            ClusterState.awaitTrue("s1's replicas hosting it", CEILING, () -> backends.stream()
                    .filter(b -> before.replicas().contains(b.name)).allMatch(b -> b.hostedShards() == 1),
                    cluster::state);
            PartitionId p = new PartitionId(1, 0);
            // The preferred leader (first replica) is handed the leadership once it answers steadily; until then
            // another replica may lead. Wait for it before writing: a leader handing over refuses writes meanwhile
            // (LeaderSteppingDownException, which this raw shard client does not retry), and a follower chosen below
            // while a stand-in leads could be the preferred leader, so killing it would be a failover, not the
            // replacement this test is about.
            LocalCluster.Member leader = backends.stream().filter(b -> b.name.equals(before.replicas().get(0)))
                    .findFirst().orElseThrow();
            ClusterState.awaitTrue("s1 led by its preferred leader " + leader.name, CEILING,
                    () -> leader.leads(before.groupId()), cluster::state);
            try (ShardClient shard = new ShardClient(group(metadata.fetchImage(), before), 64, 2, Runnable::run)) {
                commit(shard, p, new PartitionCommand.Configure(PartitionConfig.STANDARD_DEFAULTS), "configure",
                        cluster::state);
                for (int i = 0; i < 50; i++) {
                    shard.submit(p, new PartitionCommand.Send(List.of(NewMessage.of("m" + i, "body " + i))))
                            .get(30, TimeUnit.SECONDS);
                }
            }
            ClusterState.awaitTrue("s1 still led by its preferred leader " + leader.name, CEILING,
                    () -> leader.leads(before.groupId()), cluster::state);
            List<LocalCluster.Member> followers = backends.stream()
                    .filter(b -> before.replicas().contains(b.name) && b != leader).toList();
            consoleShowsShard(cluster, leader.name, "3 / 3", "settled");
            cluster.kill(followers.get(0).name);
            long killed = System.nanoTime();
            ShardInfo after = ClusterState.await(followers.get(0).name + " replaced in the catalog", CEILING,
                    () -> metadata.fetchImage().shards().get("s1"), s -> !s.replicas().contains(followers.get(0).name),
                    cluster::state);
            String newcomer = after.replicas().stream().filter(r -> !before.replicas().contains(r)).findFirst()
                    .orElseThrow();
            LocalCluster.Member fresh = backends.stream().filter(b -> b.name.equals(newcomer)).findFirst().orElseThrow();
            ClusterState.awaitTrue(newcomer + " hosting s1", CEILING, () -> fresh.hostedShards() == 1,
                    cluster::state);
            System.out.printf("replica %s replaced by %s in the catalog and joined the group %d ms after the kill%n",
                    followers.get(0).name, newcomer, (System.nanoTime() - killed) / 1_000_000);
            consoleShowsDead(cluster, followers.get(0).name);
            // the leader changes the members on its next agent tick and the newcomer catches up: wait for its gauges
            ClusterState.awaitTrue("s1's members changed and in sync (the leader's gauges)", CEILING,
                    () -> membershipSettled(leader, 3), cluster::state);

            cluster.kill(followers.get(1).name); // now only the leader and the newcomer are up: a majority only if it is a member
            try (ShardClient shard = new ShardClient(group(metadata.fetchImage(), after), 64, 2, Runnable::run)) {
                awaitCommits(shard, p, "s1 with only the leader and the newcomer up", cluster::state);
                commit(shard, p, new PartitionCommand.Send(List.of(NewMessage.of("late", "after the swap"))),
                        "a write with only the leader and the newcomer up", cluster::state);
                assertEquals(51, receiveUpTo(shard, p, 51),
                        "every acknowledged message, committed by the leader and the newcomer");
            }
            consoleShowsShard(cluster, leader.name, "2 / 3", "settled"); // a member down, not yet replaced
        }
    }

    /**
     * The frontend's console shows shard s1 led by {@code leader} with {@code inSync} members in sync: the shard's
     * leader reports it with its heartbeats to the metadata leader, from which the frontend fetches it.
     */
    private static void consoleShowsShard(LocalCluster cluster, String leader, String inSync, String membership)
            throws Exception {
        String console = "http://127.0.0.1:" + cluster.frontends().get(0).adminPort;
        String session = ConsoleSession.signIn(console, Map.of("access_key", SluiceProcess.ACCESS_KEY, "secret_key",
                SluiceProcess.SECRET_KEY));
        java.util.regex.Pattern row = java.util.regex.Pattern.compile("<tr><td>s1</td><td class=\"num\">\\d+</td>"
                + "<td>[^<]*</td><td class=\"leader\">" + leader + "</td><td class=\"num [a-z]+ in-sync\">" + inSync
                + "</td><td>[^<]*</td><td class=\"[a-z ]*membership\">" + membership + "</td></tr>");
        ClusterState.awaitTrue("s1 led by " + leader + ", " + inSync + " in sync, " + membership
                + " on the console's cluster page", CEILING, () -> row.matcher(
                ConsoleSession.get(console, "/console/cluster", session).body()).find(), cluster::state);
        String status = SluiceProcess.runCli("admin", "status", "--admin-url", console, "--token",
                ProcessFixtures.READ_TOKEN);
        assertTrue(status.lines().anyMatch(l -> l.matches("shard +s1 +leader=" + leader + " in-sync="
                + inSync.replace(" ", "") + " lag=.*")), status);
    }

    /**
     * The frontend's web console shows the killed backend dead on its cluster page (backend liveness is the metadata
     * leader's; the frontend fetches it), over raw HTTP and, where chromium is installed, in a browser.
     */
    private static void consoleShowsDead(LocalCluster cluster, String killed) throws Exception {
        String console = "http://127.0.0.1:" + cluster.frontends().get(0).adminPort;
        String session = ConsoleSession.signIn(console, Map.of("access_key", SluiceProcess.ACCESS_KEY, "secret_key",
                SluiceProcess.SECRET_KEY));
        java.util.regex.Pattern dead = java.util.regex.Pattern.compile("<td>" + killed
                + "</td><td>[^<]*</td><td class=\"dead\">dead</td>");
        ClusterState.awaitTrue(killed + " dead on the console's cluster page", CEILING, () -> dead.matcher(
                ConsoleSession.get(console, "/console/cluster", session).body()).find(), cluster::state);
        if (!ConsoleSession.browserAvailable()) {
            return;
        }
        org.openqa.selenium.WebDriver driver = ConsoleSession.browser();
        try {
            ConsoleSession.signIn(driver, console, SluiceProcess.ACCESS_KEY, SluiceProcess.SECRET_KEY);
            driver.get(console + "/console/cluster");
            assertEquals("dead", driver.findElement(org.openqa.selenium.By.xpath(
                    "//table[@id='backends']//tr[td[1][text()='" + killed + "']]/td[3]")).getText());
            ((org.openqa.selenium.JavascriptExecutor) driver).executeScript("arguments[0].scrollIntoView(true)",
                    driver.findElement(org.openqa.selenium.By.id("backends"))); // backends and shards in view
            ConsoleSession.screenshot(driver, "cluster-dead-backend");
        } finally {
            driver.quit();
        }
    }

    /**
     * Scaling out: a backend added to a running cluster gets replicas only by a rebalance, which moves them by Raft
     * membership changes. Every message survives the moves, the old replicas drop their copies, and the newcomer
     * counts toward each moved shard's majority (one original replica killed, the shard still commits).
     */
    @Test
    void rebalanceMovesReplicasOntoAnAddedBackend() throws Exception {
        try (LocalCluster cluster = LocalCluster.split("rebalance", 3, 3, 0, Map.of("SLUICE_BACKEND_DEAD_AFTER_MS",
                "60000"));
             MetadataClient metadata = new MetadataClient(MetadataPeers.parse(cluster.metadataPeers))) {
            List<LocalCluster.Member> backends = new ArrayList<>(cluster.backends());
            ClusterState.awaitTrue("3 shards hosted by 3 backends", CEILING, () -> metadata.fetchImage().shards()
                    .size() == 3 && backends.stream().allMatch(b -> b.hostedShards() == 3), cluster::state);
            ClusterImage before = metadata.fetchImage();
            int n = 0;
            for (ShardInfo shard : before.shards().values()) {
                PartitionId p = new PartitionId(100 + n++, 0);
                // a shard first led by another replica hands its leadership to the preferred one (the first) once that
                // answers steadily, and refuses writes while it does (LeaderSteppingDownException, which this raw
                // client does not retry): write once the preferred replica leads
                LocalCluster.Member preferred = backends.stream().filter(b -> b.name.equals(shard.replicas().get(0)))
                        .findFirst().orElseThrow();
                ClusterState.awaitTrue(shard.shardId() + " led by its preferred leader " + preferred.name, CEILING,
                        () -> preferred.leads(shard.groupId()), cluster::state);
                try (ShardClient client = new ShardClient(group(before, shard), 64, 2, Runnable::run)) {
                    commit(client, p, new PartitionCommand.Configure(PartitionConfig.STANDARD_DEFAULTS), "configure",
                            cluster::state);
                    for (int i = 0; i < 20; i++) {
                        client.submit(p, new PartitionCommand.Send(List.of(NewMessage.of(shard.shardId() + i, "b"))))
                                .get(30, TimeUnit.SECONDS);
                    }
                }
            }

            // as in a container: bound to every interface, advertising the name the cluster reaches it at (plaintext
            // Raft beyond loopback has to be asked for: this test's cluster has no certificates)
            LocalCluster.Member added = cluster.addBackend(Map.of("SLUICE_CLUSTER_ALLOW_PLAINTEXT", "true"), "--host",
                    "0.0.0.0", "--advertise-host", "127.0.0.1");
            backends.add(added);
            ClusterState.awaitTrue("b4 registered", CEILING, () -> metadata.fetchImage().nodes().containsKey("b4"),
                    cluster::state);
            assertEquals("127.0.0.1:" + added.raftPort, metadata.fetchImage().nodes().get("b4").address(),
                    "registered at its advertised address, not its bind address");
            // once b4's heartbeats reached the metadata leader it is live and the rebalance moves replicas to it
            var result = ClusterState.await("a rebalance that moves replicas", CEILING, () -> metadata.submit(
                    new io.sluice.metadata.image.MetadataCommand.Rebalance(10)), r -> !r.message().isBlank(),
                    cluster::state);
            System.out.println("rebalance moved: " + result.message());
            ClusterImage after = metadata.fetchImage();
            assertEquals(List.of(2, 2, 2, 3), after.shardReplicasPerNode().values().stream().sorted().toList(),
                    "replicas per backend after the rebalance: " + after.shardReplicasPerNode());
            assertEquals(2, after.shardReplicasPerNode().get("b4"), "the added backend took two");
            ClusterState.awaitTrue("every backend hosting what the rebalance gave it", CEILING, () -> backends.stream()
                    .allMatch(b -> b.hostedShards() == after.shardReplicasPerNode().getOrDefault(b.name, 0)),
                    cluster::state);

            n = 0;
            for (ShardInfo shard : after.shards().values()) {
                PartitionId p = new PartitionId(100 + n++, 0);
                boolean moved = !shard.replicas().equals(before.shards().get(shard.shardId()).replicas());
                if (moved) { // one original replica down: the other and b4 must make the majority
                    String original = shard.replicas().stream().filter(r -> !r.equals("b4")).findFirst().orElseThrow();
                    cluster.kill(original);
                }
                try (ShardClient client = new ShardClient(group(after, shard), 64, 2, Runnable::run)) {
                    awaitCommits(client, p, shard.shardId() + " after the move", cluster::state);
                    commit(client, p, new PartitionCommand.Send(List.of(NewMessage.of("late", "b"))),
                            shard.shardId() + ": a write after the move", cluster::state);
                    assertEquals(21, receiveUpTo(client, p, 21),
                            shard.shardId() + (moved ? " (moved)" : "") + ": every message");
                }
                if (moved) {
                    String original = shard.replicas().stream().filter(r -> !r.equals("b4")).findFirst().orElseThrow();
                    LocalCluster.Member b = backends.stream().filter(x -> x.name.equals(original)).findFirst().orElseThrow();
                    cluster.start(b.name); // back for the next shard's check
                    ClusterState.awaitTrue(b.name + " hosting its shards again", CEILING, () -> b.hostedShards()
                            == after.shardReplicasPerNode().getOrDefault(b.name, 0), cluster::state);
                }
            }
        }
    }

    /**
     * Submits one command and waits for its outcome, failing with the cluster's state if it does not commit. One
     * attempt (a retried send could be applied twice): the shard client itself retries for a while.
     */
    private static PartitionOutcome commit(ShardClient shard, PartitionId p, PartitionCommand command,
                                                  String what, java.util.function.Supplier<String> state) {
        try {
            return shard.submit(p, command).get(CEILING.toSeconds(), TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new AssertionError(what + " did not commit: " + e + "; the cluster then:" + state.get(), e);
        }
    }

    /**
     * Waits until the shard commits again (after a kill, an election may take a while on a slow day), probing with an
     * idempotent command, so the counted writes that follow are sent once.
     */
    private static void awaitCommits(ShardClient shard, PartitionId p, String what,
                                     java.util.function.Supplier<String> state) {
        ClusterState.awaitTrue(what + " committing", CEILING, () -> shard.submit(p,
                new PartitionCommand.Configure(PartitionConfig.STANDARD_DEFAULTS)).get(30, TimeUnit.SECONDS) != null,
                state);
    }

    /** Receives (leasing for 10 min) until {@code expected} messages came or 20 rounds passed; how many came. */
    private static int receiveUpTo(ShardClient shard, PartitionId p, int expected) throws Exception {
        int received = 0;
        for (int round = 0; round < 20 && received < expected; round++) {
            received += shard.submit(p, new PartitionCommand.Receive(10, 600, null)).get(30, TimeUnit.SECONDS)
                    .delivered().size();
        }
        return received;
    }

    /** The leader's view: no membership change pending and all {@code replicas} members in sync. */
    private static boolean membershipSettled(LocalCluster.Member leader, int replicas) {
        try {
            PromScrape m = PromScrape.of(java.net.URI.create("http://127.0.0.1:" + leader.adminPort));
            return m.sum("sluice_shard_membership_pending") == 0 && !m.find("sluice_shard_replicas").isEmpty()
                    && m.sum("sluice_shard_replicas_in_sync") == replicas && m.sum("sluice_shard_replicas") == replicas;
        } catch (Exception e) {
            return false;
        }
    }

    private static RaftGroup group(ClusterImage image, ShardInfo shard) {
        List<RaftPeer> peers = new ArrayList<>();
        shard.replicas().forEach(r -> peers.add(RaftPeer.newBuilder().setId(r)
                .setAddress(image.nodes().get(r).address()).build()));
        return RaftGroup.valueOf(RaftGroupId.valueOf(UUID.fromString(shard.groupId())), peers);
    }
}
