package io.sluice.metadata.image;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Commands become records; placement is balanced and deterministic. */
class MetadataOperationsTest {
    static final List<String> NODES = List.of("b1", "b2", "b3", "b4");

    static ClusterImage withNodes() {
        ClusterImage image = ClusterImage.EMPTY;
        for (String n : NODES) {
            image = image.replay(new MetadataRecord.NodeRegistered(n, n + ":1", 0));
        }
        return image;
    }

    static ClusterImage apply(ClusterImage image, MetadataCommand command, long now, List<String> live) {
        var outcome = MetadataOperations.execute(image, new MetadataCommand.Stamped(command, now, live, 3));
        return image.replayAll(outcome.records());
    }

    @Test
    void twelvePartitionsOnFourNodesAreBalancedWithinOne() {
        ClusterImage image = withNodes();
        for (int q = 0; q < 4; q++) {
            image = apply(image, new MetadataCommand.CreateQueue("q" + q, false, Map.of(), Map.of(), 3), 1000, NODES);
        }
        assertEquals(12, image.partitions().size());
        Map<String, Integer> load = image.replicasPerNode();
        double average = 12 * 3 / 4.0;
        load.values().forEach(n -> assertTrue(n <= average + 1, "unbalanced: " + load));
        image.partitions().values().forEach(a -> assertEquals(3, a.replicas().stream().distinct().count()));
        Map<String, Long> primaries = new java.util.TreeMap<>();
        image.partitions().values().forEach(a -> primaries.merge(a.replicas().get(0), 1L, Long::sum));
        assertEquals(4, primaries.size(), "every node is some partition's primary: " + primaries);
    }

    @Test
    void preferredShardLeadersSpreadEvenlyOverTheBackends() {
        ClusterImage image = apply(withNodes(), new MetadataCommand.EnsureShards(8), 0, NODES);
        Map<String, Integer> preferred = new java.util.TreeMap<>();
        image.shards().values().forEach(sh -> preferred.merge(sh.replicas().get(0), 1, Integer::sum));
        assertEquals(Map.of("b1", 2, "b2", 2, "b3", 2, "b4", 2), preferred, "8 shards on 4 backends, R = 3");
        image.shards().values().forEach(sh -> assertEquals(3, sh.replicas().stream().distinct().count()));
    }

    @Test
    void aStandardQueuesPartitionsGrowOnTheShardsButNeverShrinkAndFifoKeepsItsCount() {
        ClusterImage image = apply(withNodes(), new MetadataCommand.EnsureShards(4), 0, NODES);
        image = apply(image, new MetadataCommand.CreateQueue("q", false, Map.of(), Map.of(), 1), 1000, NODES);
        image = apply(image, new MetadataCommand.CreateQueue("f.fifo", true, Map.of(), Map.of(), 2), 1000, NODES);
        long q = image.queues().get("q").queueId();
        image = apply(image, new MetadataCommand.RaisePartitions("q", 4), 2000, NODES);
        assertEquals(4, image.queues().get("q").partitions());
        java.util.Set<String> shards = new java.util.TreeSet<>();
        for (int i = 0; i < 4; i++) {
            PartitionAssignment a = image.partitions().get(PartitionAssignment.key(q, i));
            assertTrue(a != null && a.shardId() != null, "partition " + i + " placed on a shard");
            shards.add(a.shardId());
        }
        assertTrue(shards.size() >= 3, "new partitions go to the least-loaded shards: " + shards);
        assertEquals(MetadataResult.Status.INVALID, MetadataOperations.execute(image, new MetadataCommand.Stamped(
                new MetadataCommand.RaisePartitions("q", 2), 3000, NODES, 3)).result().status(), "never lowered");
        assertEquals(MetadataResult.Status.INVALID, MetadataOperations.execute(image, new MetadataCommand.Stamped(
                new MetadataCommand.RaisePartitions("f.fifo", 4), 3000, NODES, 3)).result().status(), "FIFO fixed");
    }

    @Test
    void aDeadNodeIsReplacedEverywhereByLiveOnes() {
        ClusterImage image = withNodes();
        for (int q = 0; q < 4; q++) {
            image = apply(image, new MetadataCommand.CreateQueue("q" + q, false, Map.of(), Map.of(), 3), 1000, NODES);
        }
        image = apply(image, new MetadataCommand.ReplaceDeadNode("b2"), 2000, List.of("b1", "b3", "b4"));
        for (PartitionAssignment a : image.partitions().values()) {
            assertFalse(a.replicas().contains("b2"), a.toString());
            assertEquals(3, a.replicas().stream().distinct().count());
        }
        assertTrue(image.partitions().values().stream().anyMatch(a -> a.epoch() == 2));
    }

    @Test
    void createIsRefusedForAnExistingOrRecentlyDeletedName() {
        ClusterImage image = apply(withNodes(), new MetadataCommand.CreateQueue("q", false, Map.of(), Map.of(), 1), 0, NODES);
        var again = MetadataOperations.execute(image, new MetadataCommand.Stamped(
                new MetadataCommand.CreateQueue("q", false, Map.of(), Map.of(), 1), 1, NODES, 3));
        assertEquals(MetadataResult.Status.ALREADY_EXISTS, again.result().status());
        assertTrue(again.records().isEmpty());
        image = apply(image, new MetadataCommand.DeleteQueue("q"), 10_000, NODES);
        var soon = MetadataOperations.execute(image, new MetadataCommand.Stamped(
                new MetadataCommand.CreateQueue("q", false, Map.of(), Map.of(), 1), 69_999, NODES, 3));
        assertEquals(MetadataResult.Status.DELETED_RECENTLY, soon.result().status());
        var later = MetadataOperations.execute(image, new MetadataCommand.Stamped(
                new MetadataCommand.CreateQueue("q", false, Map.of(), Map.of(), 1), 70_000, NODES, 3));
        assertEquals(MetadataResult.Status.OK, later.result().status());
        assertEquals(2, later.result().queue().queueId(), "a new incarnation, a new id");
    }

    @Test
    void shardsAreSpreadOverBackendsAndPartitionsOverShards() {
        ClusterImage image = apply(withNodes(), new MetadataCommand.EnsureShards(8), 1000, NODES);
        assertEquals(8, image.shards().size());
        image.shardReplicasPerNode().values().forEach(n -> assertEquals(6, n, "8 shards x 3 replicas over 4 nodes"));
        assertEquals(8, image.shards().values().stream().map(ShardInfo::groupId).distinct().count());
        for (int q = 0; q < 4; q++) {
            image = apply(image, new MetadataCommand.CreateQueue("q" + q, false, Map.of(), Map.of(), 4), 2000, NODES);
        }
        Map<String, Long> perShard = new java.util.TreeMap<>();
        image.partitions().values().forEach(a -> perShard.merge(a.shardId(), 1L, Long::sum));
        assertEquals(8, perShard.size());
        perShard.values().forEach(n -> assertEquals(2L, n, "16 partitions over 8 shards: " + perShard));
        for (PartitionAssignment a : image.partitions().values()) {
            assertEquals(image.shards().get(a.shardId()).replicas(), a.replicas(), "a partition's replicas are its shard's");
        }
        assertEquals(image, apply(image, new MetadataCommand.EnsureShards(8), 3000, NODES), "idempotent");
    }

    @Test
    void aDeadBackendIsReplacedInItsShardsAndTheirPartitionsFollow() {
        ClusterImage image = apply(withNodes(), new MetadataCommand.EnsureShards(4), 1000, NODES);
        image = apply(image, new MetadataCommand.CreateQueue("q", false, Map.of(), Map.of(), 4), 2000, NODES);
        image = apply(image, new MetadataCommand.ReplaceDeadNode("b1"), 3000, List.of("b2", "b3", "b4"));
        image.shards().values().forEach(sh -> {
            assertFalse(sh.replicas().contains("b1"), sh.toString());
            assertEquals(3, sh.replicas().size());
        });
        image.partitions().values().forEach(a -> assertFalse(a.replicas().contains("b1"), a.toString()));
    }

    @Test
    void commandsRoundTripAsTheLogStoresThem() {
        for (MetadataCommand c : List.of(new MetadataCommand.CreateQueue("q", true, Map.of("a", "b"), Map.of("t", "v"), 2),
                new MetadataCommand.SetQueueAttributes("q", Map.of("a", "c")), new MetadataCommand.SetQueueTags("q", Map.of()),
                new MetadataCommand.DeleteQueue("q"), new MetadataCommand.RegisterNode("n", "h:1"),
                new MetadataCommand.ReplaceDeadNode("n"), new MetadataCommand.SetAccessKey("k", "s", List.of()),
                new MetadataCommand.EnsureShards(3))) {
            var stamped = new MetadataCommand.Stamped(c, 5, List.of("n"), 3);
            assertEquals(stamped, MetadataJson.read(MetadataJson.write(stamped), MetadataCommand.Stamped.class));
        }
    }

    @Test
    void rebalanceMovesReplicasOntoANewBackendUntilWithinOne() {
        List<String> firstThree = List.of("b1", "b2", "b3");
        ClusterImage image = apply(withNodes(), new MetadataCommand.EnsureShards(4), 0, firstThree);
        assertEquals(Map.of("b1", 4, "b2", 4, "b3", 4, "b4", 0), image.shardReplicasPerNode());

        var outcome = MetadataOperations.execute(image, new MetadataCommand.Stamped(new MetadataCommand.Rebalance(10),
                1000, NODES, 3));
        ClusterImage after = image.replayAll(outcome.records());
        assertEquals(Map.of("b1", 3, "b2", 3, "b3", 3, "b4", 3), after.shardReplicasPerNode(), outcome.result().message());
        assertEquals(3, outcome.result().message().split(" ").length, "three moves: " + outcome.result().message());
        for (ShardInfo shard : after.shards().values()) {
            ShardInfo before = image.shards().get(shard.shardId());
            assertEquals(3, shard.replicas().stream().distinct().count());
            assertEquals(before.replicas().equals(shard.replicas()) ? before.epoch() : before.epoch() + 1, shard.epoch());
            assertEquals(before.replicas().get(0), shard.replicas().get(0), "preferred leaders stay where possible");
        }
        var again = MetadataOperations.execute(after, new MetadataCommand.Stamped(new MetadataCommand.Rebalance(10),
                2000, NODES, 3));
        assertTrue(again.records().isEmpty(), "balanced: nothing more to move");

        var limited = MetadataOperations.execute(image, new MetadataCommand.Stamped(new MetadataCommand.Rebalance(1),
                1000, NODES, 3));
        assertEquals(1, limited.records().size(), "at most maxMoves");
    }

    @Test
    void rebalanceLeavesShardsWithADeadReplicaAlone() {
        ClusterImage image = apply(withNodes(), new MetadataCommand.EnsureShards(4), 0, List.of("b1", "b2", "b3"));
        var outcome = MetadataOperations.execute(image, new MetadataCommand.Stamped(new MetadataCommand.Rebalance(10),
                1000, List.of("b1", "b2", "b4"), 3)); // b3 is dead: every shard has a dead replica
        assertTrue(outcome.records().isEmpty(), outcome.result().message());
    }

    @Test
    void releasedReplicasGoToOtherLiveBackendsOrStayWhereNoneCanTakeThem() {
        ClusterImage image = apply(withNodes(), new MetadataCommand.EnsureShards(2), 0, List.of("b1", "b2", "b3"));
        List<String> released = image.shards().values().stream().filter(s -> s.replicas().contains("b3"))
                .map(ShardInfo::shardId).toList();
        assertEquals(2, released.size());

        ClusterImage noSpare = apply(image, new MetadataCommand.ReleaseReplicas("b3", released), 1000,
                List.of("b1", "b2", "b3"));
        assertEquals(image.shards(), noSpare.shards(), "no other backend can take them: they stay listed");

        ClusterImage after = apply(image, new MetadataCommand.ReleaseReplicas("b3", List.of(released.get(0))), 1000,
                NODES);
        ShardInfo moved = after.shards().get(released.get(0));
        assertFalse(moved.replicas().contains("b3"));
        assertTrue(moved.replicas().contains("b4"));
        assertEquals(image.shards().get(released.get(0)).epoch() + 1, moved.epoch());
        assertTrue(after.shards().get(released.get(1)).replicas().contains("b3"), "only the shards named");
    }
}
