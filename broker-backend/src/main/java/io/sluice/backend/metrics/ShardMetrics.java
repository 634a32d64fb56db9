package io.sluice.backend.metrics;

import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import io.sluice.backend.raft.BackendServer;
import io.sluice.backend.raft.ShardHealth;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.ratis.protocol.RaftGroupId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A backend's view of the shard groups it hosts: whether it leads each, whether it knows a leader (a shard no
 * replica knows a leader of is leaderless: nothing in it can be written), and on the leader the members, the
 * members in sync and each follower's lag; plus bytes on disk per shard. The disk figures walk folders, so they are
 * refreshed at most every 15 s.
 */
public final class ShardMetrics implements MultiCollector {
    private static final Logger LOG = LoggerFactory.getLogger(ShardMetrics.class);
    private static final long DISK_REFRESH_NANOS = TimeUnit.SECONDS.toNanos(15);

    private final BackendServer backend;
    private final Function<RaftGroupId, String> shardName;
    private final Function<RaftGroupId, Set<String>> catalogReplicas;
    private final Map<RaftGroupId, Map<String, Long>> disk = new HashMap<>();
    private long diskReadAt = Long.MIN_VALUE;

    /**
     * @param shardName       the catalog's name of a shard group (its group id when the catalog does not know it yet)
     * @param catalogReplicas the replicas the catalog assigns the group (empty when it does not know it)
     */
    public ShardMetrics(BackendServer backend, Function<RaftGroupId, String> shardName,
                 Function<RaftGroupId, Set<String>> catalogReplicas) {
        this.backend = backend;
        this.shardName = shardName;
        this.catalogReplicas = catalogReplicas;
    }

    @Override
    public synchronized MetricSnapshots collect() {
        GaugeSnapshot.Builder leader = gauge("sluice_shard_leader", "1 if this backend leads the shard (is the"
                + " primary of its partitions)");
        GaugeSnapshot.Builder known = gauge("sluice_shard_leader_known", "1 if this replica knows a current leader"
                + " of the shard");
        GaugeSnapshot.Builder replicas = gauge("sluice_shard_replicas", "Members of the shard's Raft configuration"
                + " (exported by the leader)");
        GaugeSnapshot.Builder inSync = gauge("sluice_shard_replicas_in_sync", "Members, leader included, heard from"
                + " within " + ShardHealth.IN_SYNC_HEARD_MILLIS / 1000 + " s and within " + ShardHealth.IN_SYNC_MAX_LAG
                + " entries of the leader's commit index (exported by the leader)");
        GaugeSnapshot.Builder lag = gauge("sluice_shard_follower_lag_entries", "Entries committed on the leader"
                + " that the follower has not acknowledged (exported by the leader)");
        GaugeSnapshot.Builder pending = gauge("sluice_shard_membership_pending", "1 while the shard's Raft members"
                + " differ from the catalog's replicas or a membership change is not final: a replica move or"
                + " replacement still catching up (exported by the leader)");
        GaugeSnapshot.Builder applied = gauge("sluice_shard_applied_index", "Last Raft log index applied here");
        GaugeSnapshot.Builder bytes = gauge("sluice_storage_bytes", "Bytes on disk of the shard here, by kind:"
                + " rocksdb (the store), raft_log, snapshots");
        boolean refreshDisk = System.nanoTime() - diskReadAt > DISK_REFRESH_NANOS || diskReadAt == Long.MIN_VALUE;
        if (refreshDisk) {
            disk.clear();
            diskReadAt = System.nanoTime();
        }
        for (RaftGroupId gid : backend.hostedGroups()) {
            ShardHealth h;
            try {
                h = backend.health(gid);
            } catch (RuntimeException e) { // a group closing or reinitializing: skip it, keep the rest of the scrape
                LOG.debug("no health of shard group {}: {}", gid, e.toString());
                continue;
            }
            if (h == null) {
                continue;
            }
            Labels shard = Labels.of("shard", shardName.apply(gid));
            leader.dataPoint(point(shard, h.leader() ? 1 : 0));
            known.dataPoint(point(shard, h.leaderKnown() ? 1 : 0));
            applied.dataPoint(point(shard, h.appliedIndex()));
            if (h.leader()) {
                replicas.dataPoint(point(shard, h.replicas()));
                inSync.dataPoint(point(shard, h.inSync()));
                h.followerLag().forEach((peer, behind) -> lag.dataPoint(point(shard.add("peer", peer), behind)));
                Set<String> wanted = catalogReplicas.apply(gid);
                pending.dataPoint(point(shard, h.changing() || (!wanted.isEmpty() && !wanted.equals(h.members()))
                        ? 1 : 0));
            }
            Map<String, Long> used = disk.computeIfAbsent(gid, backend::diskUsage);
            used.forEach((kind, n) -> bytes.dataPoint(point(shard.add("kind", kind), n)));
        }
        return MetricSnapshots.builder().metricSnapshot(leader.build()).metricSnapshot(known.build())
                .metricSnapshot(replicas.build()).metricSnapshot(inSync.build()).metricSnapshot(lag.build())
                .metricSnapshot(pending.build()).metricSnapshot(applied.build()).metricSnapshot(bytes.build()).build();
    }

    private static GaugeSnapshot.Builder gauge(String name, String help) {
        return GaugeSnapshot.builder().name(name).help(help);
    }

    private static GaugeSnapshot.GaugeDataPointSnapshot point(Labels labels, double value) {
        return GaugeSnapshot.GaugeDataPointSnapshot.builder().labels(labels).value(value).build();
    }
}
