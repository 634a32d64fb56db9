package io.sluice.frontend.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import io.sluice.catalog.QueueMetadata;
import io.sluice.common.SqsError;
import io.sluice.common.SystemClock;
import io.sluice.frontend.FakeCluster;
import io.sluice.frontend.FrontendConfig;
import io.sluice.partition.NewMessage;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionId;
import io.sluice.partition.PartitionOutcome;
import io.sluice.partition.PartitionResponse;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

/**
 * A send to a partition the catalog lists but its shard has not created yet (a split just added it, its primary
 * slow): once the wait for it runs out, the answer is ServiceUnavailable, which SDKs retry, not NonExistentQueue,
 * which they do not; a queue deleted meanwhile is NonExistentQueue.
 */
class SubmitToQueueTest {
    private static final QueueMetadata QUEUE = new QueueMetadata("jobs", 7, false, Map.of(), Map.of(), 0, 0, 2, 3);
    private static final PartitionId NEW_PARTITION = new PartitionId(7, 1);

    private final Map<String, QueueMetadata> queues = new ConcurrentHashMap<>(Map.of("jobs", QUEUE));

    @Test
    void aPartitionStillMissingAfterTheWaitIsRetryable() {
        PartitionOutcome o = services().submitToQueue(QUEUE, NEW_PARTITION, send()).join();
        var rejected = assertInstanceOf(PartitionResponse.Rejected.class, o.response());
        assertEquals(SqsError.SERVICE_UNAVAILABLE, rejected.failure().error());
    }

    @Test
    void aQueueDeletedMeanwhileDoesNotExist() {
        SqsServices services = services();
        queues.clear();
        PartitionOutcome o = services.submitToQueue(QUEUE, NEW_PARTITION, send()).join();
        var rejected = assertInstanceOf(PartitionResponse.Rejected.class, o.response());
        assertEquals(SqsError.QUEUE_DOES_NOT_EXIST, rejected.failure().error());
    }

    private static PartitionCommand send() {
        return new PartitionCommand.Send(List.of(NewMessage.of("m1", "body")));
    }

    private SqsServices services() {
        return new SqsServices(new FakeCluster.Catalog(queues), new MissingPartition(), SystemClock.INSTANCE, FrontendConfig.DEFAULTS,
                null);
    }

    /** A shard whose primary has not created the partition and does not within the wait. */
    private static final class MissingPartition extends FakeCluster.Shard {
        @Override
        public CompletableFuture<PartitionOutcome> submit(PartitionId partition, PartitionCommand command) {
            return CompletableFuture.completedFuture(new PartitionOutcome(new PartitionResponse.Rejected(
                    SqsError.QUEUE_DOES_NOT_EXIST.failure()), List.of(), List.of()));
        }

        @Override
        public CompletableFuture<Boolean> awaitConfigured(PartitionId partition, long configVersion) {
            return CompletableFuture.completedFuture(false);
        }
    }
}
