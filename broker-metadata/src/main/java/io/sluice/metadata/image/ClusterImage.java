package io.sluice.metadata.image;

import com.fasterxml.jackson.annotation.JsonIgnore;
import io.sluice.catalog.QueueMetadata;
import io.sluice.common.SqsLimits;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import org.pcollections.TreePMap;

/**
 * The whole catalog at one log index, immutable: readers (frontend caches, the admin surface) hold a reference
 * without locks. The next image comes only from {@link #replay(MetadataRecord)}.
 *
 * @param appliedIndex     the metadata log index this image reflects (0 for {@link #EMPTY})
 * @param nextQueueId      the id the next created queue gets; queue ids are never reused
 * @param queues           by name
 * @param deletedAtMillis  names deleted in the last 60 s (a name cannot be re-created until then)
 * @param nodes            registered backend nodes by id
 * @param partitions       assignments by {@code queueId/index}
 * @param accessKeys       access keys by id
 * @param shards           shards (Raft groups of backends) by id; empty where partitions are not sharded
 * @param receiptSecret    the secret frontends MAC receipt handles under (base64), null until the metadata leader
 *                         set it
 * @param lastChange       the last catalog change applied on the metadata group ({@link MetadataBatch#id}, or
 *                         {@code entry-<index>} for an entry of the older command format); null before the first
 * @param queueNamesById   derived, not serialized: each queue's name by its id (null: computed from {@code queues})
 * @param partitionsPerShard derived, not serialized: how many partitions each shard holds, shards holding none left
 *                         out (null: computed from {@code partitions})
 * @param replicaCounts    derived, not serialized: how many partition replicas each node holds, nodes holding none
 *                         left out (null: computed from {@code partitions})
 */
public record ClusterImage(long appliedIndex, long nextQueueId, SortedMap<String, QueueMetadata> queues,
                           SortedMap<String, Long> deletedAtMillis, SortedMap<String, NodeInfo> nodes,
                           SortedMap<String, PartitionAssignment> partitions,
                           SortedMap<String, MetadataRecord.AccessKeySet> accessKeys,
                           SortedMap<String, ShardInfo> shards, String receiptSecret, String lastChange,
                           @JsonIgnore SortedMap<Long, String> queueNamesById,
                           @JsonIgnore SortedMap<String, Integer> partitionsPerShard,
                           @JsonIgnore SortedMap<String, Integer> replicaCounts) {

    public static final ClusterImage EMPTY = new ClusterImage(0, 1, new TreeMap<>(), new TreeMap<>(), new TreeMap<>(),
            new TreeMap<>(), new TreeMap<>(), new TreeMap<>(), null);

    public ClusterImage {
        queues = persistent(queues);
        deletedAtMillis = persistent(deletedAtMillis);
        nodes = persistent(nodes);
        partitions = persistent(partitions);
        accessKeys = persistent(accessKeys);
        shards = persistent(shards == null ? Map.of() : shards);
        // the indexes are kept up by replay, record by record; an image built whole (a snapshot, a fetched image, a
        // test) has them computed once here
        queueNamesById = queueNamesById instanceof TreePMap<Long, String> ids ? ids : idsOf(queues);
        partitionsPerShard = partitionsPerShard instanceof TreePMap<String, Integer> load ? load
                : loadOf(partitions);
        replicaCounts = replicaCounts instanceof TreePMap<String, Integer> counts ? counts : replicasOf(partitions);
    }

    /** An image whose derived indexes are computed from its maps. */
    public ClusterImage(long appliedIndex, long nextQueueId, SortedMap<String, QueueMetadata> queues,
                        SortedMap<String, Long> deletedAtMillis, SortedMap<String, NodeInfo> nodes,
                        SortedMap<String, PartitionAssignment> partitions,
                        SortedMap<String, MetadataRecord.AccessKeySet> accessKeys, SortedMap<String, ShardInfo> shards,
                        String receiptSecret) {
        this(appliedIndex, nextQueueId, queues, deletedAtMillis, nodes, partitions, accessKeys, shards, receiptSecret,
                null, null, null, null);
    }

    private static TreePMap<Long, String> idsOf(Map<String, QueueMetadata> queues) {
        Map<Long, String> ids = new TreeMap<>();
        queues.values().forEach(q -> ids.put(q.queueId(), q.name()));
        return TreePMap.from(ids);
    }

    private static TreePMap<String, Integer> loadOf(Map<String, PartitionAssignment> partitions) {
        Map<String, Integer> load = new TreeMap<>();
        partitions.values().forEach(a -> {
            if (a.shardId() != null) {
                load.merge(a.shardId(), 1, Integer::sum);
            }
        });
        return TreePMap.from(load);
    }

    private static TreePMap<String, Integer> replicasOf(Map<String, PartitionAssignment> partitions) {
        Map<String, Integer> counts = new TreeMap<>();
        partitions.values().forEach(a -> a.replicas().forEach(r -> counts.merge(r, 1, Integer::sum)));
        return TreePMap.from(counts);
    }

    /** {@code counts} with {@code delta} more on each of {@code assignment}'s replicas (none: no entry). */
    private static TreePMap<String, Integer> counted(TreePMap<String, Integer> counts, PartitionAssignment assignment,
                                                     int delta) {
        for (String r : assignment.replicas()) {
            counts = moved(counts, r, delta);
        }
        return counts;
    }

    /** {@code load} with {@code delta} more on {@code key} (a shard's partitions, a node's replicas; none: no entry). */
    private static TreePMap<String, Integer> moved(TreePMap<String, Integer> load, String key, int delta) {
        if (key == null) {
            return load;
        }
        int n = load.getOrDefault(key, 0) + delta;
        return n == 0 ? load.minus(key) : load.plus(key, n);
    }

    /**
     * The maps are persistent ({@link TreePMap}): the next image shares all but the path to what a record changed, so
     * replaying a record costs O(log n), not a copy of a catalog of 100,000 queues. A map that already is one (all
     * are built here, in the keys' natural order) is taken as it is, being immutable; any other is copied once.
     */
    private static <V> TreePMap<String, V> persistent(Map<String, V> map) {
        if (map instanceof TreePMap<String, V> p) {
            return p;
        }
        return TreePMap.from(map);
    }

    /** The image after {@code record}. Pure: this image is unchanged. */
    public ClusterImage replay(MetadataRecord record) {
        return replayAll(List.of(record));
    }

    /**
     * The image after {@code records}, in order. Pure: this image is unchanged. The maps are copied once for the
     * whole list, so a catalog delta of many records costs one copy of the catalog, not one per record.
     */
    public ClusterImage replayAll(List<MetadataRecord> records) {
        if (records.isEmpty()) {
            return this;
        }
        TreePMap<String, QueueMetadata> q = persistent(queues);
        TreePMap<String, Long> deleted = persistent(deletedAtMillis);
        TreePMap<String, NodeInfo> n = persistent(nodes);
        TreePMap<String, PartitionAssignment> p = persistent(partitions);
        TreePMap<String, MetadataRecord.AccessKeySet> keys = persistent(accessKeys);
        TreePMap<String, ShardInfo> sh = persistent(shards);
        TreePMap<Long, String> ids = (TreePMap<Long, String>) queueNamesById;
        TreePMap<String, Integer> load = (TreePMap<String, Integer>) partitionsPerShard;
        TreePMap<String, Integer> replicas = (TreePMap<String, Integer>) replicaCounts;
        long next = nextQueueId;
        String secret = receiptSecret;
        for (MetadataRecord record : records) {
            if (record instanceof MetadataRecord.QueueCreated c) {
                q = q.plus(c.queue().name(), c.queue());
                ids = ids.plus(c.queue().queueId(), c.queue().name());
                deleted = deleted.minus(c.queue().name());
                next = Math.max(next, c.queue().queueId() + 1);
            } else if (record instanceof MetadataRecord.QueueAttributesChanged c) {
                QueueMetadata old = q.get(c.name());
                if (old != null) {
                    q = q.plus(c.name(), old.withAttributes(c.attributes(), c.modifiedSeconds()));
                }
            } else if (record instanceof MetadataRecord.QueuePartitionsRaised c) {
                QueueMetadata old = q.get(c.name());
                if (old != null) {
                    q = q.plus(c.name(), old.withPartitions(c.partitions()));
                }
            } else if (record instanceof MetadataRecord.QueueTagsChanged c) {
                QueueMetadata old = q.get(c.name());
                if (old != null) {
                    q = q.plus(c.name(), old.withTags(c.tags()));
                }
            } else if (record instanceof MetadataRecord.QueueDeleted d) {
                QueueMetadata old = q.get(d.name());
                if (old != null) {
                    q = q.minus(d.name());
                    ids = ids.minus(old.queueId());
                    SortedMap<String, PartitionAssignment> gone = ofQueue(p, old.queueId());
                    for (PartitionAssignment pa : gone.values()) {
                        load = moved(load, pa.shardId(), -1);
                        replicas = counted(replicas, pa, -1);
                    }
                    p = p.minusAll(gone.keySet());
                }
                List<String> expired = deleted.entrySet().stream()
                        .filter(e -> d.atMillis() - e.getValue() >= SqsLimits.RECREATE_AFTER_DELETE_MILLIS)
                        .map(Map.Entry::getKey).toList();
                deleted = deleted.minusAll(expired).plus(d.name(), d.atMillis());
            } else if (record instanceof MetadataRecord.NodeRegistered r) {
                n = n.plus(r.nodeId(), new NodeInfo(r.nodeId(), r.address(), r.atMillis()));
            } else if (record instanceof MetadataRecord.PartitionAssigned a) {
                PartitionAssignment pa = new PartitionAssignment(a.queueId(), a.index(), a.replicas(), a.epoch(),
                        a.shardId());
                PartitionAssignment before = p.get(pa.key());
                if (before != null) {
                    load = moved(load, before.shardId(), -1);
                    replicas = counted(replicas, before, -1);
                }
                load = moved(load, pa.shardId(), 1);
                replicas = counted(replicas, pa, 1);
                p = p.plus(pa.key(), pa);
            } else if (record instanceof MetadataRecord.ShardAssigned a) {
                sh = sh.plus(a.shardId(), new ShardInfo(a.shardId(), a.groupId(), a.replicas(), a.epoch()));
                // Partitions follow their shard's replicas (a rare record: a scan of every partition is fine).
                Map<String, PartitionAssignment> moved = new TreeMap<>();
                p.forEach((k, pa) -> {
                    if (a.shardId().equals(pa.shardId())) {
                        moved.put(k, new PartitionAssignment(pa.queueId(), pa.index(), a.replicas(), a.epoch(),
                                pa.shardId()));
                    }
                });
                for (Map.Entry<String, PartitionAssignment> m : moved.entrySet()) {
                    replicas = counted(counted(replicas, p.get(m.getKey()), -1), m.getValue(), 1);
                }
                p = p.plusAll(moved);
            } else if (record instanceof MetadataRecord.AccessKeySet k) {
                keys = keys.plus(k.accessKeyId(), k);
            } else if (record instanceof MetadataRecord.ReceiptSecretSet r && secret == null) {
                secret = r.secret();
            }
        }
        return new ClusterImage(appliedIndex, next, q, deleted, n, p, keys, sh, secret, lastChange, ids, load,
                replicas);
    }

    /**
     * The partitions of one queue: their keys ({@code queueId/index}) share the prefix {@code queueId/}, and every key
     * from {@code "queueId/"} up to (not including) {@code "queueId0"} has it ('0' follows '/').
     */
    private static <V> SortedMap<String, V> ofQueue(SortedMap<String, V> partitions, long queueId) {
        return partitions.subMap(queueId + "/", queueId + "0");
    }

    /** This image without its secrets (access keys, the receipt secret), for roles that verify no signature. */
    public ClusterImage withoutSecrets() {
        return new ClusterImage(appliedIndex, nextQueueId, queues, deletedAtMillis, nodes, partitions,
                new TreeMap<>(), shards, null, lastChange, queueNamesById, partitionsPerShard, replicaCounts);
    }

    /** Every component but the receipt secret (access keys redact their own secrets). */
    @Override
    public String toString() {
        return "ClusterImage[appliedIndex=" + appliedIndex + ", nextQueueId=" + nextQueueId + ", queues=" + queues
                + ", deletedAtMillis=" + deletedAtMillis + ", nodes=" + nodes + ", partitions=" + partitions
                + ", accessKeys=" + accessKeys + ", shards=" + shards + ", receiptSecret="
                + (receiptSecret == null ? "unset" : "<redacted>") + ", lastChange=" + lastChange + "]";
    }

    public ClusterImage withAppliedIndex(long index) {
        return new ClusterImage(index, nextQueueId, queues, deletedAtMillis, nodes, partitions, accessKeys, shards,
                receiptSecret, lastChange, queueNamesById, partitionsPerShard, replicaCounts);
    }

    /** This image, with {@code change} as the last catalog change applied (metadata replicas only). */
    public ClusterImage withLastChange(String change) {
        return new ClusterImage(appliedIndex, nextQueueId, queues, deletedAtMillis, nodes, partitions, accessKeys,
                shards, receiptSecret, change, queueNamesById, partitionsPerShard, replicaCounts);
    }

    /**
     * Number of partition replicas each node holds (every registered node listed, zero included; a replica on a node
     * not registered counted too): from the {@link #replicaCounts} index, not a scan of the partitions.
     */
    public Map<String, Integer> replicasPerNode() {
        TreeMap<String, Integer> load = new TreeMap<>(replicaCounts);
        nodes.keySet().forEach(id -> load.putIfAbsent(id, 0));
        return load;
    }

    /** Number of shard replicas each node holds (every registered node listed, zero included). */
    public Map<String, Integer> shardReplicasPerNode() {
        TreeMap<String, Integer> load = new TreeMap<>();
        nodes.keySet().forEach(id -> load.put(id, 0));
        shards.values().forEach(s -> s.replicas().forEach(r -> load.merge(r, 1, Integer::sum)));
        return load;
    }

    /** Shards that {@code nodeId} is a replica of. */
    public List<ShardInfo> shardsOf(String nodeId) {
        return shards.values().stream().filter(s -> s.replicas().contains(nodeId)).toList();
    }

    /** The queue with this id, if the catalog has it (an index lookup). */
    public Optional<QueueMetadata> queueById(long queueId) {
        String name = queueNamesById.get(queueId);
        return name == null ? Optional.empty() : Optional.ofNullable(queues.get(name));
    }

    /** The queue's partition assignments, in their keys' string order (0, 1, 10, 2...): a range of the map, not a scan. */
    public List<PartitionAssignment> partitionsOf(long queueId) {
        return List.copyOf(ofQueue(partitions, queueId).values());
    }
}
