package io.sluice.backend.engine;

import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionConfig;
import io.sluice.partition.PayloadCodec;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Configure commands carry the catalog version of the attributes they were made from; an older one loses. */
class ConfigVersionTest {
    @TempDir
    Path dir;

    @Test
    void anOlderCatalogVersionIsIgnoredANewerOneApplies() {
        try (EngineFixture q = new EngineFixture(dir, PartitionConfig.STANDARD_DEFAULTS.withVersion(1))) {
            q.apply(new PartitionCommand.Configure(PartitionConfig.STANDARD_DEFAULTS.withRetentionSeconds(100)
                    .withVersion(3)));
            // a racing SetQueueAttributes that wrote the catalog first (version 2) and reached the partition last
            q.apply(new PartitionCommand.Configure(PartitionConfig.STANDARD_DEFAULTS.withRetentionSeconds(200)
                    .withVersion(2)));
            assertEquals(100, q.engine.state().config().retentionSeconds());
            assertEquals(3, q.engine.state().config().version());
            q.apply(new PartitionCommand.Configure(PartitionConfig.STANDARD_DEFAULTS.withRetentionSeconds(300)
                    .withVersion(4)));
            assertEquals(300, q.engine.state().config().retentionSeconds());
            assertEquals(4, PayloadCodec.decodeConfig(PayloadCodec.encodeConfig(q.engine.state().config())).version(),
                    "the version is stored with the config");
        }
    }
}
