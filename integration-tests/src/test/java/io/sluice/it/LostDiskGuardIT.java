package io.sluice.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.metadata.image.ShardInfo;
import io.sluice.metadata.raft.MetadataClient;
import io.sluice.metadata.raft.MetadataPeers;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A backend whose disk was lost does not rejoin its shards under its old node id (an empty member could vote a
 * leader in that lacks committed entries); it waits until the metadata group has replaced it with another backend,
 * then starts over as an empty one.
 */
class LostDiskGuardIT {
    @Test
    void aWipedBackendWaitsToBeReplacedBeforeJoiningAnything() throws Exception {
        try (LocalCluster cluster = LocalCluster.split("lostdisk", 1, 3, 0, Map.of("SLUICE_BACKEND_DEAD_AFTER_MS",
                "2000"));
             MetadataClient metadata = new MetadataClient(MetadataPeers.parse(cluster.metadataPeers))) {
            LocalCluster.Member lost = cluster.member("b3");
            cluster.stop("b3");
            cluster.wipeData("b3");
            cluster.start("b3");

            // no spare backend: it stays listed, and must not rejoin meanwhile (checked all along, for 6 s)
            await().during(Duration.ofSeconds(6)).atMost(Duration.ofSeconds(60)).until(() ->
                    lost.hostedShards() == 0 && lost.readyStatus() == 503);
            assertTrue(metadata.fetchImage().shards().get("s1").replicas().contains(lost.name), "still listed");

            LocalCluster.Member spare = cluster.addBackend();
            ShardInfo after = await().atMost(Duration.ofSeconds(120)).until(() -> metadata.fetchImage().shards()
                    .get("s1"), s -> !s.replicas().contains(lost.name));
            assertTrue(after.replicas().contains(spare.name), "replaced by the spare: " + after);
            await().atMost(Duration.ofSeconds(120)).until(() -> spare.hostedShards() == 1);
            await().atMost(Duration.ofSeconds(120)).until(() -> lost.readyStatus() == 200);
            assertEquals(0, lost.hostedShards(), "starts over empty");
        }
    }
}
