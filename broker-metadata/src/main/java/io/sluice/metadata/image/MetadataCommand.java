package io.sluice.metadata.image;

import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import java.util.List;
import java.util.Map;

/**
 * A request to change the catalog, as clients send it. The metadata leader stamps it ({@link Stamped}) with its
 * clock, its view of which backends are alive and the replication factor, and that stamped command is what the log
 * holds: every replica then derives the same records from it. Type names are stored: add, never rename.
 */
@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, property = "type")
@JsonSubTypes({
    @JsonSubTypes.Type(value = MetadataCommand.CreateQueue.class, name = "CreateQueue"),
    @JsonSubTypes.Type(value = MetadataCommand.SetQueueAttributes.class, name = "SetQueueAttributes"),
    @JsonSubTypes.Type(value = MetadataCommand.SetQueueTags.class, name = "SetQueueTags"),
    @JsonSubTypes.Type(value = MetadataCommand.DeleteQueue.class, name = "DeleteQueue"),
    @JsonSubTypes.Type(value = MetadataCommand.RegisterNode.class, name = "RegisterNode"),
    @JsonSubTypes.Type(value = MetadataCommand.ReplaceDeadNode.class, name = "ReplaceDeadNode"),
    @JsonSubTypes.Type(value = MetadataCommand.SetAccessKey.class, name = "SetAccessKey"),
    @JsonSubTypes.Type(value = MetadataCommand.EnsureShards.class, name = "EnsureShards"),
    @JsonSubTypes.Type(value = MetadataCommand.RaisePartitions.class, name = "RaisePartitions"),
    @JsonSubTypes.Type(value = MetadataCommand.Rebalance.class, name = "Rebalance"),
    @JsonSubTypes.Type(value = MetadataCommand.ReleaseReplicas.class, name = "ReleaseReplicas"),
    @JsonSubTypes.Type(value = MetadataCommand.InitReceiptSecret.class, name = "InitReceiptSecret"),
})
public sealed interface MetadataCommand {

    record CreateQueue(String name, boolean fifo, Map<String, String> attributes, Map<String, String> tags,
                       int partitions) implements MetadataCommand {
    }

    record SetQueueAttributes(String name, Map<String, String> attributes) implements MetadataCommand {
    }

    record SetQueueTags(String name, Map<String, String> tags) implements MetadataCommand {
    }

    record DeleteQueue(String name) implements MetadataCommand {
    }

    /** Raises a standard queue's partition count (never lowers it; FIFO queues keep theirs). */
    record RaisePartitions(String name, int partitions) implements MetadataCommand {
    }

    record RegisterNode(String nodeId, String address) implements MetadataCommand {
    }

    /** Move every partition replica off a node that has been dead past the grace period. */
    record ReplaceDeadNode(String nodeId) implements MetadataCommand {
    }

    /**
     * Sets the cluster's receipt-handle secret (random bytes, base64, chosen by the proposer) unless it has one: the
     * first proposal wins, later ones change nothing, so every frontend seals handles under the same secret.
     */
    record InitReceiptSecret(String secret) implements MetadataCommand {
        @Override
        public String toString() {
            return "InitReceiptSecret[secret=<redacted>]";
        }
    }

    record SetAccessKey(String accessKeyId, String secretKey, List<List<String>> allow) implements MetadataCommand {
        /** Never the secret: commands end up in logs and error messages. */
        @Override
        public String toString() {
            return "SetAccessKey[accessKeyId=" + accessKeyId + ", secretKey=<redacted>, allow=" + allow + "]";
        }
    }

    /**
     * Moves up to {@code maxMoves} shard replicas from the live backends holding the most to those holding the fewest
     * (e.g. onto newly added backends), one replica per shard, only in shards whose replicas are all alive.
     */
    record Rebalance(int maxMoves) implements MetadataCommand {
    }

    /**
     * A live backend gives up its replicas of these shards (it lost its copies with its disk): each is replaced by
     * the least-loaded other live backend that is not already a replica; a shard without a candidate keeps it listed.
     */
    record ReleaseReplicas(String nodeId, List<String> shardIds) implements MetadataCommand {
    }

    /** Creates shards until there are {@code count}, placing their replicas on the live backends. */
    record EnsureShards(int count) implements MetadataCommand {
    }

    /**
     * What the log holds: the command plus the leader's facts at proposal time, so applying it is a pure function.
     *
     * @param liveNodes          backends the leader saw heartbeating (placement chooses among them)
     * @param replicationFactor  replicas per partition (capped by the number of live nodes)
     */
    record Stamped(MetadataCommand command, long leaderTimeMillis, List<String> liveNodes, int replicationFactor) {
        public Stamped {
            liveNodes = List.copyOf(liveNodes);
        }
    }
}
