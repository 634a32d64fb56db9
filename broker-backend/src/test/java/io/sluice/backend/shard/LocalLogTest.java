package io.sluice.backend.shard;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.common.ManualClock;
import io.sluice.common.SqsError;
import io.sluice.common.SystemClock;
import io.sluice.partition.Effect;
import io.sluice.partition.NewMessage;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionConfig;
import io.sluice.partition.PartitionId;
import io.sluice.partition.PartitionOutcome;
import io.sluice.partition.PartitionResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A one-replica shard's local log under the shard's core, reached as a frontend reaches any shard (through
 * {@code ShardedPartitionService}): concurrent commands, arrivals learnt from the parked {@code AWAIT} after
 * durability, restart from disk.
 */
class LocalLogTest {
    static final PartitionId P = new PartitionId(3, 0);
    @TempDir
    Path dir;

    @Test
    void concurrentSendsAreAllAppliedAndSurviveReopening() {
        ManualClock clock = new ManualClock(1_000_000);
        List<Effect> arrivals = new CopyOnWriteArrayList<>();
        try (OneReplicaShard shard = new OneReplicaShard(dir, clock)) {
            shard.service().addListener(arrivals::addAll);
            shard.createPartition(P, PartitionConfig.STANDARD_DEFAULTS).join();
            List<CompletableFuture<PartitionOutcome>> sends = new ArrayList<>();
            for (int i = 0; i < 500; i++) {
                sends.add(shard.submit(P, new PartitionCommand.Send(List.of(NewMessage.of("m" + i, "body " + i)))));
            }
            CompletableFuture.allOf(sends.toArray(CompletableFuture[]::new)).join();
            assertEquals(500, shard.counts(P).join().visible());
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> arrivals.stream().anyMatch(Effect.MessagesAvailable.class::isInstance));
            long[] stats = shard.log().stats();
            assertEquals(501, stats[1], "every command in an entry");
            assertTrue(stats[0] <= stats[1], "entries " + stats[0]);
        }
        try (OneReplicaShard shard = new OneReplicaShard(dir, clock)) {
            assertEquals(1, shard.core().openStored(10));
            assertEquals(500, shard.counts(P).join().visible(), "every acknowledged send is on disk");
            var got = shard.submit(P, new PartitionCommand.Receive(10, 30, null)).join();
            assertEquals(10, got.delivered().size());
            assertEquals("body 0", got.delivered().get(0).message().body());
        }
    }

    @Test
    void unknownPartitionIsQueueDoesNotExist() {
        try (OneReplicaShard shard = new OneReplicaShard(dir, new ManualClock(0))) {
            var outcome = shard.submit(new PartitionId(99, 0), new PartitionCommand.Purge()).join();
            var rejected = assertInstanceOf(PartitionResponse.Rejected.class, outcome.response());
            assertEquals(SqsError.QUEUE_DOES_NOT_EXIST, rejected.failure().error());
        }
    }

    /**
     * Commands and reads queued together run as one group: consecutive commands form one entry, and a read sees every
     * command queued before it (not the whole group's).
     */
    @Test
    void aReadInAGroupSeesTheCommandsQueuedBeforeIt() throws Exception {
        try (OneReplicaShard shard = new OneReplicaShard(dir, new ManualClock(1_000_000))) {
            shard.createPartition(P, PartitionConfig.STANDARD_DEFAULTS).join();
            CountDownLatch entered = new CountDownLatch(1);
            CountDownLatch hold = new CountDownLatch(1);
            shard.addListener(effects -> { // the leader's listeners run on the log thread once durable: this holds it
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
            assertTrue(entered.await(10, TimeUnit.SECONDS));
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
        }
    }

    /** The sweep writes only to partitions with something to expire, as a replicated shard's leader does. */
    @Test
    void aSweepExpiresWhatIsDueAndWritesNothingElse() {
        ManualClock clock = new ManualClock(1_000_000);
        PartitionId idle = new PartitionId(4, 0);
        try (OneReplicaShard shard = new OneReplicaShard(dir, clock)) {
            shard.createPartition(P, PartitionConfig.STANDARD_DEFAULTS.withRetentionSeconds(60)).join();
            shard.createPartition(idle, PartitionConfig.STANDARD_DEFAULTS).join();
            shard.submit(P, new PartitionCommand.Send(List.of(NewMessage.of("m0", "short-lived")))).join();
            assertEquals(0, shard.sweep(), "nothing due yet");
            long applied = shard.core().appliedIndex();
            assertEquals(0, shard.sweep());
            assertEquals(applied, shard.core().appliedIndex(), "an idle sweep writes nothing");
            clock.advance(Duration.ofSeconds(61));
            assertEquals(1, shard.sweep(), "only the partition with an expired message");
            await().atMost(Duration.ofSeconds(30)).until(() -> shard.counts(P).join().visible() == 0);
            assertEquals(applied + 1, shard.core().appliedIndex(), "one entry: the Expire");
        }
    }

    /**
     * Nothing is applied when a delayed message comes due: the shard's wake-up at that deadline answers the parked
     * {@code AWAIT} (a frontend's long polls) as an arrival does, exactly as a replicated shard's leader does.
     */
    @Test
    void aDelayedMessageComingDueIsAnnouncedAsAnArrival() {
        List<Effect.MessagesAvailable> announced = new CopyOnWriteArrayList<>();
        try (OneReplicaShard shard = new OneReplicaShard(dir, SystemClock.INSTANCE)) {
            shard.createPartition(P, PartitionConfig.STANDARD_DEFAULTS).join();
            shard.service().addListener(effects -> effects.stream().filter(Effect.MessagesAvailable.class::isInstance)
                    .map(Effect.MessagesAvailable.class::cast).forEach(announced::add));
            await().atMost(Duration.ofSeconds(10)).until(() -> shard.core().parkedAwaits() == 1);
            long sent = System.nanoTime();
            shard.submit(P, new PartitionCommand.Send(List.of(NewMessage.of("m1", "late").withDelaySeconds(1)))).join();
            assertEquals(List.of(), announced, "nothing visible yet");
            await().atMost(Duration.ofSeconds(10)).until(() -> !announced.isEmpty());
            long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sent);
            assertEquals(List.of(new Effect.MessagesAvailable(P, 1)), announced);
            assertTrue(waited >= 900, "at its deadline, not before: " + waited + " ms");
        }
    }
}
