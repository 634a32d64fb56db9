package io.sluice.server;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sluice.catalog.QueueMetadata;
import io.sluice.metadata.image.ClusterImage;
import io.sluice.metadata.image.PartitionAssignment;
import java.util.Map;
import java.util.function.Predicate;

/**
 * The operator's view served as {@code GET /admin/status}: metadata members and their roles, backends and their
 * load, queues with their partitions, replicas, leader and whether they are under-replicated.
 */
final class ClusterStatus {
    private ClusterStatus() {
    }

    /**
     * @param memberRoles metadata members as this node sees them: id → "leader" / "follower" / "unknown"
     * @param addresses   metadata member addresses
     * @param alive       whether a backend is alive (the leader's view; true where unknown)
     * @param replicationFactor the configured factor, to flag under-replicated partitions
     */
    static ObjectNode render(ClusterImage image, Map<String, String> memberRoles, Map<String, String> addresses,
                             Predicate<String> alive, int replicationFactor) {
        return render(image, memberRoles, addresses, alive, true, replicationFactor);
    }

    /** @param livenessKnown false where this node does not track liveness (only the metadata leader does) */
    static ObjectNode render(ClusterImage image, Map<String, String> memberRoles, Map<String, String> addresses,
                             Predicate<String> alive, boolean livenessKnown, int replicationFactor) {
        JsonNodeFactory f = JsonNodeFactory.instance;
        ObjectNode root = f.objectNode();
        root.put("metadataIndex", image.appliedIndex());
        root.put("livenessKnown", livenessKnown);
        Predicate<String> live = livenessKnown ? alive : b -> true;
        ArrayNode members = root.putArray("metadata");
        memberRoles.forEach((id, role) -> members.addObject().put("id", id).put("address", addresses.get(id))
                .put("role", role));
        ArrayNode backends = root.putArray("backends");
        Map<String, Integer> load = image.replicasPerNode();
        Map<String, Integer> shardLoad = image.shardReplicasPerNode();
        image.nodes().values().forEach(n -> backends.addObject().put("id", n.nodeId()).put("address", n.address())
                .put("alive", live.test(n.nodeId())).put("replicas", load.getOrDefault(n.nodeId(), 0))
                .put("shards", shardLoad.getOrDefault(n.nodeId(), 0)));
        ArrayNode queues = root.putArray("queues");
        int under = 0;
        for (QueueMetadata q : image.queues().values()) {
            ObjectNode qn = queues.addObject().put("name", q.name()).put("queueId", q.queueId()).put("fifo", q.fifo());
            ArrayNode parts = qn.putArray("partitions");
            for (PartitionAssignment a : image.partitionsOf(q.queueId())) {
                long liveReplicas = a.replicas().stream().filter(live).count();
                boolean underReplicated = liveReplicas < Math.min(replicationFactor, Math.max(1, image.nodes().size()));
                under += underReplicated ? 1 : 0;
                ObjectNode pn = parts.addObject().put("index", a.index()).put("epoch", a.epoch())
                        .put("leader", a.replicas().isEmpty() ? "none" : a.replicas().get(0))
                        .put("underReplicated", underReplicated);
                ArrayNode replicas = pn.putArray("replicas");
                a.replicas().forEach(replicas::add);
            }
        }
        root.put("underReplicatedPartitions", under);
        return root;
    }
}
