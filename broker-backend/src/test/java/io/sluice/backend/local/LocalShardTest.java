package io.sluice.backend.local;

import io.sluice.partition.PartitionOutcome;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.backend.storage.ShardStore;
import io.sluice.common.ManualClock;
import io.sluice.common.SqsError;
import io.sluice.partition.Effect;
import io.sluice.partition.NewMessage;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionConfig;
import io.sluice.partition.PartitionId;
import io.sluice.partition.PartitionResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The single-process shard: concurrent commands, effects after durability, restart from disk. */
class LocalShardTest {
    static final PartitionId P = new PartitionId(3, 0);
    @TempDir
    Path dir;

    @Test
    void concurrentSendsAreAllAppliedAndSurviveReopening() {
        ManualClock clock = new ManualClock(1_000_000);
        List<Effect> effects = new CopyOnWriteArrayList<>();
        try (ShardStore store = ShardStore.open(dir, ShardStore.Durability.SYNC_WAL)) {
            LocalShard shard = new LocalShard(store, clock);
            shard.addListener(effects::addAll);
            shard.createPartition(P, PartitionConfig.STANDARD_DEFAULTS).join();
            List<CompletableFuture<PartitionOutcome>> sends = new ArrayList<>();
            for (int i = 0; i < 500; i++) {
                sends.add(shard.submit(P, new PartitionCommand.Send(List.of(NewMessage.of("m" + i, "body " + i)))));
            }
            CompletableFuture.allOf(sends.toArray(CompletableFuture[]::new)).join();
            assertEquals(500, shard.counts(P).join().visible());
            assertTrue(effects.stream().anyMatch(Effect.MessagesAvailable.class::isInstance));
            shard.close();
        }
        try (ShardStore store = ShardStore.open(dir, ShardStore.Durability.SYNC_WAL)) {
            LocalShard shard = new LocalShard(store, clock);
            assertTrue(shard.openPartition(P).join());
            assertEquals(500, shard.counts(P).join().visible(), "every acknowledged send is on disk");
            var got = shard.submit(P, new PartitionCommand.Receive(10, 30, null)).join();
            assertEquals(10, got.delivered().size());
            assertEquals("body 0", got.delivered().get(0).message().body());
            shard.close();
        }
    }

    @Test
    void unknownPartitionIsQueueDoesNotExist() {
        try (ShardStore store = ShardStore.open(dir, ShardStore.Durability.SYNC_WAL)) {
            LocalShard shard = new LocalShard(store, new ManualClock(0));
            var outcome = shard.submit(new PartitionId(99, 0), new PartitionCommand.Purge()).join();
            var rejected = assertInstanceOf(PartitionResponse.Rejected.class, outcome.response());
            assertEquals(SqsError.QUEUE_DOES_NOT_EXIST, rejected.failure().error());
            shard.close();
        }
    }
}
