package io.sluice.metadata.image;

import io.sluice.catalog.QueueMetadata;
import io.sluice.common.SqsLimits;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.function.Predicate;

/**
 * Computes what a stamped command changes, as records, and what to answer. Never touches the image: the caller
 * replays the records (the one path to state, shared by leader, followers and restarts).
 */
public final class MetadataOperations {
    private MetadataOperations() {
    }

    public record Outcome(List<MetadataRecord> records, MetadataResult result) {
        public Outcome {
            records = List.copyOf(records);
        }
    }

    public static Outcome execute(ClusterImage image, MetadataCommand.Stamped stamped) {
        MetadataCommand c = stamped.command();
        long now = stamped.leaderTimeMillis();
        if (c instanceof MetadataCommand.CreateQueue create) {
            return createQueue(image, create, stamped);
        } else if (c instanceof MetadataCommand.RaisePartitions raise) {
            return raisePartitions(image, raise, stamped);
        } else if (c instanceof MetadataCommand.SetQueueAttributes set) {
            QueueMetadata q = image.queues().get(set.name());
            if (q == null) {
                return notFound(set.name());
            }
            var record = new MetadataRecord.QueueAttributesChanged(set.name(), set.attributes(), now / 1000);
            return new Outcome(List.of(record), MetadataResult.ok(image.replay(record).queues().get(set.name())));
        } else if (c instanceof MetadataCommand.SetQueueTags tags) {
            QueueMetadata q = image.queues().get(tags.name());
            if (q == null) {
                return notFound(tags.name());
            }
            var record = new MetadataRecord.QueueTagsChanged(tags.name(), tags.tags());
            return new Outcome(List.of(record), MetadataResult.ok(q.withTags(tags.tags())));
        } else if (c instanceof MetadataCommand.DeleteQueue delete) {
            QueueMetadata q = image.queues().get(delete.name());
            if (q == null) {
                return notFound(delete.name());
            }
            return new Outcome(List.of(new MetadataRecord.QueueDeleted(delete.name(), now)), MetadataResult.ok(q));
        } else if (c instanceof MetadataCommand.RegisterNode node) {
            NodeInfo known = image.nodes().get(node.nodeId());
            if (known != null && known.address().equals(node.address())) {
                return new Outcome(List.of(), MetadataResult.ok(null));
            }
            return new Outcome(List.of(new MetadataRecord.NodeRegistered(node.nodeId(), node.address(), now)),
                    MetadataResult.ok(null));
        } else if (c instanceof MetadataCommand.ReplaceDeadNode dead) {
            return replaceDeadNode(image, dead.nodeId(), stamped.liveNodes());
        } else if (c instanceof MetadataCommand.ReleaseReplicas release) {
            return new Outcome(replaceInShards(image, release.nodeId(), stamped.liveNodes(),
                    shard -> release.shardIds().contains(shard.shardId())), MetadataResult.ok(null));
        } else if (c instanceof MetadataCommand.Rebalance rebalance) {
            return rebalance(image, rebalance.maxMoves(), stamped.liveNodes());
        } else if (c instanceof MetadataCommand.EnsureShards ensure) {
            return ensureShards(image, ensure.count(), stamped);
        } else if (c instanceof MetadataCommand.InitReceiptSecret init) {
            return new Outcome(image.receiptSecret() != null ? List.of()
                    : List.of(new MetadataRecord.ReceiptSecretSet(init.secret())), MetadataResult.ok(null));
        } else if (c instanceof MetadataCommand.SetAccessKey key) {
            return new Outcome(List.of(new MetadataRecord.AccessKeySet(key.accessKeyId(), key.secretKey(), key.allow())),
                    MetadataResult.ok(null));
        }
        return new Outcome(List.of(), MetadataResult.of(MetadataResult.Status.INVALID, "unknown command " + c));
    }

    private static Outcome notFound(String name) {
        return new Outcome(List.of(), MetadataResult.of(MetadataResult.Status.NOT_FOUND, name));
    }

    private static Outcome createQueue(ClusterImage image, MetadataCommand.CreateQueue c, MetadataCommand.Stamped s) {
        QueueMetadata existing = image.queues().get(c.name());
        if (existing != null) {
            return new Outcome(List.of(), new MetadataResult(MetadataResult.Status.ALREADY_EXISTS, existing, null));
        }
        Long deletedAt = image.deletedAtMillis().get(c.name());
        if (deletedAt != null && s.leaderTimeMillis() - deletedAt < SqsLimits.RECREATE_AFTER_DELETE_MILLIS) {
            return new Outcome(List.of(), MetadataResult.of(MetadataResult.Status.DELETED_RECENTLY, c.name()));
        }
        if (c.partitions() < 1 || c.partitions() > 1024) {
            return new Outcome(List.of(), MetadataResult.of(MetadataResult.Status.INVALID, "partitions must be 1-1024"));
        }
        long seconds = s.leaderTimeMillis() / 1000;
        QueueMetadata queue = new QueueMetadata(c.name(), image.nextQueueId(), c.fifo(), c.attributes(), c.tags(),
                seconds, seconds, c.partitions(), 1);
        List<MetadataRecord> records = new ArrayList<>();
        records.add(new MetadataRecord.QueueCreated(queue));
        assignPartitions(image, queue.queueId(), 0, c.partitions(), s, records);
        return new Outcome(records, MetadataResult.ok(queue));
    }

    /**
     * Raises a standard queue's partition count: the new partitions are placed like a new queue's. Lowering it, or
     * changing a FIFO queue's (a message group's order lives on the partition its id hashes to), is refused.
     */
    private static Outcome raisePartitions(ClusterImage image, MetadataCommand.RaisePartitions c,
                                           MetadataCommand.Stamped s) {
        QueueMetadata queue = image.queues().get(c.name());
        if (queue == null) {
            return notFound(c.name());
        }
        if (c.partitions() == queue.partitions()) {
            return new Outcome(List.of(), MetadataResult.ok(queue));
        }
        if (queue.fifo() || c.partitions() < queue.partitions() || c.partitions() > 1024) {
            return new Outcome(List.of(), MetadataResult.of(MetadataResult.Status.INVALID, "partitions of " + c.name()
                    + " can only grow, up to 1024, and only for standard queues"));
        }
        List<MetadataRecord> records = new ArrayList<>();
        records.add(new MetadataRecord.QueuePartitionsRaised(c.name(), c.partitions()));
        assignPartitions(image, queue.queueId(), queue.partitions(), c.partitions(), s, records);
        return new Outcome(records, MetadataResult.ok(queue.withPartitions(c.partitions())));
    }

    /** Places partitions {@code from} (inclusive) to {@code to} (exclusive) of a queue. */
    private static void assignPartitions(ClusterImage image, long queueId, int from, int to, MetadataCommand.Stamped s,
                                         List<MetadataRecord> records) {
        if (!image.shards().isEmpty()) {
            // Sharded: each partition joins the shard holding the fewest partitions (ties by shard id).
            Map<String, Integer> partitionsPerShard = new TreeMap<>();
            image.shards().keySet().forEach(id -> partitionsPerShard.put(id,
                    image.partitionsPerShard().getOrDefault(id, 0))); // the image's index: no scan of the partitions
            for (int i = from; i < to; i++) {
                String shardId = choose(partitionsPerShard, 1, List.of()).get(0);
                ShardInfo shard = image.shards().get(shardId);
                records.add(new MetadataRecord.PartitionAssigned(queueId, i, shard.replicas(), shard.epoch(), shardId));
            }
            return;
        }
        Map<String, Integer> load = liveLoad(image, s.liveNodes());
        for (int i = from; i < to; i++) {
            List<String> replicas = choose(load, s.replicationFactor(), List.of());
            records.add(new MetadataRecord.PartitionAssigned(queueId, i, replicas, 1, null));
        }
    }

    /**
     * Replaces {@code dead} in every partition it holds with the least-loaded live node not already a replica.
     * A partition with no candidate keeps the dead replica (it shows as under-replicated) until one appears.
     */
    private static Outcome replaceDeadNode(ClusterImage image, String dead, List<String> liveNodes) {
        List<MetadataRecord> records = new ArrayList<>(replaceInShards(image, dead, liveNodes, shard -> true));
        List<String> live = liveNodes.stream().filter(n -> !n.equals(dead)).toList();
        Map<String, Integer> load = liveLoad(image, live);
        for (PartitionAssignment a : image.partitions().values()) {
            if (!a.replicas().contains(dead) || a.shardId() != null) {
                continue; // sharded partitions follow their shard
            }
            List<String> candidates = choose(load, 1, a.replicas());
            if (candidates.isEmpty()) {
                continue;
            }
            List<String> replicas = new ArrayList<>(a.replicas());
            replicas.remove(dead);
            replicas.add(candidates.get(0));
            records.add(new MetadataRecord.PartitionAssigned(a.queueId(), a.index(), replicas, a.epoch() + 1, null));
        }
        return new Outcome(records, MetadataResult.ok(null));
    }

    /**
     * Replaces {@code node} in the shards {@code which} accepts with the least-loaded live node not already a
     * replica, appended last (the next replica, which has the data, becomes the preferred leader); a shard with no
     * candidate keeps it.
     */
    private static List<MetadataRecord> replaceInShards(ClusterImage image, String node, List<String> liveNodes,
                                                        Predicate<ShardInfo> which) {
        List<String> live = liveNodes.stream().filter(n -> !n.equals(node)).toList();
        List<MetadataRecord> records = new ArrayList<>();
        Map<String, Integer> shardLoad = liveLoad(image.shardReplicasPerNode(), image, live);
        for (ShardInfo shard : image.shards().values()) {
            if (!shard.replicas().contains(node) || !which.test(shard)) {
                continue;
            }
            List<String> candidates = choose(shardLoad, 1, shard.replicas());
            if (candidates.isEmpty()) {
                continue;
            }
            List<String> replicas = new ArrayList<>(shard.replicas());
            replicas.remove(node);
            replicas.add(candidates.get(0));
            records.add(new MetadataRecord.ShardAssigned(shard.shardId(), shard.groupId(), replicas, shard.epoch() + 1));
        }
        return records;
    }

    /**
     * Creates shards {@code s<n>} until there are {@code count}, each on {@code min(R, live)} backends, least loaded
     * first. The first replica is the shard's preferred leader: the chosen replica that is preferred leader of the
     * fewest shards so far, so preferred leaders spread evenly over the backends. The Raft group id is derived from the shard id and the leader's time, so every member derives the same.
     */
    private static Outcome ensureShards(ClusterImage image, int count, MetadataCommand.Stamped s) {
        Map<String, Integer> load = liveLoad(image.shardReplicasPerNode(), image, s.liveNodes());
        List<MetadataRecord> records = new ArrayList<>();
        if (load.isEmpty()) {
            return new Outcome(records, MetadataResult.of(MetadataResult.Status.INVALID, "no live backends"));
        }
        Map<String, Integer> preferred = new TreeMap<>(); // shards each node is the first replica (preferred leader) of
        image.shards().values().forEach(sh -> preferred.merge(sh.replicas().get(0), 1, Integer::sum));
        for (int n = image.shards().size() + 1; n <= count; n++) {
            String shardId = "s" + n;
            String groupId = UUID.nameUUIDFromBytes(("sluice-shard/" + shardId + "/" + s.leaderTimeMillis())
                    .getBytes(StandardCharsets.UTF_8)).toString();
            List<String> replicas = new ArrayList<>(choose(load, s.replicationFactor(), List.of()));
            // the replica that is preferred leader of the fewest shards so far goes first (ties by id)
            String first = replicas.stream().min(Comparator.<String>comparingInt(r -> preferred.getOrDefault(r, 0))
                    .thenComparing(Comparator.naturalOrder())).orElseThrow();
            replicas.remove(first);
            replicas.add(0, first);
            preferred.merge(first, 1, Integer::sum);
            records.add(new MetadataRecord.ShardAssigned(shardId, groupId, replicas, 1));
        }
        return new Outcome(records, MetadataResult.ok(null));
    }

    /**
     * Moves shard replicas from the most loaded live backend to the least loaded one while they differ by more than
     * one, at most {@code maxMoves}, at most one per shard per command (each move is a Raft membership change: the
     * shard's leader adds the newcomer, which catches up from a snapshot, then drops the old replica). Shards with a
     * dead replica are left to {@link #replaceDeadNode}; a shard's preferred leader (first replica) is moved last.
     * The answer's message lists the moves, e.g. {@code s1:b1->b4}.
     */
    private static Outcome rebalance(ClusterImage image, int maxMoves, List<String> liveNodes) {
        Map<String, Integer> load = liveLoad(image.shardReplicasPerNode(), image, liveNodes);
        List<MetadataRecord> records = new ArrayList<>();
        List<String> moves = new ArrayList<>();
        Set<String> moved = new HashSet<>();
        while (moves.size() < maxMoves && load.size() > 1) {
            ShardInfo pick = null;
            String from = null;
            String to = null;
            // most loaded first (ties by id); the first that has a movable replica gives it up
            List<String> donors = load.entrySet().stream().sorted(Map.Entry.<String, Integer>comparingByValue()
                    .reversed().thenComparing(Map.Entry.comparingByKey())).map(Map.Entry::getKey).toList();
            for (String donor : donors) {
                for (boolean allowPreferred : new boolean[] {false, true}) {
                    for (ShardInfo shard : image.shards().values()) {
                        if (pick != null || moved.contains(shard.shardId()) || !shard.replicas().contains(donor)
                                || !load.keySet().containsAll(shard.replicas())
                                || (!allowPreferred && shard.replicas().get(0).equals(donor))) {
                            continue;
                        }
                        String target = load.entrySet().stream().filter(e -> !shard.replicas().contains(e.getKey()))
                                .min(Map.Entry.<String, Integer>comparingByValue()
                                        .thenComparing(Map.Entry.comparingByKey()))
                                .map(Map.Entry::getKey).orElse(null);
                        if (target != null && load.get(donor) - load.get(target) > 1) {
                            pick = shard;
                            from = donor;
                            to = target;
                        }
                    }
                }
                if (pick != null) {
                    break;
                }
            }
            if (pick == null) {
                break;
            }
            List<String> replicas = new ArrayList<>(pick.replicas());
            replicas.set(replicas.indexOf(from), to);
            records.add(new MetadataRecord.ShardAssigned(pick.shardId(), pick.groupId(), replicas, pick.epoch() + 1));
            moved.add(pick.shardId());
            moves.add(pick.shardId() + ":" + from + "->" + to);
            load.merge(from, -1, Integer::sum);
            load.merge(to, 1, Integer::sum);
        }
        return new Outcome(records, MetadataResult.of(MetadataResult.Status.OK, String.join(" ", moves)));
    }

    /** Current replica counts of the live nodes (placement only ever picks live ones). */
    private static Map<String, Integer> liveLoad(ClusterImage image, List<String> liveNodes) {
        return liveLoad(image.replicasPerNode(), image, liveNodes);
    }

    private static Map<String, Integer> liveLoad(Map<String, Integer> all, ClusterImage image, List<String> liveNodes) {
        Map<String, Integer> load = new TreeMap<>();
        for (String n : liveNodes) {
            if (image.nodes().containsKey(n)) {
                load.put(n, all.getOrDefault(n, 0));
            }
        }
        return load;
    }

    /**
     * Picks up to {@code count} distinct nodes, least loaded first (ties by id, so every replica picks the same),
     * skipping {@code exclude}, and counts them in {@code load} so the next partition sees them.
     */
    static List<String> choose(Map<String, Integer> load, int count, List<String> exclude) {
        List<String> picked = load.entrySet().stream()
                .filter(e -> !exclude.contains(e.getKey()))
                .sorted(Map.Entry.<String, Integer>comparingByValue().thenComparing(Map.Entry.comparingByKey()))
                .limit(Math.max(0, count))
                .map(Map.Entry::getKey)
                .toList();
        picked.forEach(n -> load.merge(n, 1, Integer::sum));
        return picked;
    }
}
