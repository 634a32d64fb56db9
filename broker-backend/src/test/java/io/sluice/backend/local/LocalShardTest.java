package io.sluice.backend.local;

import io.sluice.partition.PartitionOutcome;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.backend.storage.ShardStore;
import io.sluice.common.ManualClock;
import io.sluice.common.SqsError;
import io.sluice.common.SystemClock;
import io.sluice.partition.Effect;
import io.sluice.partition.NewMessage;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionConfig;
import io.sluice.partition.PartitionId;
import io.sluice.partition.PartitionResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
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

    /**
     * Commands and reads queued together run as one group: consecutive commands form one entry, and a read sees every
     * command queued before it (not the whole group's).
     */
    @Test
    void aReadInAGroupSeesTheCommandsQueuedBeforeIt() throws Exception {
        try (ShardStore store = ShardStore.open(dir, ShardStore.Durability.SYNC_WAL)) {
            LocalShard shard = new LocalShard(store, new ManualClock(1_000_000));
            shard.createPartition(P, PartitionConfig.STANDARD_DEFAULTS).join();
            java.util.concurrent.CountDownLatch entered = new java.util.concurrent.CountDownLatch(1);
            java.util.concurrent.CountDownLatch hold = new java.util.concurrent.CountDownLatch(1);
            shard.addListener(effects -> { // completions run on the shard thread here: this holds it
                if (entered.getCount() > 0) {
                    entered.countDown();
                    try {
                        hold.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            });
            shard.submit(P, new PartitionCommand.Send(List.of(NewMessage.of("m0", "first"))));
            assertTrue(entered.await(10, java.util.concurrent.TimeUnit.SECONDS));
            var second = shard.submit(P, new PartitionCommand.Send(List.of(NewMessage.of("m1", "second"))));
            var afterSecond = shard.counts(P);
            var third = shard.submit(P, new PartitionCommand.Send(List.of(NewMessage.of("m2", "third"))));
            var received = shard.submit(P, new PartitionCommand.Receive(10, 30, null));
            var afterAll = shard.counts(P);
            hold.countDown(); // the five tasks above are queued together: one group
            assertInstanceOf(PartitionResponse.Sent.class, second.join().response());
            assertInstanceOf(PartitionResponse.Sent.class, third.join().response());
            assertEquals(2, afterSecond.join().visible(), "the read saw the commands before it, not the third send");
            assertEquals(List.of("first", "second", "third"),
                    received.join().delivered().stream().map(d -> d.message().body()).toList(),
                    "a receive in the same entry as the sends carries their bodies");
            assertEquals(0, afterAll.join().visible());
            assertEquals(3, afterAll.join().inflight());
            shard.close();
        }
    }

    /** The sweep writes only to partitions with something to expire, as a replicated shard's leader does. */
    @Test
    void aSweepExpiresWhatIsDueAndWritesNothingElse() {
        ManualClock clock = new ManualClock(1_000_000);
        PartitionId idle = new PartitionId(4, 0);
        try (ShardStore store = ShardStore.open(dir, ShardStore.Durability.SYNC_WAL)) {
            LocalShard shard = new LocalShard(store, clock);
            shard.createPartition(P, PartitionConfig.STANDARD_DEFAULTS.withRetentionSeconds(60)).join();
            shard.createPartition(idle, PartitionConfig.STANDARD_DEFAULTS).join();
            shard.submit(P, new PartitionCommand.Send(List.of(NewMessage.of("m0", "short-lived")))).join();
            assertEquals(0, shard.sweep().join(), "nothing due yet");
            long applied = store.appliedIndex();
            assertEquals(0, shard.sweep().join());
            assertEquals(applied, store.appliedIndex(), "an idle sweep writes nothing");
            clock.advance(java.time.Duration.ofSeconds(61));
            assertEquals(1, shard.sweep().join(), "only the partition with an expired message");
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30))
                    .until(() -> shard.counts(P).join().visible() == 0);
            assertEquals(applied + 1, store.appliedIndex(), "one entry: the Expire");
            shard.close();
        }
    }

    /**
     * Nothing is applied when a delayed message comes due: the shard's wake-up at that deadline tells its listeners
     * (a frontend's parked long polls) as it tells of an arrival.
     */
    @Test
    void aDelayedMessageComingDueIsAnnouncedAsAnArrival() {
        List<Effect.MessagesAvailable> announced = new CopyOnWriteArrayList<>();
        try (ShardStore store = ShardStore.open(dir, ShardStore.Durability.SYNC_WAL)) {
            LocalShard shard = new LocalShard(store, SystemClock.INSTANCE);
            shard.createPartition(P, PartitionConfig.STANDARD_DEFAULTS).join();
            shard.addListener(effects -> effects.stream().filter(Effect.MessagesAvailable.class::isInstance)
                    .map(Effect.MessagesAvailable.class::cast).forEach(announced::add));
            long sent = System.nanoTime();
            shard.submit(P, new PartitionCommand.Send(List.of(NewMessage.of("m1", "late").withDelaySeconds(1)))).join();
            assertEquals(List.of(), announced, "nothing visible yet");
            await().atMost(Duration.ofSeconds(10)).until(() -> !announced.isEmpty());
            long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sent);
            assertEquals(List.of(new Effect.MessagesAvailable(P, 1)), announced);
            assertTrue(waited >= 900, "at its deadline, not before: " + waited + " ms");
            shard.close();
        }
    }
}
