package io.sluice.frontend.action;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sluice.catalog.QueueMetadata;
import io.sluice.common.ReceiptHandle;
import io.sluice.common.SqsError;
import io.sluice.common.SqsException;
import io.sluice.common.SystemClock;
import io.sluice.frontend.FakeCluster;
import io.sluice.frontend.FrontendConfig;
import io.sluice.frontend.protocol.Protocol;
import io.sluice.frontend.service.LongPolls;
import io.sluice.frontend.service.ReceiptHandleSeal;
import io.sluice.frontend.service.SqsServices;
import io.sluice.partition.DeliveredMessage;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionId;
import io.sluice.partition.PartitionOutcome;
import io.sluice.partition.PartitionResponse;
import io.sluice.partition.StoredMessage;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * A receive over a queue's partitions: the first partition of its rotation answering ServiceUnavailable (not ready:
 * just added by a split, its primary not done configuring it) counts as nothing there and the others decide; a queue
 * of one partition has no others, and the client hears ServiceUnavailable (which SDKs retry).
 */
class ReceiveFromPartitionsTest {
    private static final String SECRET = Base64.getEncoder().encodeToString(new byte[32]);

    @Test
    void aFirstPartitionNotReadyIsSkippedAndTheNextOneAnswers() {
        QueueMetadata queue = new QueueMetadata("jobs", 7, false, Map.of(), Map.of(), 0, 0, 2, 3);
        Shard shard = new Shard(new PartitionId(7, 0));
        ObjectNode answer = receive(queue, shard).join();
        assertEquals("from the ready partition", answer.get("Messages").get(0).get("Body").asText(), answer.toString());
        assertEquals(List.of(new PartitionId(7, 0), new PartitionId(7, 1)), shard.leased, "the first, then the next");
    }

    @Test
    void aQueueOfOnePartitionNotReadyAnswersServiceUnavailable() {
        QueueMetadata queue = new QueueMetadata("solo", 8, false, Map.of(), Map.of(), 0, 0, 1, 3);
        Shard shard = new Shard(new PartitionId(8, 0));
        CompletionException failed = assertThrows(CompletionException.class, () -> receive(queue, shard).join());
        SqsException e = assertInstanceOf(SqsException.class, failed.getCause());
        assertEquals(SqsError.SERVICE_UNAVAILABLE, e.failure().error());
    }

    private static CompletableFuture<ObjectNode> receive(QueueMetadata queue, Shard shard) {
        SqsServices services = new SqsServices(new FakeCluster.Catalog(Map.of(queue.name(), queue)), shard,
                SystemClock.INSTANCE, FrontendConfig.DEFAULTS, new ReceiptHandleSeal(() -> SECRET));
        ReceiveMessage receive = new ReceiveMessage(services, new LongPolls(SystemClock.INSTANCE));
        ActionContext ctx = new ActionContext("r1", Protocol.JSON, "key", "localhost", "/", null, () -> true,
                queue.name(), (action, name) -> true);
        return receive.execute(ctx, new Params(JsonNodeFactory.instance.objectNode()
                .put("QueueUrl", "http://localhost/000000000000/" + queue.name()).put("MaxNumberOfMessages", 1)));
    }

    /** Partitions with one visible message each, except one that is not ready; records where receives leased. */
    private static final class Shard extends FakeCluster.Shard {
        final PartitionId notReady;
        final List<PartitionId> leased = new CopyOnWriteArrayList<>();

        Shard(PartitionId notReady) {
            this.notReady = notReady;
        }

        @Override
        public CompletableFuture<PartitionOutcome> submit(PartitionId partition, PartitionCommand command) {
            leased.add(partition);
            if (partition.equals(notReady)) {
                return CompletableFuture.completedFuture(new PartitionOutcome(new PartitionResponse.Rejected(
                        SqsError.SERVICE_UNAVAILABLE.failure()), List.of(), List.of()));
            }
            PartitionResponse.Delivery delivery = new PartitionResponse.Delivery(1,
                    new ReceiptHandle(partition.queueId(), partition.index(), 1, 1), 1, 1_000);
            StoredMessage message = new StoredMessage("m-1", "from the ready partition", Map.of(), Map.of(), 1_000,
                    null, null, null, "", null, null);
            return CompletableFuture.completedFuture(new PartitionOutcome(new PartitionResponse.Received(
                    List.of(delivery)), List.of(), List.of(new DeliveredMessage(delivery, message))));
        }

        @Override
        public CompletableFuture<Integer> visibleNow(PartitionId partition) {
            return CompletableFuture.completedFuture(partition.equals(notReady) ? 0 : 1);
        }

        @Override
        public CompletableFuture<Boolean> awaitConfigured(PartitionId partition, long configVersion) {
            return CompletableFuture.completedFuture(true);
        }
    }
}
