package io.sluice.frontend.service;

import io.sluice.partition.PartitionOutcome;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.sluice.backend.local.LocalShard;
import io.sluice.backend.storage.ShardStore;
import io.sluice.catalog.QueueMetadata;
import io.sluice.common.SystemClock;
import io.sluice.common.validation.QueueAttributesValidator;
import io.sluice.frontend.FrontendConfig;
import io.sluice.metadata.raft.CachedCatalog;
import io.sluice.metadata.raft.MetadataClient;
import io.sluice.metadata.raft.MetadataPeers;
import io.sluice.metadata.raft.MetadataServer;
import io.sluice.partition.Effect;
import io.sluice.partition.NewMessage;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionConfig;
import io.sluice.partition.PartitionId;
import io.sluice.partition.PartitionService;
import io.sluice.partition.QueueCounts;
import io.sluice.partition.StoredMessage;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Dead-letter hand-offs on real parts (a one-member metadata group, a shard on RocksDB): a body that cannot be read
 * (a replica behind) never acknowledges the hand-off, and two movers executing one hand-off store one copy.
 */
class DeadLetterMoverTest {
    @TempDir
    Path dir;

    /** The shard as a frontend sees it, with reads of message bodies failing while {@code unreadable} is set. */
    static final class UnreadableBodies implements PartitionService {
        final LocalShard shard;
        volatile boolean unreadable;

        UnreadableBodies(LocalShard shard) {
            this.shard = shard;
        }

        @Override
        public CompletableFuture<StoredMessage> readMessage(PartitionId partition, long seq) {
            return unreadable ? CompletableFuture.completedFuture(null) : shard.readMessage(partition, seq);
        }

        @Override
        public CompletableFuture<PartitionOutcome> submit(PartitionId p, PartitionCommand c) {
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
        public CompletableFuture<List<Effect.DeadLetter>> pendingDeadLetters() {
            return shard.pendingDeadLetters();
        }

        @Override
        public CompletableFuture<Void> dropPartition(PartitionId p) {
            return shard.dropPartition(p);
        }

        @Override
        public void addListener(EffectListener listener) {
            shard.addListener(listener);
        }
    }

    @Test
    void anUnreadableBodyNeverAcknowledgesAndTwoMoversStoreOneCopy() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        MetadataPeers peers = new MetadataPeers(Map.of("meta-1", "127.0.0.1:" + port));
        MetadataServer metadata = new MetadataServer("meta-1", peers, dir.resolve("metadata"), SystemClock.INSTANCE,
                1, 30_000, 1_000);
        metadata.start();
        try (MetadataClient client = new MetadataClient(peers);
             CachedCatalog catalog = new CachedCatalog(client, 100);
             ShardStore store = ShardStore.open(dir.resolve("shard"), ShardStore.Durability.SYNC_WAL)) {
            LocalShard shard = new LocalShard(store, SystemClock.INSTANCE);
            UnreadableBodies partitions = new UnreadableBodies(shard);
            SqsServices services = new SqsServices(catalog, partitions, SystemClock.INSTANCE,
                    new FrontendConfig("us-east-1", "000000000000", null, 1 << 20, 1000), new ReceiptHandleSeal(() -> null));
            QueueMetadata dlq = create(catalog, services, "dlq", Map.of());
            QueueMetadata source = create(catalog, services, "src", Map.of("RedrivePolicy",
                    "{\"deadLetterTargetArn\":\"" + services.arn("dlq") + "\",\"maxReceiveCount\":\"1\"}"));
            PartitionId src = new PartitionId(source.queueId(), 0);
            PartitionId dead = new PartitionId(dlq.queueId(), 0);

            shard.submit(src, new PartitionCommand.Send(List.of(NewMessage.of("m1", "poison")))).join();
            shard.submit(src, new PartitionCommand.Receive(1, 0, null)).join();
            shard.submit(src, new PartitionCommand.Receive(1, 30, null)).join(); // over maxReceiveCount: handed off
            assertEquals(1, shard.counts(src).join().deadLetterPending());

            DeadLetterMover mover = new DeadLetterMover(services, Runnable::run);
            partitions.unreadable = true;
            mover.resumePending().join();
            Thread.sleep(500);
            assertEquals(1, shard.counts(src).join().deadLetterPending(), "not acknowledged without its copy");
            assertEquals(0, shard.counts(dead).join().visible());

            partitions.unreadable = false;
            DeadLetterMover other = new DeadLetterMover(services, Executors.newSingleThreadExecutor());
            CompletableFuture.allOf(mover.resumePending(), other.resumePending()).join(); // two frontends at once
            await().atMost(Duration.ofSeconds(60)).until(() -> shard.counts(src).join().deadLetterPending() == 0);
            assertEquals(1, shard.counts(dead).join().visible(), "one copy in the dead-letter queue");
            shard.close();
        } finally {
            metadata.close();
        }
    }

    private static QueueMetadata create(CachedCatalog catalog, SqsServices services, String name,
                                        Map<String, String> attributes) {
        QueueMetadata q = catalog.create(name, false, QueueAttributesValidator.forCreate(name, attributes).orElseThrow()
                .toStringMap(), Map.of(), 1, System.currentTimeMillis()).queue();
        services.applyPartitionConfig(q).join();
        return q;
    }
}
