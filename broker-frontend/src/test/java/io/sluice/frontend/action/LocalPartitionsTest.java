package io.sluice.frontend.action;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sluice.catalog.QueueMetadata;
import io.sluice.common.ReceiptHandle;
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
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * Where a frontend sends and receives when a queue has several partitions: a standard queue's send request goes to
 * one partition with all its messages (one command), three in four chosen among the partitions led in this process
 * when there are any; a FIFO queue's messages go where their group hashes whatever leads where; three receives in four try a
 * partition led here first, the fourth follows the rotation, so every partition is still tried first now and then.
 */
class LocalPartitionsTest {
    private static final String SECRET = Base64.getEncoder().encodeToString(new byte[32]);

    @Test
    void aStandardBatchGoesWholeToOnePartitionMostlyOneLedHere() {
        QueueMetadata queue = new QueueMetadata("jobs", 7, false, Map.of(), Map.of(), 0, 0, 4, 3);
        Shard shard = new Shard(Set.of(1, 3));
        for (int i = 0; i < 400; i++) {
            sendBatch(queue, shard, 10, false);
        }
        assertEquals(400, shard.sends.size(), "one command per request");
        shard.sends.forEach(s -> assertEquals(10, s.size(), "the batch's ten messages together"));
        Map<Integer, Integer> byPartition = new TreeMap<>();
        shard.sendPartitions.forEach(p -> byPartition.merge(p, 1, Integer::sum));
        assertEquals(4, byPartition.size(), "every partition takes sends: " + byPartition);
        // expected: 350 at the two led here (three in four, and half of the fourth), 25 at each other one
        assertTrue(byPartition.get(1) + byPartition.get(3) >= 320, "mostly the partitions led here: " + byPartition);
        assertTrue(byPartition.get(0) >= 5 && byPartition.get(2) >= 5, "the others now and then: " + byPartition);
    }

    @Test
    void withNoPartitionLedHereBatchesStillGoWholeAndSpreadOverAll() {
        QueueMetadata queue = new QueueMetadata("jobs", 7, false, Map.of(), Map.of(), 0, 0, 4, 3);
        Shard shard = new Shard(Set.of());
        for (int i = 0; i < 200; i++) {
            sendBatch(queue, shard, 10, false);
        }
        assertEquals(200, shard.sends.size(), "one command per request");
        assertEquals(new TreeSet<>(Set.of(0, 1, 2, 3)), new TreeSet<>(shard.sendPartitions), "every partition used");
    }

    @Test
    void fifoMessagesGoWhereTheirGroupHashesWhateverLeadsHere() {
        QueueMetadata queue = new QueueMetadata("jobs.fifo", 8, true, Map.of("FifoQueue", "true",
                "DeduplicationScope", "messageGroup", "FifoThroughputLimit", "perMessageGroupId"), Map.of(), 0, 0, 4,
                3);
        Shard shard = new Shard(Set.of(1));
        sendBatch(queue, shard, 10, true);
        Map<Integer, Integer> expected = new TreeMap<>();
        for (int i = 0; i < 10; i++) {
            expected.merge(Math.floorMod(("g" + i).hashCode(), 4), 1, Integer::sum);
        }
        Map<Integer, Integer> got = new TreeMap<>();
        for (int i = 0; i < shard.sends.size(); i++) {
            got.merge(shard.sendPartitions.get(i), shard.sends.get(i).size(), Integer::sum);
        }
        assertEquals(expected, got, "each group's message at its hash partition");
    }

    @Test
    void withNoPartitionLedHereReceivesRotateEvenly() {
        QueueMetadata queue = new QueueMetadata("jobs", 7, false, Map.of(), Map.of(), 0, 0, 4, 3);
        assertEquals(Map.of(0, 100, 1, 100, 2, 100, 3, 100), firstTried(queue, new Shard(Set.of()), 400));
    }

    @Test
    void threeReceivesInFourTryAPartitionLedHereFirstAndEveryPartitionIsTriedFirstNowAndThen() {
        QueueMetadata queue = new QueueMetadata("jobs", 7, false, Map.of(), Map.of(), 0, 0, 4, 3);
        Map<Integer, Integer> firstTried = firstTried(queue, new Shard(Set.of(2)), 400);
        assertEquals(4, firstTried.size(), "every partition tried first at times: " + firstTried);
        assertTrue(firstTried.get(2) >= 300, "three in four (and its rotation turns) at the partition led here: "
                + firstTried);
        for (int p : List.of(0, 1, 3)) {
            assertTrue(firstTried.get(p) >= 20, "a partition led elsewhere gets its turns: " + firstTried);
        }
    }

    /** Where each of {@code n} receives leased first, by partition. */
    private static Map<Integer, Integer> firstTried(QueueMetadata queue, Shard shard, int n) {
        ReceiveMessage receive = new ReceiveMessage(services(queue, shard), new LongPolls(SystemClock.INSTANCE));
        Map<Integer, Integer> firstTried = new TreeMap<>();
        for (int i = 0; i < n; i++) {
            shard.leases.clear();
            ObjectNode answer = receive.execute(context(queue), new Params(JsonNodeFactory.instance.objectNode()
                    .put("QueueUrl", "http://localhost/000000000000/" + queue.name())
                    .put("MaxNumberOfMessages", 1))).join();
            assertEquals(1, answer.get("Messages").size(), answer.toString());
            firstTried.merge(shard.leases.get(0), 1, Integer::sum);
        }
        return firstTried;
    }

    private static void sendBatch(QueueMetadata queue, Shard shard, int n, boolean fifo) {
        ArrayNode entries = JsonNodeFactory.instance.arrayNode();
        for (int i = 0; i < n; i++) {
            ObjectNode e = entries.addObject().put("Id", "e" + i).put("MessageBody", "body " + i);
            if (fifo) {
                e.put("MessageGroupId", "g" + i).put("MessageDeduplicationId", "d" + i);
            }
        }
        ObjectNode params = JsonNodeFactory.instance.objectNode()
                .put("QueueUrl", "http://localhost/000000000000/" + queue.name());
        params.set("Entries", entries);
        ObjectNode answer = new SendActions.SendMessageBatch(services(queue, shard)).execute(context(queue),
                new Params(params)).join();
        assertEquals(n, answer.get("Successful").size(), answer.toString());
    }

    private static SqsServices services(QueueMetadata queue, Shard shard) {
        return new SqsServices(new FakeCluster.Catalog(Map.of(queue.name(), queue)), shard, SystemClock.INSTANCE,
                FrontendConfig.DEFAULTS, new ReceiptHandleSeal(() -> SECRET));
    }

    private static ActionContext context(QueueMetadata queue) {
        return new ActionContext("r1", Protocol.JSON, "key", "localhost", "/", null, () -> true, queue.name(),
                (action, name) -> true);
    }

    /** Partitions some of which are led "here"; sends are recorded and accepted, every receive leases one message. */
    private static final class Shard extends FakeCluster.Shard {
        final Set<Integer> ledHere;
        final List<List<?>> sends = new CopyOnWriteArrayList<>();
        final List<Integer> sendPartitions = new CopyOnWriteArrayList<>();
        final List<Integer> leases = new CopyOnWriteArrayList<>();

        Shard(Set<Integer> ledHere) {
            this.ledHere = ledHere;
        }

        @Override
        public boolean ledHere(PartitionId partition) {
            return ledHere.contains(partition.index());
        }

        @Override
        public CompletableFuture<PartitionOutcome> submit(PartitionId partition, PartitionCommand command) {
            if (command instanceof PartitionCommand.Send send) {
                sends.add(send.messages());
                sendPartitions.add(partition.index());
                List<PartitionResponse.SentMessage> sent = new ArrayList<>();
                for (int i = 0; i < send.messages().size(); i++) {
                    sent.add(new PartitionResponse.SentMessage("m-" + i, i, null, false));
                }
                return CompletableFuture.completedFuture(new PartitionOutcome(new PartitionResponse.Sent(sent),
                        List.of(), List.of()));
            }
            leases.add(partition.index());
            PartitionResponse.Delivery delivery = new PartitionResponse.Delivery(1,
                    new ReceiptHandle(partition.queueId(), partition.index(), 1, 1), 1, 1_000);
            StoredMessage message = new StoredMessage("m-1", "a message", Map.of(), Map.of(), 1_000, null, null,
                    null, "", null, null);
            return CompletableFuture.completedFuture(new PartitionOutcome(new PartitionResponse.Received(
                    List.of(delivery)), List.of(), List.of(new DeliveredMessage(delivery, message))));
        }

        @Override
        public CompletableFuture<Integer> visibleNow(PartitionId partition) {
            return CompletableFuture.completedFuture(1);
        }

        @Override
        public CompletableFuture<Boolean> awaitConfigured(PartitionId partition, long configVersion) {
            return CompletableFuture.completedFuture(true);
        }
    }
}
