package io.sluice.backend.agent;

import io.sluice.catalog.QueueMetadata;
import io.sluice.partition.StoredMessage;

/**
 * Where the primary's copies of a message (dead-letter hand-offs, move tasks) go in their destination queue: a FIFO
 * message by its group, as a send routes it (the group keeps its order on one partition); a standard one by its id,
 * so copies spread over a multi-partition queue like sends do, and a retried copy reaches the partition that
 * remembers its hand-off key (deduplication is per partition).
 */
final class CopyRouting {
    private CopyRouting() {
    }

    static int destinationPartition(QueueMetadata destination, StoredMessage m) {
        if (destination.partitions() <= 1) {
            return 0;
        }
        String key = destination.fifo() && m.groupId() != null ? m.groupId() : m.messageId();
        return Math.floorMod(key.hashCode(), destination.partitions());
    }
}
