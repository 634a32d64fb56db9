package io.sluice.frontend;

import io.sluice.catalog.QueueCatalog;
import io.sluice.catalog.QueueMetadata;
import io.sluice.partition.MoveTask;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionConfig;
import io.sluice.partition.PartitionId;
import io.sluice.partition.PartitionOutcome;
import io.sluice.partition.PartitionService;
import io.sluice.partition.QueueCounts;
import io.sluice.partition.StoredMessage;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/** Unit-test stand-ins for what a frontend talks to, as far as the action under test reads them. */
public final class FakeCluster {
    private FakeCluster() {
    }

    /** A catalog that lists the queues of a map (read live: a test may remove one) and changes nothing. */
    public static final class Catalog implements QueueCatalog {
        private final Map<String, QueueMetadata> queues;

        public Catalog(Map<String, QueueMetadata> queues) {
            this.queues = queues;
        }

        @Override
        public CreateResult create(String name, boolean fifo, Map<String, String> attributes, Map<String, String> tags,
                                   int partitions, long nowMillis) {
            throw new UnsupportedOperationException();
        }

        @Override
        public Optional<QueueMetadata> get(String name) {
            return Optional.ofNullable(queues.get(name));
        }

        @Override
        public List<QueueMetadata> list(String prefix) {
            return List.copyOf(queues.values());
        }

        @Override
        public Optional<QueueMetadata> delete(String name, long nowMillis) {
            return Optional.ofNullable(queues.remove(name));
        }

        @Override
        public Optional<QueueMetadata> setAttributes(String name, Map<String, String> attributes, long nowMillis) {
            throw new UnsupportedOperationException();
        }

        @Override
        public Optional<QueueMetadata> setTags(String name, Map<String, String> tags) {
            throw new UnsupportedOperationException();
        }

        @Override
        public Optional<QueueMetadata> raisePartitions(String name, int partitions) {
            throw new UnsupportedOperationException();
        }
    }

    /** A shard: subclasses say how commands and configuration waits end; every read is unsupported. */
    public abstract static class Shard implements PartitionService {
        @Override
        public abstract CompletableFuture<PartitionOutcome> submit(PartitionId partition, PartitionCommand command);

        @Override
        public abstract CompletableFuture<Boolean> awaitConfigured(PartitionId partition, long configVersion);

        @Override
        public CompletableFuture<Void> createPartition(PartitionId partition, PartitionConfig config) {
            throw new UnsupportedOperationException();
        }

        @Override
        public CompletableFuture<QueueCounts> counts(PartitionId partition) {
            throw new UnsupportedOperationException();
        }

        @Override
        public CompletableFuture<Integer> visibleNow(PartitionId partition) {
            throw new UnsupportedOperationException();
        }

        @Override
        public CompletableFuture<Long> nextDeadlineMillis(PartitionId partition) {
            throw new UnsupportedOperationException();
        }

        @Override
        public CompletableFuture<StoredMessage> readMessage(PartitionId partition, long seq) {
            throw new UnsupportedOperationException();
        }

        @Override
        public CompletableFuture<List<MoveTask>> moveTasks(PartitionId partition) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void addListener(EffectListener listener) {
        }
    }
}
