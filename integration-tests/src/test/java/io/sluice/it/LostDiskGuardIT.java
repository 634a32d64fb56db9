package io.sluice.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.metadata.image.ShardInfo;
import io.sluice.metadata.raft.MetadataClient;
import io.sluice.metadata.raft.MetadataPeers;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
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
        try (MetadataProcess.Group group = new MetadataProcess.Group("lostdisk", Map.of("SLUICE_SHARDS", "1",
                "SLUICE_REPLICATION_FACTOR", "3", "SLUICE_BACKEND_DEAD_AFTER_MS", "2000"))) {
            group.startAll();
            group.awaitLeader();
            List<BackendProcess> backends = new ArrayList<>();
            try (MetadataClient metadata = new MetadataClient(MetadataPeers.parse(group.peers))) {
                BackendProcess.startNumbered(backends, group.peers, 1, 3);
                await().atMost(Duration.ofSeconds(120)).until(() -> backends.stream().allMatch(b -> b.hostedShards() == 1));
                BackendProcess lost = backends.get(2);
                lost.stop();
                lost.wipeData();
                lost.start();

                // no spare backend: it stays listed, and must not rejoin meanwhile (checked all along, for 6 s)
                await().during(Duration.ofSeconds(6)).atMost(Duration.ofSeconds(60)).until(() ->
                        lost.hostedShards() == 0 && lost.readyStatus() == 503);
                assertTrue(metadata.fetchImage().shards().get("s1").replicas().contains(lost.id), "still listed");

                BackendProcess spare = new BackendProcess("b4", group.peers);
                spare.start();
                backends.add(spare);
                ShardInfo after = await().atMost(Duration.ofSeconds(120)).until(() -> metadata.fetchImage().shards()
                        .get("s1"), s -> !s.replicas().contains(lost.id));
                assertTrue(after.replicas().contains(spare.id), "replaced by the spare: " + after);
                await().atMost(Duration.ofSeconds(120)).until(() -> spare.hostedShards() == 1);
                await().atMost(Duration.ofSeconds(120)).until(() -> lost.readyStatus() == 200);
                assertEquals(0, lost.hostedShards(), "starts over empty");
            } finally {
                for (BackendProcess b : backends) {
                    b.stop();
                }
            }
        }
    }
}
