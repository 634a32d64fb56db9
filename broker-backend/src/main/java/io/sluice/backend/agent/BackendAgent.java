package io.sluice.backend.agent;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import io.sluice.backend.metrics.QueueMetrics;
import io.sluice.backend.raft.BackendServer;
import io.sluice.backend.raft.ShardHealth;
import io.sluice.metadata.image.ClusterImage;
import io.sluice.metadata.image.MetadataCommand;
import io.sluice.metadata.image.NodeInfo;
import io.sluice.metadata.image.PartitionLoad;
import io.sluice.metadata.image.ShardInfo;
import io.sluice.metadata.image.ShardReport;
import io.sluice.metadata.raft.CachedCatalog;
import io.sluice.metadata.raft.MetadataClient;
import io.sluice.metadata.raft.MetadataUnavailableException;
import io.sluice.partition.PartitionId;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What keeps a backend in line with the catalog: registers it and heartbeats (its clock checked against the
 * metadata leader's), joins the shard groups assigned to it, follows replica changes (the shard leader changes the
 * Raft membership, a dropped replica leaves), hands back shards it lost with its disk ({@link LostDiskGuard}), and,
 * on the shards it leads, runs the housekeeping of their partitions every second: clock-skew step-down, then what
 * every shard leader does ({@link ShardHousekeeping}: opening idle partitions, the retention sweep and, every
 * {@link ShardHousekeeping#RECONCILE_EVERY} seconds, {@link PartitionReconciler}). The
 * launcher ({@code BackendNode}) only assembles it with the server, the metadata client and the catalog.
 */
public final class BackendAgent implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(BackendAgent.class);

    private final String id;
    private final String address;
    private final BackendServer backend;
    private final MetadataClient client;
    private final CachedCatalog catalog;
    private final LostDiskGuard guard;
    private final ScheduledExecutorService agent = Executors.newSingleThreadScheduledExecutor(
            daemon("sluice-backend-agent"));
    private final ScheduledExecutorService sweeper = Executors.newSingleThreadScheduledExecutor(
            daemon("sluice-backend-sweeper"));
    private final AtomicBoolean reconfiguring = new AtomicBoolean();
    private long lastReleaseNanos;
    private long lastUnavailableLogNanos = System.nanoTime() - TimeUnit.MINUTES.toNanos(1);
    private long lastFailedLogNanos = System.nanoTime() - TimeUnit.MINUTES.toNanos(1);

    /**
     * @param id                 the node id it registers under
     * @param address            host:port of its Raft server as the cluster reaches it
     * @param defaultMaxInflight the in-flight limit of a partition it creates while reconciling
     */
    public BackendAgent(String id, String address, int defaultMaxInflight, BackendServer backend,
                        MetadataClient client, CachedCatalog catalog, LostDiskGuard guard) {
        this.id = id;
        this.address = address;
        this.housekeeping = new ShardHousekeeping(new ShardHousekeeping.LedShards() {
            @Override
            public List<ShardHousekeeping.Led> led(ClusterImage image) {
                return BackendAgent.this.led(image);
            }

            @Override
            public Map<String, List<PartitionId>> assigned(ClusterImage image) {
                return BackendAgent.assigned(image);
            }
        }, catalog::image, defaultMaxInflight);
        this.prompt = new PromptReconciler(catalog::image, catalog::refresh, housekeeping::placement,
                defaultMaxInflight);
        this.backend = backend;
        this.client = client;
        this.catalog = catalog;
        this.guard = guard;
    }

    /** Starts the loops: the registration/heartbeat tick every {@code tickMillis}, the housekeeping every second. */
    public void start(long tickMillis) {
        backend.setConfigurationRequests(prompt);
        sweeper.scheduleWithFixedDelay(this::sweep, 1, 1, TimeUnit.SECONDS);
        agent.scheduleWithFixedDelay(() -> tick(id, address), 0, tickMillis, TimeUnit.MILLISECONDS);
    }

    /** Whether it may take requests: registered and hosting every shard the catalog assigns it. */
    public boolean ready() {
        return ready(id);
    }

    /** Whether its lost-disk guard keeps it out of shard groups it was listed in. */
    public boolean lostDiskGuarded() {
        return !guard.forbidden().isEmpty();
    }

    /**
     * Ready once registered under its current address and hosting every shard group the catalog assigns to it (a
     * rolling restart waits for this before taking down the next backend).
     */
    private boolean ready(String id) {
        if (!guard.decided()) {
            return false;
        }
        ClusterImage image = catalog.image();
        NodeInfo me = image.nodes().get(id);
        if (me == null || !me.address().equals(address)) {
            return false;
        }
        var hosted = backend.hostedGroups();
        return image.shardsOf(id).stream().allMatch(sh -> hosted.contains(groupId(sh)))
                && backend.failedGroups().isEmpty();
    }

    /**
     * Shards the catalog still gives this backend although it lost their groups with its disk: asks the metadata
     * group to hand them to other backends (at most every 10 s; where no other backend can take one, it stays
     * listed, the shard under-replicated, this backend not ready).
     */
    private void releaseLostReplicas(String id, ClusterImage image) {
        List<String> lost = guard.listedForbidden(id, image);
        if (lost.isEmpty() || System.nanoTime() - lastReleaseNanos < TimeUnit.SECONDS.toNanos(10)) {
            return;
        }
        lastReleaseNanos = System.nanoTime();
        LOG.error("backend {} lost its data but the catalog still lists it as a replica of shards {}: it does not"
                + " rejoin them under this id (the others counted its acknowledgements) and asks the metadata group"
                + " to give them to other backends. See docs/operations.md, Backup and restore.", id, lost);
        client.submit(new MetadataCommand.ReleaseReplicas(id, lost));
    }

    private static RaftGroupId groupId(ShardInfo shard) {
        return RaftGroupId.valueOf(UUID.fromString(shard.groupId()));
    }

    public String shardName(RaftGroupId gid) {
        for (ShardInfo shard : catalog.image().shards().values()) {
            if (groupId(shard).equals(gid)) {
                return shard.shardId();
            }
        }
        return gid.getUuid().toString();
    }

    public Set<String> catalogReplicas(RaftGroupId gid) {
        for (ShardInfo shard : catalog.image().shards().values()) {
            if (groupId(shard).equals(gid)) {
                return new TreeSet<>(shard.replicas());
            }
        }
        return Set.of();
    }

    /** The partitions of the shards this backend leads, for the queue metrics (each is exported by its primary only). */
    public List<QueueMetrics.Row> primaryPartitions() {
        return housekeeping.primaryPartitions();
    }

    /**
     * Housekeeping of the shards this backend leads, every second (frontends of a cluster do none): step down if its
     * clock is off, then what every shard leader does ({@link ShardHousekeeping}: open partitions idle since a restart,
     * sweep retention, reconcile with the catalog every {@link ShardHousekeeping#RECONCILE_EVERY} ticks).
     */
    private void sweep() {
        try {
            backend.leadership().stepDownIfSkewed();
            housekeeping.tick();
        } catch (RuntimeException e) {
            LOG.warn("retention sweep failed", e);
        }
    }

    /** How often the heartbeat carries the led partitions' load (the auto-split policy measures over minutes). */
    static final long LOAD_REPORT_MILLIS = 5_000;
    private final LoadReporter loadReporter = new LoadReporter();
    private long lastLoadReportNanos = System.nanoTime();

    /** Configures a partition at once when a frontend waits for it, if this backend leads its shard. */
    private final PromptReconciler prompt;
    private final ShardHousekeeping housekeeping;

    /** The catalog's shards whose Raft group this backend leads now, ready: what its housekeeping drives. */
    private List<ShardHousekeeping.Led> led(ClusterImage image) {
        List<ShardHousekeeping.Led> out = new ArrayList<>();
        for (ShardInfo shard : image.shards().values()) {
            RaftGroupId gid = groupId(shard);
            var machine = backend.shard(gid);
            if (machine != null && backend.isLeaderReady(gid)) {
                out.add(new ShardHousekeeping.Led(shard.shardId(), machine.core(),
                        (id, command) -> backend.submit(gid, id, command)));
            }
        }
        return out;
    }

    /** The partitions the catalog places on each shard. */
    private static Map<String, List<PartitionId>> assigned(ClusterImage image) {
        Map<String, List<PartitionId>> assigned = new HashMap<>();
        for (var q : image.queues().values()) {
            for (var p : image.partitionsOf(q.queueId())) {
                if (p.shardId() != null) {
                    assigned.computeIfAbsent(p.shardId(), k -> new ArrayList<>())
                            .add(new PartitionId(q.queueId(), p.index()));
                }
            }
        }
        return assigned;
    }

    /** The shard groups this backend hosts, with whether it leads each. */
    public ArrayNode hostedShards() {
        var out = JsonNodeFactory.instance.arrayNode();
        for (RaftGroupId gid : backend.hostedGroups()) {
            var machine = backend.shard(gid);
            var shard = out.addObject().put("groupId", gid.getUuid().toString()).put("leader", backend.isLeader(gid))
                    .put("failed", machine != null && machine.closed())
                    .put("livePartitions", machine == null ? 0
                            : machine.core().storedPartitions().stream().filter(p -> !p.retired()).count());
            // the last entries applied here with the store's digest after each: replicas compared at a common index
            // must agree (the nemesis checks it)
            var digests = shard.putArray("digests");
            if (machine != null) {
                machine.core().recentDigests().forEach(a -> digests.addArray().add(a.index()).add(Long.toHexString(a.digest())));
            }
        }
        return out;
    }

    /** How often the heartbeat carries the Raft state of the shards this backend leads (the operator's view). */
    static final long SHARD_REPORT_MILLIS = 2_000;
    private long lastShardReportNanos = System.nanoTime() - TimeUnit.MILLISECONDS.toNanos(SHARD_REPORT_MILLIS);

    /** The Raft state of each shard of the catalog this backend leads now. */
    List<ShardReport> ledShards(String id, ClusterImage image) {
        List<ShardReport> out = new ArrayList<>();
        var hosted = backend.hostedGroups();
        for (ShardInfo shard : image.shards().values()) { // a replica being moved off still leads until it is out
            RaftGroupId gid = groupId(shard);
            ShardHealth health;
            try {
                health = hosted.contains(gid) ? backend.health(gid) : null;
            } catch (RuntimeException e) { // a group closing or reinitializing: no report this time
                continue;
            }
            if (health != null && health.leader()) {
                out.add(new ShardReport(shard.shardId(), id, List.copyOf(health.members()), health.inSync(),
                        health.followerLag(), health.changing(), health.appliedIndex(), 0));
            }
        }
        return out;
    }

    /** Register (until the group has accepted us), heartbeat, and join newly assigned shards. */
    private void tick(String id, String address) {
        try {
            guard.decide(id, catalog); // throws (and the next tick retries) while the catalog cannot be read
            ClusterImage image = catalog.image();
            NodeInfo me = image.nodes().get(id);
            if (me == null || !me.address().equals(address)) {
                client.submit(new MetadataCommand.RegisterNode(id, address));
                image = catalog.refresh();
            }
            List<PartitionLoad> loads = List.of();
            if (System.nanoTime() - lastLoadReportNanos >= TimeUnit.MILLISECONDS.toNanos(LOAD_REPORT_MILLIS)) {
                lastLoadReportNanos = System.nanoTime();
                loads = loadReporter.changed(primaryPartitions(), image);
            }
            List<ShardReport> shards = null; // no report on this beat
            if (System.nanoTime() - lastShardReportNanos >= TimeUnit.MILLISECONDS.toNanos(SHARD_REPORT_MILLIS)) {
                lastShardReportNanos = System.nanoTime();
                shards = ledShards(id, image);
            }
            long sent = System.nanoTime(); // after the stats: the round trip is the clock reading's error bound
            long reference = client.heartbeat(id, loads, shards);
            backend.clock().observeReference(reference, sent, System.nanoTime());
            if (image.shards().isEmpty() || !image.shardsOf(id).stream().allMatch(
                    sh -> backend.hostedGroups().contains(RaftGroupId.valueOf(UUID.fromString(sh.groupId()))))) {
                image = catalog.refresh(); // shards may have been assigned since the last periodic refresh
            }
            for (ShardInfo shard : image.shardsOf(id)) {
                if (guard.mayJoin(shard.groupId())) {
                    // a shard whose replicas changed since it was formed (epoch > 1) exists elsewhere: join it empty
                    // and let its leader add this replica. Started with the new membership, a one-replica shard's
                    // replica would elect itself on an empty log; with more, it campaigns if the leader is slow to add
                    // it, and the leader, not yet counting it a member, answers its pre-vote SHUTDOWN: Ratis closes
                    // the replica for good (ShardedBackendsIT's rebalance failed so in CI)
                    backend.join(group(image, shard), shard.epoch() > 1);
                }
            }
            releaseLostReplicas(id, image);
            var failed = backend.failedGroups();
            if (!failed.isEmpty() && System.nanoTime() - lastFailedLogNanos > TimeUnit.SECONDS.toNanos(30)) {
                lastFailedLogNanos = System.nanoTime();
                LOG.error("backend {}: its replicas of shard groups {} have failed (Ratis closed them; see the first"
                        + " error above): those shards run a replica short and this backend is not ready; restart it"
                        + " to recover them", id, failed);
            }
            ClusterImage current = image;
            if (reconfiguring.compareAndSet(false, true)) {
                // membership changes can block for seconds: never on the thread that heartbeats
                sweeper.execute(() -> {
                    try {
                        followReplicaChanges(id, current);
                    } catch (RuntimeException e) {
                        LOG.warn("following replica changes failed (retried on the next tick)", e);
                    } finally {
                        reconfiguring.set(false);
                    }
                });
            }
        } catch (MetadataUnavailableException e) {
            // said at most every 30 s: a group that stays out of reach (down, or refusing this node's certificate)
            // must show in the log, a leader change must not flood it
            long now = System.nanoTime();
            if (now - lastUnavailableLogNanos > TimeUnit.SECONDS.toNanos(30)) {
                lastUnavailableLogNanos = now;
                LOG.warn("metadata group unavailable (retrying): {}", e.getMessage());
            } else {
                LOG.debug("metadata group unavailable: {}", e.getMessage());
            }
        } catch (RuntimeException e) {
            LOG.warn("backend agent tick failed", e);
        }
    }

    /**
     * When the catalog replaced a shard's replica (a dead backend), the shard's leader changes the Raft membership to
     * match, and a backend no longer among a shard's replicas drops its copy.
     */
    private void followReplicaChanges(String id, ClusterImage image) {
        for (ShardInfo shard : image.shards().values()) {
            RaftGroupId gid = RaftGroupId.valueOf(UUID.fromString(shard.groupId()));
            if (!backend.hostedGroups().contains(gid)) {
                continue;
            }
            if (!shard.replicas().contains(id)) {
                // replaced here: while this backend still leads the group it hands the leadership to a replica that
                // stays, which then makes the change (ShardMembership.reconfigure); once that is committed, it leaves
                backend.membership().reconfigure(group(image, shard));
                backend.leave(gid);
            } else if (!backend.membership().reconfigure(group(image, shard))) {
                backend.leadership().handBack(group(image, shard), shard.replicas().get(0));
            }
        }
        Set<RaftGroupId> assigned = new HashSet<>();
        catalog.image().shardsOf(id).forEach(shard -> assigned.add(groupId(shard))); // the latest, not the tick's
        backend.deleteDroppedStores(assigned::contains);
    }

    /**
     * The Raft group of a shard: its replicas at their registered addresses, all of the same Raft priority. The first
     * replica is the shard's preferred leader: its leader hands the leadership back to it once it answers steadily
     * ({@link ShardLeadership#handBack}), which spreads shard leadership, i.e. the primaries, over the backends. Not
     * through a higher Raft priority: with one, a candidate waits out an election timeout (twice: pre-vote and vote)
     * for a silent preferred member, so a partitioned primary stalled its shard longer than a killed one.
     */
    public static RaftGroup group(ClusterImage image, ShardInfo shard) {
        List<RaftPeer> peers = new ArrayList<>();
        for (String replica : shard.replicas()) {
            NodeInfo node = image.nodes().get(replica);
            if (node != null) {
                peers.add(RaftPeer.newBuilder().setId(replica).setAddress(node.address()).build());
            }
        }
        return RaftGroup.valueOf(RaftGroupId.valueOf(UUID.fromString(shard.groupId())), peers);
    }

    private static ThreadFactory daemon(String name) {
        return r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        };
    }

    @Override
    public void close() {
        agent.shutdownNow();
        sweeper.shutdownNow();
        prompt.close();
    }
}
