package io.sluice.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.sluice.backend.engine.NewMessage;
import io.sluice.backend.engine.PartitionCommand;
import io.sluice.backend.engine.PartitionConfig;
import io.sluice.backend.engine.PartitionEngine;
import io.sluice.backend.engine.PartitionId;
import io.sluice.backend.raft.ShardClient;
import io.sluice.metadata.image.ClusterImage;
import io.sluice.metadata.image.ShardInfo;
import io.sluice.metadata.raft.MetadataClient;
import io.sluice.metadata.raft.MetadataPeers;
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

    @Test
    void backendsJoinTheirShardsAndAShardSurvivesLosingABackend() throws Exception {
        try (MetadataProcess.Group group = new MetadataProcess.Group("sharded", Map.of("SLUICE_SHARDS", "4",
                "SLUICE_REPLICATION_FACTOR", "3"))) {
            group.startAll();
            group.awaitLeader();
            List<BackendProcess> backends = new ArrayList<>();
            for (int i = 1; i <= 3; i++) {
                BackendProcess b = new BackendProcess("b" + i, group.peers);
                b.start();
                backends.add(b);
            }
            try (MetadataClient metadata = new MetadataClient(MetadataPeers.parse(group.peers))) {
                long assigned = System.nanoTime();
                await().atMost(Duration.ofSeconds(60)).until(() -> metadata.fetchImage().shards().size() == 4);
                await().atMost(Duration.ofSeconds(60)).until(() -> backends.stream().allMatch(b -> b.hostedShards() == 4));
                System.out.printf("4 shards x 3 replicas hosted by 3 backends %d ms after the backends started%n",
                        (System.nanoTime() - assigned) / 1_000_000);
                ClusterImage image = metadata.fetchImage();
                image.shards().values().forEach(s -> assertEquals(3, s.replicas().size(), s.toString()));
                // leadership balancing: each shard's first replica has the higher Raft priority, and the first
                // replicas rotate over the backends, so every backend ends up primary of some shard
                await().atMost(Duration.ofSeconds(30)).until(() -> image.shards().values().stream()
                        .allMatch(s -> backends.stream().filter(b -> b.id.equals(s.replicas().get(0))).findFirst()
                                .orElseThrow().leads(s.groupId())));
                for (BackendProcess b : backends) {
                    long led = image.shards().values().stream().filter(s -> b.leads(s.groupId())).count();
                    System.out.printf("backend %s leads %d of 4 shards%n", b.id, led);
                    org.junit.jupiter.api.Assertions.assertTrue(led >= 1, b.id + " leads a shard");
                }
                ShardInfo s1 = image.shards().get("s1");
                PartitionId p = new PartitionId(1, 0);
                try (ShardClient shard = new ShardClient(group(image, s1), 64, 2, Runnable::run)) {
                    long start = System.nanoTime();
                    await().atMost(Duration.ofSeconds(60)).ignoreExceptions().until(() -> shard.submit(p,
                            new PartitionCommand.Configure(PartitionConfig.STANDARD_DEFAULTS)).get(10, TimeUnit.SECONDS) != null);
                    System.out.printf("shard s1 served its first write %d ms after the shards were assigned%n",
                            (System.nanoTime() - start) / 1_000_000);
                    shard.submit(p, new PartitionCommand.Send(List.of(NewMessage.of("a", "before"))))
                            .get(30, TimeUnit.SECONDS);

                    await().atMost(Duration.ofSeconds(10)).until(() -> backends.stream().anyMatch(b -> b.leads(s1.groupId())));
                    BackendProcess leader = backends.stream().filter(b -> b.leads(s1.groupId())).findFirst().orElseThrow();
                    String victim = leader.id;
                    leader.kill();
                    long killed = System.nanoTime();
                    shard.submit(p, new PartitionCommand.Send(List.of(NewMessage.of("b", "after")))).get(60, TimeUnit.SECONDS);
                    System.out.printf("shard s1's leader %s killed (SIGKILL): the next write committed after %d ms%n", victim,
                            (System.nanoTime() - killed) / 1_000_000);
                    PartitionEngine.Outcome got = shard.submit(p, new PartitionCommand.Receive(10, 60, null))
                            .get(30, TimeUnit.SECONDS);
                    assertEquals(List.of("before", "after"), got.delivered().stream().map(d -> d.message().body()).toList());
                }
            } finally {
                for (BackendProcess b : backends) {
                    b.stop();
                }
            }
        }
    }

    private static RaftGroup group(ClusterImage image, ShardInfo shard) {
        List<RaftPeer> peers = new ArrayList<>();
        shard.replicas().forEach(r -> peers.add(RaftPeer.newBuilder().setId(r)
                .setAddress(image.nodes().get(r).address()).build()));
        return RaftGroup.valueOf(RaftGroupId.valueOf(UUID.fromString(shard.groupId())), peers);
    }
}
