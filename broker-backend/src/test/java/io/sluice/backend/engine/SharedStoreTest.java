package io.sluice.backend.engine;

import io.sluice.partition.NewMessage;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionConfig;
import io.sluice.partition.PartitionId;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.backend.storage.ShardStore;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Many partitions share one RocksDB: each keeps to its own key range, through purge, retire and reopen. */
class SharedStoreTest {
    @TempDir
    Path dir;

    @Test
    void partitionsInOneStoreDoNotSeeOrDestroyEachOther() {
        PartitionId a = new PartitionId(1, 0);
        PartitionId b = new PartitionId(1, 1);
        PartitionId c = new PartitionId(2, 0);
        long now = 1_000;
        long index = 0;
        try (ShardStore store = ShardStore.open(dir, ShardStore.Durability.SYNC_WAL)) {
            PartitionEngine ea = PartitionEngine.create(store, a, PartitionConfig.STANDARD_DEFAULTS, now, ++index);
            PartitionEngine eb = PartitionEngine.create(store, b, PartitionConfig.STANDARD_DEFAULTS, now, ++index);
            PartitionEngine ec = PartitionEngine.create(store, c, PartitionConfig.FIFO_DEFAULTS, now, ++index);
            for (int i = 0; i < 5; i++) {
                ea.apply(new PartitionCommand.Send(List.of(NewMessage.of("a" + i, "a" + i))), now, ++index);
                eb.apply(new PartitionCommand.Send(List.of(NewMessage.of("b" + i, "b" + i))), now, ++index);
                ec.apply(new PartitionCommand.Send(List.of(NewMessage.fifo("c" + i, "c" + i, "g", "d" + i))), now, ++index);
            }
            ea.apply(new PartitionCommand.Purge(), now, ++index);
            ec.apply(new PartitionCommand.Retire(false), now, ++index);
            assertEquals(0, ea.state().counts().visible());
            assertEquals(5, eb.state().counts().visible());
        }
        try (ShardStore store = ShardStore.open(dir, ShardStore.Durability.SYNC_WAL)) {
            assertEquals(0, PartitionEngine.open(store, a).orElseThrow().state().counts().visible());
            PartitionEngine eb = PartitionEngine.open(store, b).orElseThrow();
            assertEquals(5, eb.state().counts().visible(), "the neighbour's purge and retire left b intact");
            var got = eb.apply(new PartitionCommand.Receive(10, 30, null), now, store.appliedIndex() + 1).delivered();
            assertEquals(List.of("b0", "b1", "b2", "b3", "b4"), got.stream().map(d -> d.message().body()).toList());
            assertTrue(PartitionEngine.open(store, c).isEmpty(), "retired without a hand-off: nothing of it is left");
        }
    }

    @Test
    void standardQueuesStoreAGroupIdWithoutOrderingOrBlocking() {
        try (EngineFixture q = new EngineFixture(dir, PartitionConfig.STANDARD_DEFAULTS)) {
            q.send(new NewMessage("1", "x", null, null, -1, "tenant-a", null, null, null));
            q.send(new NewMessage("2", "y", null, null, -1, "tenant-a", null, null, null));
            var first = q.receiveOne(30);
            assertEquals("tenant-a", first.message().groupId());
            assertEquals("y", q.receiveOne(30).message().body(), "no group blocking on standard queues");
        }
    }
}
