package io.sluice.backend.agent;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.backend.shard.OneReplicaShard;
import io.sluice.catalog.QueueMetadata;
import io.sluice.common.SystemClock;
import io.sluice.common.validation.QueueAttributesValidator;
import io.sluice.metadata.raft.CachedCatalog;
import io.sluice.metadata.raft.MetadataClient;
import io.sluice.partition.NewMessage;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionConfig;
import io.sluice.partition.PartitionId;
import io.sluice.partition.PartitionOutcome;
import io.sluice.partition.PartitionService;
import io.sluice.partition.QueueCounts;
import io.sluice.partition.StoredMessage;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The primary's dead-letter hand-offs on real parts (a one-member metadata group, a shard on RocksDB): a body that
 * cannot be read never acknowledges the hand-off; an unreachable dead-letter queue leaves it pending, retried with a
 * growing delay, and it completes with one copy once the queue is back; two drivers executing one hand-off at once (an
 * old and a new leader) store one copy.
 */
class DeadLetterHandOffsTest {
    @TempDir
    Path dir;
    OneMemberMetadata metadata;
    MetadataClient client;
    CachedCatalog catalog;
    OneReplicaShard shard;
    Flaky partitions;
    QueueMetadata dlq;
    PartitionId src;
    PartitionId dead;

    /** The data plane with body reads or the dead-letter queue's partition failing while their flag is set. */
    static final class Flaky implements PartitionService {
        final OneReplicaShard shard;
        final PartitionId deadLetterPartition;
        volatile boolean unreadable;
        volatile boolean deadLetterQueueDown;
        /** Sends to the dead-letter queue's partition, and the messages they carried. */
        final java.util.concurrent.atomic.AtomicInteger copySends = new java.util.concurrent.atomic.AtomicInteger();
        final java.util.concurrent.atomic.AtomicInteger copies = new java.util.concurrent.atomic.AtomicInteger();

        Flaky(OneReplicaShard shard, PartitionId deadLetterPartition) {
            this.shard = shard;
            this.deadLetterPartition = deadLetterPartition;
        }

        @Override
        public CompletableFuture<StoredMessage> readMessage(PartitionId partition, long seq) {
            return unreadable ? CompletableFuture.completedFuture(null) : shard.readMessage(partition, seq);
        }

        @Override
        public CompletableFuture<PartitionOutcome> submit(PartitionId p, PartitionCommand c) {
            if (deadLetterQueueDown && p.equals(deadLetterPartition)) {
                return CompletableFuture.failedFuture(new java.io.IOException("its shard has no leader"));
            }
            if (p.equals(deadLetterPartition) && c instanceof PartitionCommand.Send send) {
                copySends.incrementAndGet();
                copies.addAndGet(send.messages().size());
            }
            return shard.submit(p, c);
        }

        @Override
        public CompletableFuture<Void> createPartition(PartitionId p, PartitionConfig config) {
            return shard.createPartition(p, config);
        }

        @Override
        public CompletableFuture<QueueCounts> counts(PartitionId p) {
            return shard.counts(p);
        }

        @Override
        public CompletableFuture<Integer> visibleNow(PartitionId p) {
            return shard.visibleNow(p);
        }

        @Override
        public CompletableFuture<Long> nextDeadlineMillis(PartitionId p) {
            return shard.nextDeadlineMillis(p);
        }

        @Override
        public CompletableFuture<Boolean> awaitConfigured(PartitionId p, long version) {
            return shard.awaitConfigured(p, version);
        }

        @Override
        public CompletableFuture<List<io.sluice.partition.MoveTask>> moveTasks(PartitionId p) {
            return shard.moveTasks(p);
        }

        @Override
        public void addListener(EffectListener listener) {
            shard.addListener(listener);
        }
    }

    @BeforeEach
    void start() throws Exception {
        metadata = OneMemberMetadata.start(dir.resolve("metadata"));
        client = metadata.client();
        catalog = new CachedCatalog(client, 100);
        shard = new OneReplicaShard(dir.resolve("shard"), SystemClock.INSTANCE);
        dlq = create("dlq", Map.of());
        QueueMetadata source = create("src", Map.of("RedrivePolicy",
                "{\"deadLetterTargetArn\":\"arn:aws:sqs:us-east-1:000000000000:dlq\",\"maxReceiveCount\":\"1\"}"));
        src = new PartitionId(source.queueId(), 0);
        dead = new PartitionId(dlq.queueId(), 0);
        partitions = new Flaky(shard, dead);
    }

    @AfterEach
    void stop() throws Exception {
        for (AutoCloseable c : new AutoCloseable[] {shard, catalog, metadata}) {
            if (c != null) { // a start that failed part of the way
                c.close();
            }
        }
    }

    private QueueMetadata create(String name, Map<String, String> attributes) {
        var validated = QueueAttributesValidator.forCreate(name, attributes).orElseThrow();
        QueueMetadata q = catalog.create(name, false, validated.toStringMap(), Map.of(), 1,
                System.currentTimeMillis()).queue();
        shard.createPartition(new PartitionId(q.queueId(), 0), PartitionConfig.forQueue(q, validated, 1000)).join();
        return q;
    }

    /** Sends a message and receives it twice: over maxReceiveCount 1, the second receive hands it off. */
    private void handOff(String body) {
        shard.submit(src, new PartitionCommand.Send(List.of(NewMessage.of("m-" + body, body)))).join();
        shard.submit(src, new PartitionCommand.Receive(1, 0, null)).join();
        shard.submit(src, new PartitionCommand.Receive(1, 30, null)).join();
    }

    private DeadLetterHandOffs driver() {
        return new DeadLetterHandOffs(catalog::image, catalog::refresh, partitions,
                () -> shard.core().pendingDeadLetters(), System::nanoTime);
    }

    @Test
    void anUnreadableBodyNeverAcknowledgesAndTwoDriversStoreOneCopy() throws Exception {
        handOff("poison");
        assertEquals(1, shard.counts(src).join().deadLetterPending());
        assertTrue(shard.counts(src).join().oldestHandOffMillis() > 0, "the pending hand-off's time is known");

        partitions.unreadable = true;
        try (DeadLetterHandOffs driver = driver().start()) {
            await().atMost(Duration.ofSeconds(30)).until(() -> driver.failedAttempts() >= 1);
            assertEquals(1, shard.counts(src).join().deadLetterPending(), "not acknowledged without its copy");
            assertEquals(0, shard.counts(dead).join().visible());

            partitions.unreadable = false;
            try (DeadLetterHandOffs other = driver()) {
                other.scan(); // a second primary (the old leader, say) at the same time
                await().atMost(Duration.ofSeconds(60)).until(() -> shard.counts(src).join().deadLetterPending() == 0);
            }
            assertEquals(1, shard.counts(dead).join().visible(), "one copy in the dead-letter queue");
            assertEquals(-1, shard.counts(src).join().oldestHandOffMillis());
        }
    }

    @Test
    void anUnreachableDeadLetterQueueKeepsItPendingWithGrowingDelaysThenOneCopy() throws Exception {
        partitions.deadLetterQueueDown = true;
        java.util.concurrent.atomic.AtomicLong nanos = new java.util.concurrent.atomic.AtomicLong();
        try (DeadLetterHandOffs driver = new DeadLetterHandOffs(catalog::image, catalog::refresh, partitions,
                () -> shard.core().pendingDeadLetters(), nanos::get)) {
            handOff("a");
            handOff("b");
            // a scan every second of the driver's (manual) clock: each hand-off is tried at 0 s, again 1 s after its
            // failure, then 2 s after the next (at 3 s), then not before 7 s: not once per scan
            long[] failedAfterScanAt = {2, 4, 4, 6, 6};
            for (int t = 0; t < failedAfterScanAt.length; t++) {
                nanos.set(TimeUnit.SECONDS.toNanos(t));
                driver.scan();
                long want = failedAfterScanAt[t];
                await().atMost(Duration.ofSeconds(30)).until(() -> driver.failedAttempts() == want);
            }
            assertEquals(2, shard.counts(src).join().deadLetterPending(), "pending while the queue is unreachable");
            assertEquals(0, shard.counts(dead).join().visible());

            partitions.deadLetterQueueDown = false;
            nanos.set(TimeUnit.SECONDS.toNanos(7));
            driver.scan();
            await().atMost(Duration.ofSeconds(60)).until(() -> shard.counts(src).join().deadLetterPending() == 0);
            assertEquals(2, shard.counts(dead).join().visible(), "one copy of each");
            assertEquals(2, driver.moved());
        }
    }

    /**
     * A poison flood moves in batches (a few sends for hundreds of hand-offs, not one each), and a FIFO group's
     * exhausted messages reach the dead-letter queue in their order.
     */
    @Test
    void manyHandOffsMoveInBatchesAndAFifoGroupKeepsItsOrder() throws Exception {
        QueueMetadata fifoDlq = create("dlq.fifo", Map.of("FifoQueue", "true"));
        QueueMetadata fifoSource = create("src.fifo", Map.of("FifoQueue", "true", "RedrivePolicy",
                "{\"deadLetterTargetArn\":\"arn:aws:sqs:us-east-1:000000000000:dlq.fifo\",\"maxReceiveCount\":\"1\"}"));
        PartitionId from = new PartitionId(fifoSource.queueId(), 0);
        PartitionId to = new PartitionId(fifoDlq.queueId(), 0);
        partitions = new Flaky(shard, to);
        int n = 250;
        for (int i = 0; i < n; i += 10) {
            List<NewMessage> batch = new java.util.ArrayList<>();
            for (int j = i; j < i + 10; j++) {
                batch.add(NewMessage.fifo("m-" + j, "body-" + j, "g", "d-" + j));
            }
            shard.submit(from, new PartitionCommand.Send(batch)).join();
        }
        // each receive hands off what it leased before (maxReceiveCount 1) and leases the group's next ten
        for (int i = 0; i < 200 && shard.counts(from).join().deadLetterPending() < n; i++) {
            shard.submit(from, new PartitionCommand.Receive(10, 0, null)).join();
        }
        assertEquals(n, shard.counts(from).join().deadLetterPending());

        try (DeadLetterHandOffs driver = driver().start()) {
            await().atMost(Duration.ofSeconds(60)).until(() -> shard.counts(from).join().deadLetterPending() == 0);
            assertEquals(n, driver.moved());
        }
        assertEquals(n, partitions.copies.get(), "one copy each");
        assertTrue(partitions.copySends.get() <= 2 * ((n + DeadLetterHandOffs.BATCH - 1) / DeadLetterHandOffs.BATCH),
                "batched: " + partitions.copySends.get() + " sends for " + n + " hand-offs");
        List<String> order = new java.util.ArrayList<>();
        while (order.size() < n) {
            PartitionOutcome got = shard.submit(to, new PartitionCommand.Receive(10, 30, null)).join();
            assertTrue(!got.delivered().isEmpty(), "the group goes on after " + order.size());
            got.delivered().forEach(d -> order.add(d.message().body()));
            shard.submit(to, new PartitionCommand.Delete(got.delivered().stream()
                    .map(d -> d.delivery().receiptHandle()).toList())).join();
        }
        for (int i = 0; i < n; i++) {
            assertEquals("body-" + i, order.get(i), "the group's order in the dead-letter queue");
        }
    }

    /**
     * The dead-letter queue deleted a moment ago, still in the driver's cached catalog (which lags a deletion): the
     * copy lands in a partition not yet retired, but the hand-off is not acknowledged, so the message stays pending at
     * its source instead of going nowhere.
     */
    @Test
    void copiesIntoADeadLetterQueueDeletedMeanwhileAreNotAcknowledged() throws Exception {
        handOff("late");
        io.sluice.metadata.image.ClusterImage stale = catalog.image();
        catalog.delete("dlq", System.currentTimeMillis());
        try (DeadLetterHandOffs driver = new DeadLetterHandOffs(() -> stale, catalog::refresh, partitions,
                () -> shard.core().pendingDeadLetters(), System::nanoTime)) {
            driver.scan();
            await().atMost(Duration.ofSeconds(30)).until(() -> driver.failedAttempts() >= 1);
            assertEquals(1, partitions.copies.get(), "copied into the partition the cached catalog still lists");
            assertEquals(0, driver.moved());
            assertEquals(1, shard.counts(src).join().deadLetterPending(), "not acknowledged: still pending");
        }
    }
}
