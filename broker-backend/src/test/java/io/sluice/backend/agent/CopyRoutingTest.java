package io.sluice.backend.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.sluice.catalog.QueueMetadata;
import io.sluice.partition.StoredMessage;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** Dead-letter hand-offs and move tasks route their copies by one rule. */
class CopyRoutingTest {
    private static QueueMetadata queue(boolean fifo, int partitions) {
        return new QueueMetadata(fifo ? "d.fifo" : "d", 7, fifo, Map.of(), Map.of(), 100, 100, partitions, 1);
    }

    private static StoredMessage message(String id, String group) {
        return new StoredMessage(id, "body", Map.of(), Map.of(), 1L, group, null, null, "sender", null);
    }

    @Test
    void standardCopiesSpreadOverEveryPartitionByMessageIdAndARetryTakesTheSamePath() {
        QueueMetadata dlq = queue(false, 4);
        Map<Integer, Integer> perPartition = new HashMap<>();
        for (int i = 0; i < 400; i++) {
            StoredMessage m = message(UUID.randomUUID().toString(), null);
            int p = CopyRouting.destinationPartition(dlq, m);
            assertEquals(p, CopyRouting.destinationPartition(dlq, m), "a retried copy must meet its hand-off key");
            perPartition.merge(p, 1, Integer::sum);
        }
        assertEquals(4, perPartition.size(), "copies reach every partition: " + perPartition);
        perPartition.values().forEach(n -> assertEquals(100, n, 60, "spread: " + perPartition));
    }

    @Test
    void fifoCopiesFollowTheirGroupAndASinglePartitionTakesEverything() {
        QueueMetadata fifo = queue(true, 4);
        int p = CopyRouting.destinationPartition(fifo, message("a", "user-1"));
        for (int i = 0; i < 50; i++) {
            assertEquals(p, CopyRouting.destinationPartition(fifo, message(UUID.randomUUID().toString(), "user-1")));
        }
        assertEquals(Math.floorMod("user-1".hashCode(), 4), p);
        assertEquals(0, CopyRouting.destinationPartition(queue(false, 1), message("x", null)));
        assertEquals(0, CopyRouting.destinationPartition(queue(true, 1), message("x", "g")));
    }
}
