package io.sluice.metadata.image;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.catalog.QueueMetadata;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Fixtures as Kafka's image tests have them: IMAGE1 + DELTA1 == IMAGE2, and every record survives its JSON. */
class ClusterImageTest {
    static final QueueMetadata ORDERS = new QueueMetadata("orders", 1, false, Map.of("VisibilityTimeout", "30"),
            Map.of("team", "core"), 100, 100, 2, 1);
    static final List<MetadataRecord> IMAGE1_RECORDS = List.of(
            new MetadataRecord.NodeRegistered("b1", "127.0.0.1:7001", 10),
            new MetadataRecord.NodeRegistered("b2", "127.0.0.1:7002", 11),
            new MetadataRecord.QueueCreated(ORDERS),
            new MetadataRecord.PartitionAssigned(1, 0, List.of("b1", "b2"), 1, null),
            new MetadataRecord.PartitionAssigned(1, 1, List.of("b2", "b1"), 1, "s1"));
    static final ClusterImage IMAGE1 = ClusterImage.EMPTY.replayAll(IMAGE1_RECORDS);
    static final List<MetadataRecord> DELTA1 = List.of(
            new MetadataRecord.QueueAttributesChanged("orders", Map.of("VisibilityTimeout", "60"), 200),
            new MetadataRecord.QueueTagsChanged("orders", Map.of()),
            new MetadataRecord.QueuePartitionsRaised("orders", 3),
            new MetadataRecord.PartitionAssigned(1, 2, List.of("b1", "b2"), 1, "s1"),
            new MetadataRecord.NodeRegistered("b3", "127.0.0.1:7003", 201),
            new MetadataRecord.PartitionAssigned(1, 0, List.of("b2", "b3"), 2, null),
            new MetadataRecord.ShardAssigned("s1", "g-1", List.of("b3", "b1"), 4),
            new MetadataRecord.AccessKeySet("app", "s3cret", List.of(List.of("SendMessage", "orders-*"))),
            new MetadataRecord.QueueCreated(new QueueMetadata("jobs", 2, true, Map.of(), Map.of(), 202, 202, 1, 1)),
            new MetadataRecord.QueueDeleted("jobs", 203_000),
            new MetadataRecord.ReceiptSecretSet("c2VjcmV0"));
    static final ClusterImage IMAGE2 = new ClusterImage(0, 3,
            new java.util.TreeMap<>(Map.of("orders", ORDERS.withAttributes(Map.of("VisibilityTimeout", "60"), 200)
                    .withTags(Map.of()).withPartitions(3))),
            new java.util.TreeMap<>(Map.of("jobs", 203_000L)),
            new java.util.TreeMap<>(Map.of("b1", new NodeInfo("b1", "127.0.0.1:7001", 10),
                    "b2", new NodeInfo("b2", "127.0.0.1:7002", 11), "b3", new NodeInfo("b3", "127.0.0.1:7003", 201))),
            new java.util.TreeMap<>(Map.of("1/0", new PartitionAssignment(1, 0, List.of("b2", "b3"), 2, null),
                    "1/1", new PartitionAssignment(1, 1, List.of("b3", "b1"), 4, "s1"),
                    "1/2", new PartitionAssignment(1, 2, List.of("b3", "b1"), 4, "s1"))),
            new java.util.TreeMap<>(Map.of("app", new MetadataRecord.AccessKeySet("app", "s3cret",
                    List.of(List.of("SendMessage", "orders-*"))))),
            new java.util.TreeMap<>(Map.of("s1", new ShardInfo("s1", "g-1", List.of("b3", "b1"), 4))), "c2VjcmV0");

    @Test
    void image1PlusDelta1IsImage2() {
        assertEquals(IMAGE2, IMAGE1.replayAll(DELTA1));
    }

    @Test
    void replayIsPureTheOldImageIsUntouched() {
        ClusterImage before = ClusterImage.EMPTY.replayAll(IMAGE1_RECORDS);
        before.replayAll(DELTA1);
        assertEquals(IMAGE1, before);
    }

    static Stream<MetadataRecord> everyRecordType() {
        return Stream.concat(IMAGE1_RECORDS.stream(), DELTA1.stream());
    }

    @ParameterizedTest
    @MethodSource("everyRecordType")
    void everyRecordRoundTripsThroughJsonAndReplaysTheSame(MetadataRecord record) {
        MetadataRecord decoded = MetadataJson.read(MetadataJson.write(record), MetadataRecord.class);
        assertEquals(record.getClass(), decoded.getClass());
        assertEquals(IMAGE1.replay(record), IMAGE1.replay(decoded));
    }

    @Test
    void everyRecordTypeIsCovered() {
        var covered = everyRecordType().map(Object::getClass).distinct().count();
        assertEquals(MetadataRecord.class.getPermittedSubclasses().length, covered);
    }

    @Test
    void imagesRoundTripThroughJsonAsSnapshotsDo() {
        assertEquals(IMAGE2, MetadataJson.read(MetadataJson.write(IMAGE2), ClusterImage.class));
        assertEquals(ClusterImage.EMPTY, MetadataJson.read(MetadataJson.write(ClusterImage.EMPTY), ClusterImage.class));
    }

    @Test
    void theDerivedIndexesAreNotSerialized() {
        String json = new String(MetadataJson.write(IMAGE2), java.nio.charset.StandardCharsets.UTF_8);
        assertFalse(json.contains("queueNamesById") || json.contains("partitionsPerShard")
                || json.contains("replicaCounts"), json);
    }

    /** Queue ids and partitions per shard are indexes kept up record by record: the same as computed from scratch. */
    @Test
    void queuesByIdAndPartitionsPerShardFollowEveryRecord() {
        ClusterImage image = ClusterImage.EMPTY.replayAll(List.of(
                new MetadataRecord.QueueCreated(new QueueMetadata("a", 1, false, Map.of(), Map.of(), 1, 1, 2, 1)),
                new MetadataRecord.PartitionAssigned(1, 0, List.of("b1"), 1, "s1"),
                new MetadataRecord.PartitionAssigned(1, 1, List.of("b1"), 1, "s1"),
                new MetadataRecord.QueueCreated(new QueueMetadata("b", 2, false, Map.of(), Map.of(), 1, 1, 2, 1)),
                new MetadataRecord.PartitionAssigned(2, 0, List.of("b2"), 1, "s2"),
                new MetadataRecord.PartitionAssigned(2, 1, List.of("b1"), 1, "s1")));
        assertEquals("a", image.queueById(1).orElseThrow().name());
        assertEquals(Map.of("s1", 3, "s2", 1), image.partitionsPerShard());
        image = image.replayAll(List.of(new MetadataRecord.PartitionAssigned(2, 1, List.of("b2"), 2, "s2"),
                new MetadataRecord.QueueDeleted("a", 5_000)));
        assertTrue(image.queueById(1).isEmpty(), "deleted");
        assertEquals("b", image.queueById(2).orElseThrow().name());
        assertTrue(image.queueById(3).isEmpty(), "never created");
        assertEquals(Map.of("s2", 2), image.partitionsPerShard(), "a shard left with none has no entry");
        ClusterImage computed = new ClusterImage(image.appliedIndex(), image.nextQueueId(), image.queues(),
                image.deletedAtMillis(), image.nodes(), image.partitions(), image.accessKeys(), image.shards(),
                image.receiptSecret());
        assertEquals(computed.queueNamesById(), image.queueNamesById());
        assertEquals(computed.partitionsPerShard(), image.partitionsPerShard());
        assertEquals(computed.replicaCounts(), image.replicaCounts());
    }

    /**
     * Replicas per node (what unsharded placement balances) are an index kept up record by record, also when a
     * shard's replicas change under its partitions: the same as counted from scratch, nodes listed with zero.
     */
    @Test
    void replicasPerNodeFollowEveryRecord() {
        ClusterImage image = ClusterImage.EMPTY.replayAll(List.of(
                new MetadataRecord.NodeRegistered("b1", "127.0.0.1:1", 1),
                new MetadataRecord.NodeRegistered("b2", "127.0.0.1:2", 1),
                new MetadataRecord.NodeRegistered("b3", "127.0.0.1:3", 1),
                new MetadataRecord.NodeRegistered("b4", "127.0.0.1:4", 1),
                new MetadataRecord.QueueCreated(new QueueMetadata("a", 1, false, Map.of(), Map.of(), 1, 1, 2, 1)),
                new MetadataRecord.PartitionAssigned(1, 0, List.of("b1", "b2"), 1, null),
                new MetadataRecord.PartitionAssigned(1, 1, List.of("b2", "b3"), 1, null),
                new MetadataRecord.QueueCreated(new QueueMetadata("b", 2, false, Map.of(), Map.of(), 1, 1, 2, 1)),
                new MetadataRecord.ShardAssigned("s1", "00000000-0000-0000-0000-000000000001", List.of("b1", "b2"), 1),
                new MetadataRecord.PartitionAssigned(2, 0, List.of("b1", "b2"), 1, "s1"),
                new MetadataRecord.PartitionAssigned(2, 1, List.of("b1", "b2"), 1, "s1")));
        assertEquals(Map.of("b1", 3, "b2", 4, "b3", 1, "b4", 0), image.replicasPerNode());
        image = image.replayAll(List.of(
                new MetadataRecord.PartitionAssigned(1, 1, List.of("b3", "b4"), 2, null), // b2 replaced
                new MetadataRecord.ShardAssigned("s1", "00000000-0000-0000-0000-000000000001", List.of("b1", "b4"), 2)));
        assertEquals(Map.of("b1", 3, "b2", 1, "b3", 1, "b4", 3), image.replicasPerNode());
        image = image.replay(new MetadataRecord.QueueDeleted("a", 5_000));
        assertEquals(Map.of("b1", 2, "b2", 0, "b3", 0, "b4", 2), image.replicasPerNode());
        ClusterImage computed = new ClusterImage(image.appliedIndex(), image.nextQueueId(), image.queues(),
                image.deletedAtMillis(), image.nodes(), image.partitions(), image.accessKeys(), image.shards(),
                image.receiptSecret());
        assertEquals(computed.replicaCounts(), image.replicaCounts());
        assertEquals(Map.of("b1", 2, "b4", 2), image.replicaCounts(), "nodes holding none have no entry");
    }

    @Test
    void aReplayCopiesNothingItDoesNotChange() {
        ClusterImage next = IMAGE1.replay(new MetadataRecord.QueueCreated(
                new QueueMetadata("jobs", 2, false, Map.of(), Map.of(), 300, 300, 1, 1)));
        // persistent maps: untouched components are the same instances, so a change to a catalog of 100,000
        // queues costs the path to the change, not a copy of the catalog
        assertTrue(next.nodes() == IMAGE1.nodes() && next.partitions() == IMAGE1.partitions()
                && next.shards() == IMAGE1.shards() && next.accessKeys() == IMAGE1.accessKeys());
        assertTrue(next.withAppliedIndex(9).queues() == next.queues(), "a new index shares every map");
        assertEquals(2, next.queues().size());
    }

    @Test
    void aQueuesPartitionsAreARangeOfTheAssignments() {
        ClusterImage image = ClusterImage.EMPTY.replayAll(List.of(
                new MetadataRecord.PartitionAssigned(1, 0, List.of("b1"), 1, "s1"),
                new MetadataRecord.PartitionAssigned(1, 10, List.of("b1"), 1, "s1"),
                new MetadataRecord.PartitionAssigned(1, 2, List.of("b1"), 1, "s1"),
                new MetadataRecord.PartitionAssigned(10, 0, List.of("b1"), 1, "s1"),
                new MetadataRecord.PartitionAssigned(11, 0, List.of("b1"), 1, "s1"),
                new MetadataRecord.PartitionAssigned(100, 1, List.of("b1"), 1, "s1")));
        assertEquals(List.of(0, 10, 2), image.partitionsOf(1).stream().map(PartitionAssignment::index).toList());
        assertEquals(List.of(0), image.partitionsOf(10).stream().map(PartitionAssignment::index).toList());
        assertEquals(List.of(1), image.partitionsOf(100).stream().map(PartitionAssignment::index).toList());
        assertTrue(image.partitionsOf(2).isEmpty());
        assertEquals(6, image.replay(new MetadataRecord.QueueDeleted("absent", 1)).partitions().size());
    }

    @Test
    void deletingAQueueDropsItsAssignmentsAndHoldsItsName() {
        ClusterImage after = IMAGE1.replay(new MetadataRecord.QueueDeleted("orders", 1_000));
        assertFalse(after.queues().containsKey("orders"));
        assertTrue(after.partitionsOf(1).isEmpty());
        assertEquals(1_000L, after.deletedAtMillis().get("orders"));
        assertEquals(2, after.nextQueueId(), "ids are never reused");
    }

    @Test
    void theFirstReceiptSecretStaysAndNoRoleWithoutSecretsSeesIt() {
        ClusterImage image = ClusterImage.EMPTY.replay(new MetadataRecord.ReceiptSecretSet("first"))
                .replay(new MetadataRecord.ReceiptSecretSet("second"))
                .replay(new MetadataRecord.AccessKeySet("app", "s3cret", List.of()));
        org.junit.jupiter.api.Assertions.assertEquals("first", image.receiptSecret());
        ClusterImage without = image.withoutSecrets();
        org.junit.jupiter.api.Assertions.assertNull(without.receiptSecret());
        org.junit.jupiter.api.Assertions.assertTrue(without.accessKeys().isEmpty());
        org.junit.jupiter.api.Assertions.assertFalse(image.toString().contains("first"), image.toString());
        org.junit.jupiter.api.Assertions.assertFalse(image.toString().contains("s3cret"), image.toString());
    }
}
