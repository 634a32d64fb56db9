package io.sluice.backend.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.backend.engine.PartitionEngine;
import io.sluice.backend.shard.OneReplicaShard;
import io.sluice.catalog.QueueMetadata;
import io.sluice.common.ManualClock;
import io.sluice.metadata.image.ClusterImage;
import io.sluice.metadata.image.MetadataRecord;
import io.sluice.partition.NewMessage;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionConfig;
import io.sluice.partition.PartitionId;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The catalog/partition repair on a real shard store: a deleted queue's partitions retired and their records
 * dropped (the catalog delete dropped the routes before the frontend's Retire), partitions configured from an older
 * catalog version configured again (partition 0 included), a partition the catalog has and the shard lacks created; a
 * queue younger than the catalog copy left alone.
 */
class PartitionReconcilerTest {
    @TempDir
    Path dir;

    @Test
    void theShardIsMadeToAgreeWithTheCatalog() {
        QueueMetadata orders = new QueueMetadata("orders", 1, false, Map.of(), Map.of(), 100, 100, 2, 1);
        QueueMetadata gone = new QueueMetadata("gone", 2, false, Map.of(), Map.of(), 100, 100, 1, 1);
        QueueMetadata fresh = new QueueMetadata("fresh", 3, false, Map.of(), Map.of(), 100, 100, 1, 1);
        ClusterImage image = ClusterImage.EMPTY.replayAll(List.of(new MetadataRecord.QueueCreated(orders),
                new MetadataRecord.QueueCreated(gone), new MetadataRecord.QueueCreated(fresh),
                new MetadataRecord.QueueAttributesChanged("orders", Map.of("MessageRetentionPeriod", "120"), 200),
                new MetadataRecord.QueueDeleted("gone", 300_000)));
        assertEquals(2, image.queues().get("orders").configVersion());

        PartitionId orders0 = new PartitionId(1, 0);
        PartitionId orders1 = new PartitionId(1, 1);
        PartitionId gone0 = new PartitionId(2, 0);
        PartitionId fresh0 = new PartitionId(3, 0);
        PartitionId younger = new PartitionId(9, 0); // created after the catalog copy was read
        try (OneReplicaShard shard = new OneReplicaShard(dir, new ManualClock(1_000_000))) {
            PartitionConfig v1 = PartitionConfig.STANDARD_DEFAULTS.withMaxInflight(77).withVersion(1);
            for (PartitionId id : List.of(orders0, orders1, gone0, younger)) {
                shard.createPartition(id, v1).join();
            }
            shard.submit(gone0, new PartitionCommand.Send(List.of(NewMessage.of("m", "left behind")))).join();

            List<PartitionReconciler.Action> actions = PartitionReconciler.run("local", image,
                    List.of(orders0, orders1, fresh0), shard.core().storedPartitions(), 1000, shard::submit);
            assertEquals(4, actions.size(), actions.toString());
            shard.counts(orders0).join(); // a read in the log's turn: after the actions' commands, in order

            Map<PartitionId, PartitionEngine.Stored> stored = shard.core().storedPartitions().stream()
                    .collect(Collectors.toMap(PartitionEngine.Stored::id, Function.identity()));
            for (PartitionId id : List.of(orders0, orders1)) {
                assertEquals(2, stored.get(id).config().version(), id + " repaired, partition 0 included");
                assertEquals(120, stored.get(id).config().retentionSeconds());
                assertEquals(77, stored.get(id).config().maxInflight(), "its own in-flight limit kept");
            }
            assertFalse(stored.containsKey(gone0), "the deleted queue's partition is retired, its records gone");
            assertEquals(0, shard.counts(gone0).join().visible(), "and its message dropped");
            assertEquals(1, stored.get(fresh0).config().version(), "created");
            assertFalse(stored.get(younger).retired(), "a queue the catalog copy has not seen yet is left alone");

            assertEquals(List.of(), PartitionReconciler.plan(image, List.of(orders0, orders1, fresh0),
                    shard.core().storedPartitions(), 1000), "nothing more to do");
            shard.close();
        }
    }
}
