package io.sluice.server;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sluice.catalog.QueueMetadata;
import io.sluice.metadata.image.ClusterImage;
import io.sluice.metadata.image.PartitionAssignment;
import io.sluice.metadata.image.ShardInfo;
import io.sluice.metadata.image.ShardReport;
import io.sluice.metadata.raft.LeaderHealth;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Predicate;

/**
 * The operator's view served as {@code GET /admin/status}: metadata members and their roles, backends and their
 * load, shards with their Raft state as their leaders report it, queues with their partitions, replicas and whether
 * they are under-replicated.
 */
final class ClusterStatus {
    private ClusterStatus() {
    }

    /**
     * @param addresses         metadata member addresses, by id
     * @param leaderId          the metadata group's leader as this node knows it, or null
     * @param health            what the metadata leader knows (backends alive, shard reports), or null where this
     *                          node does not know it: every backend is then listed alive and {@code livenessKnown} is
     *                          false
     * @param replicationFactor the configured factor, to flag under-replicated partitions
     */
    static ObjectNode render(ClusterImage image, Map<String, String> addresses, String leaderId, LeaderHealth health,
                             int replicationFactor) {
        JsonNodeFactory f = JsonNodeFactory.instance;
        ObjectNode root = f.objectNode();
        root.put("metadataIndex", image.appliedIndex());
        root.put("livenessKnown", health != null);
        Predicate<String> live = health == null ? b -> true : health.alive()::contains;
        ArrayNode members = root.putArray("metadata");
        new TreeMap<>(addresses).forEach((id, address) -> members.addObject().put("id", id)
                .put("address", address)
                .put("role", leaderId == null ? "unknown" : id.equals(leaderId) ? "leader" : "follower"));
        ArrayNode backends = root.putArray("backends");
        Map<String, Integer> load = image.replicasPerNode();
        Map<String, Integer> shardLoad = image.shardReplicasPerNode();
        image.nodes().values().forEach(n -> backends.addObject().put("id", n.nodeId()).put("address", n.address())
                .put("alive", live.test(n.nodeId())).put("replicas", load.getOrDefault(n.nodeId(), 0))
                .put("shards", shardLoad.getOrDefault(n.nodeId(), 0)));
        shards(root, image, health);
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

    /**
     * Each shard of the catalog: its replicas and partition count, and from its leader's latest report (when the
     * metadata leader has one from the last 6 s) the leader, the Raft members, how many are in sync,
     * each follower's lag, and whether a membership change is pending (under way in Raft, or the Raft members differ
     * from the catalog's replicas: a move or replacement not done yet).
     */
    private static void shards(ObjectNode root, ClusterImage image, LeaderHealth health) {
        Map<String, ShardReport> reports = new HashMap<>();
        if (health != null) {
            health.shards().forEach(r -> reports.put(r.shardId(), r));
        }
        Map<String, Integer> partitions = new HashMap<>();
        image.queues().values().forEach(q -> image.partitionsOf(q.queueId()).forEach(a -> {
            if (a.shardId() != null) {
                partitions.merge(a.shardId(), 1, Integer::sum);
            }
        }));
        root.put("shardReportsKnown", health != null);
        ArrayNode out = root.putArray("shards");
        for (ShardInfo shard : new TreeMap<>(image.shards()).values()) {
            ObjectNode sn = out.addObject().put("shardId", shard.shardId()).put("epoch", shard.epoch())
                    .put("partitions", partitions.getOrDefault(shard.shardId(), 0));
            ArrayNode replicas = sn.putArray("replicas");
            shard.replicas().forEach(replicas::add);
            ShardReport r = reports.get(shard.shardId());
            if (r == null) {
                sn.putNull("leader");
                continue;
            }
            sn.put("leader", r.leader()).put("inSync", r.inSync()).put("appliedIndex", r.appliedIndex())
                    .put("membershipPending", r.changing()
                            || !new HashSet<>(r.members()).equals(new HashSet<>(shard.replicas())))
                    .put("reportAgeMillis", r.ageMillis());
            ArrayNode raftMembers = sn.putArray("members");
            r.members().forEach(raftMembers::add);
            ObjectNode lag = sn.putObject("followerLag");
            new TreeMap<>(r.followerLag()).forEach(lag::put);
        }
    }
}
