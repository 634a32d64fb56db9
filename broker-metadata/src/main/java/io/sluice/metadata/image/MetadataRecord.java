package io.sluice.metadata.image;

import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import io.sluice.catalog.QueueMetadata;
import java.util.List;
import java.util.Map;

/**
 * A change to the catalog. The image changes only by replaying records ({@link ClusterImage#replay}), on the
 * leader, on followers and at restart alike. Records are stored (in snapshots' history and in tests) by their type
 * name: add new types, never rename one.
 */
@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, property = "type")
@JsonSubTypes({
    @JsonSubTypes.Type(value = MetadataRecord.QueueCreated.class, name = "QueueCreated"),
    @JsonSubTypes.Type(value = MetadataRecord.QueueAttributesChanged.class, name = "QueueAttributesChanged"),
    @JsonSubTypes.Type(value = MetadataRecord.QueueTagsChanged.class, name = "QueueTagsChanged"),
    @JsonSubTypes.Type(value = MetadataRecord.QueueDeleted.class, name = "QueueDeleted"),
    @JsonSubTypes.Type(value = MetadataRecord.NodeRegistered.class, name = "NodeRegistered"),
    @JsonSubTypes.Type(value = MetadataRecord.PartitionAssigned.class, name = "PartitionAssigned"),
    @JsonSubTypes.Type(value = MetadataRecord.AccessKeySet.class, name = "AccessKeySet"),
    @JsonSubTypes.Type(value = MetadataRecord.ShardAssigned.class, name = "ShardAssigned"),
    @JsonSubTypes.Type(value = MetadataRecord.QueuePartitionsRaised.class, name = "QueuePartitionsRaised"),
    @JsonSubTypes.Type(value = MetadataRecord.ReceiptSecretSet.class, name = "ReceiptSecretSet"),
})
public sealed interface MetadataRecord {

    /** A queue and its first queue id; the next queue id becomes {@code queue.queueId() + 1}. */
    record QueueCreated(QueueMetadata queue) implements MetadataRecord {
    }

    /** A queue's partition count grew to {@code partitions} (the new partitions' assignments follow). */
    record QueuePartitionsRaised(String name, int partitions) implements MetadataRecord {
    }

    record QueueAttributesChanged(String name, Map<String, String> attributes, long modifiedSeconds)
            implements MetadataRecord {
    }

    record QueueTagsChanged(String name, Map<String, String> tags) implements MetadataRecord {
    }

    /** Removes the queue and its partition assignments; the name is held for 60 s. */
    record QueueDeleted(String name, long atMillis) implements MetadataRecord {
    }

    record NodeRegistered(String nodeId, String address, long atMillis) implements MetadataRecord {
    }

    /** Sets (or replaces) the replicas of one partition; {@code shardId} null when not sharded. */
    record PartitionAssigned(long queueId, int index, List<String> replicas, long epoch, String shardId)
            implements MetadataRecord {
    }

    /** Creates a shard or replaces its replicas. */
    record ShardAssigned(String shardId, String groupId, List<String> replicas, long epoch) implements MetadataRecord {
    }

    /**
     * An access key and its rules ({@code action glob -> queue glob} pairs; empty = everything). The secret is
     * stored as given: the catalog is as sensitive as a credentials file.
     */
    record AccessKeySet(String accessKeyId, String secretKey, List<List<String>> allow) implements MetadataRecord {
        /** Never the secret: records end up in logs and error messages. */
        @Override
        public String toString() {
            return "AccessKeySet[accessKeyId=" + accessKeyId + ", secretKey=<redacted>, allow=" + allow + "]";
        }
    }

    /** The cluster's receipt-handle secret (base64): frontends MAC every receipt handle under it. */
    record ReceiptSecretSet(String secret) implements MetadataRecord {
        @Override
        public String toString() {
            return "ReceiptSecretSet[secret=<redacted>]";
        }
    }
}
