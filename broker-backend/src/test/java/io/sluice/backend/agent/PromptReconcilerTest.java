package io.sluice.backend.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.backend.shard.OneReplicaShard;
import io.sluice.catalog.QueueMetadata;
import io.sluice.common.ManualClock;
import io.sluice.metadata.image.ClusterImage;
import io.sluice.metadata.image.MetadataRecord;
import io.sluice.partition.PartitionId;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The frontend writes the catalog only: a wait for a partition's configuration asks its shard's primary, which
 * configures it from the catalog at once (fetching the catalog when its copy is older than the version waited for);
 * the wait completes once that configuration is applied and on disk.
 */
class PromptReconcilerTest {
    @TempDir
    Path dir;

    @Test
    void aWaitedForPartitionIsCreatedAndConfiguredFromTheCatalogAtOnce() throws Exception {
        QueueMetadata orders = new QueueMetadata("orders", 1, false, Map.of(), Map.of(), 100, 100, 2, 1);
        ClusterImage created = ClusterImage.EMPTY.replayAll(List.of(new MetadataRecord.QueueCreated(orders)));
        AtomicReference<ClusterImage> held = new AtomicReference<>(ClusterImage.EMPTY); // this copy predates the queue
        AtomicReference<ClusterImage> metadata = new AtomicReference<>(created);
        AtomicInteger fetches = new AtomicInteger();
        PartitionId p0 = new PartitionId(1, 0);
        PartitionId p1 = new PartitionId(1, 1);
        try (OneReplicaShard shard = new OneReplicaShard(dir, new ManualClock(1_000_000))) {
            PromptReconciler prompt = new PromptReconciler(held::get, () -> {
                fetches.incrementAndGet();
                held.set(metadata.get());
                return held.get();
            }, (image, p) -> Optional.of(new PromptReconciler.Placement("local", shard.core().storedPartition(p),
                    shard::submit)), 500);
            shard.core().setConfigurationRequests(prompt);

            assertTrue(shard.awaitConfigured(p0, 1).get(4, TimeUnit.SECONDS), "created on request");
            assertTrue(shard.awaitConfigured(p1, 1).get(4, TimeUnit.SECONDS));
            assertEquals(1, fetches.get(), "the first request fetched the catalog; the second found it held");
            assertEquals(500, shard.core().storedPartition(p1).orElseThrow().config().maxInflight(),
                    "with this primary's in-flight limit");
            assertTrue(shard.awaitConfigured(p0, 1).get(1, TimeUnit.SECONDS), "already configured: at once");

            ClusterImage changed = created.replayAll(List.of(new MetadataRecord.QueueAttributesChanged("orders",
                    Map.of("DelaySeconds", "30"), 200)));
            metadata.set(changed);
            assertTrue(shard.awaitConfigured(p0, 2).get(4, TimeUnit.SECONDS), "reconfigured on request");
            assertEquals(30, shard.core().storedPartition(p0).orElseThrow().config().delaySeconds());
            assertEquals(1, shard.core().storedPartition(p1).orElseThrow().config().version(),
                    "only the partition asked for");

            prompt.close();
        }
    }
}
