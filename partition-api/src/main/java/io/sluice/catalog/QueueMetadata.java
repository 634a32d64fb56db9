package io.sluice.catalog;

import java.util.Map;
import java.util.Objects;

/**
 * What the catalog knows about one queue.
 *
 * @param queueId     this incarnation's id: never reused, so handles and partitions of a deleted queue are foreign
 *                    to a re-created one
 * @param attributes  the settable attributes (section 4 names), defaults applied, as SQS renders them
 * @param partitions  number of partitions (1 unless the queue asks for more)
 * @param configVersion 1 at creation, one more with each change of its attributes: partitions are configured with
 *                    it and ignore an older version than the one they have, and a shard's leader repairs those that
 *                    lag the catalog
 */
public record QueueMetadata(
        String name,
        long queueId,
        boolean fifo,
        Map<String, String> attributes,
        Map<String, String> tags,
        long createdTimestampSeconds,
        long lastModifiedTimestampSeconds,
        int partitions,
        long configVersion) {

    public QueueMetadata {
        Objects.requireNonNull(name, "name");
        attributes = Map.copyOf(attributes);
        tags = Map.copyOf(tags);
        if (partitions < 1) {
            throw new IllegalArgumentException("a queue has at least one partition");
        }
    }

    public QueueMetadata withAttributes(Map<String, String> next, long nowSeconds) {
        return new QueueMetadata(name, queueId, fifo, next, tags, createdTimestampSeconds, nowSeconds, partitions,
                configVersion + 1);
    }

    public QueueMetadata withPartitions(int count) {
        return new QueueMetadata(name, queueId, fifo, attributes, tags, createdTimestampSeconds,
                lastModifiedTimestampSeconds, count, configVersion);
    }

    public QueueMetadata withTags(Map<String, String> next) {
        return new QueueMetadata(name, queueId, fifo, attributes, next, createdTimestampSeconds,
                lastModifiedTimestampSeconds, partitions, configVersion);
    }
}
