package io.sluice.server;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.sluice.backend.agent.LostDiskGuard;
import io.sluice.backend.metrics.QueueMetrics;
import io.sluice.backend.metrics.ShardMetrics;
import io.sluice.backend.raft.BackendServer;
import io.sluice.backend.raft.LeaderClock;
import io.sluice.common.SystemClock;
import io.sluice.common.raft.RaftTransport;
import io.sluice.metadata.image.ClusterImage;
import io.sluice.metadata.image.MetadataCommand;
import io.sluice.metadata.image.MetadataJson;
import io.sluice.metadata.image.NodeInfo;
import io.sluice.metadata.image.ShardInfo;
import io.sluice.metadata.raft.CachedCatalog;
import io.sluice.metadata.raft.MetadataClient;
import io.sluice.metadata.raft.MetadataPeers;
import io.sluice.metadata.raft.MetadataUnavailableException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code sluice backend}: a {@link BackendServer} that registers with the metadata group, heartbeats, and joins every
 * shard group the catalog assigns to it.
 */
public final class BackendNode implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(BackendNode.class);

    private final ServerConfig config;
    private BackendServer backend;
    private MetadataClient client;
    private CachedCatalog catalog;
    private ScheduledExecutorService agent;
    private volatile ScheduledExecutorService sweeper;
    private final java.util.concurrent.atomic.AtomicBoolean reconfiguring = new java.util.concurrent.atomic.AtomicBoolean();
    private AdminServer admin;
    private InetSocketAddress adminAddress;
    private volatile boolean serving;
    private LostDiskGuard guard;
    private MetadataPeers peers;
    private long lastReleaseNanos;
    private long lastUnavailableLogNanos = System.nanoTime() - TimeUnit.MINUTES.toNanos(1);
    private long lastFailedLogNanos = System.nanoTime() - TimeUnit.MINUTES.toNanos(1);

    public BackendNode(ServerConfig config) {
        this.config = config;
    }

    /** Standalone ({@code sluice backend}): the role, JVM metrics and its own admin endpoint. */
    public void start() throws Exception {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        DevServer.bindJvmMetrics(registry);
        startRole(registry);
        admin = new AdminServer(registry, () -> serving, this::ready,
                () -> new String(MetadataJson.write(status(ClusterStatus.render(catalog.image(),
                        new java.util.TreeMap<>(), peers.addresses(), b -> true, false,
                        config.get(ServerConfigKeys.REPLICATION_FACTOR)))), StandardCharsets.UTF_8),
                java.util.Map.of(), // catalog writes go through a metadata member or a frontend
                AdminAccess.configured(config));
        adminAddress = admin.start(config.get(ServerConfigKeys.ADMIN_HOST), config.get(ServerConfigKeys.ADMIN_PORT),
                HttpTls.context(config));
    }

    /** The role alone, its meters in {@code registry}: what a launcher assembles (standalone or in a combined node). */
    public void startRole(PrometheusMeterRegistry registry) throws Exception {
        String id = config.get(ServerConfigKeys.NODE_ID);
        if (id.isEmpty() || config.get(ServerConfigKeys.METADATA_PEERS).isEmpty()) {
            throw new IllegalArgumentException("sluice backend needs --node-id and --metadata-peers");
        }
        int raftPort = config.get(ServerConfigKeys.BACKEND_RAFT_PORT);
        String host = config.get(ServerConfigKeys.HOST);
        Path dataDir = Path.of(config.get(ServerConfigKeys.DATA_DIR)).toAbsolutePath();
        guard = new LostDiskGuard(dataDir, !java.nio.file.Files.exists(dataDir.resolve("raft")));
        // From now on the folder is not "fresh": a restart before the first join is not mistaken for a lost disk.
        java.nio.file.Files.createDirectories(dataDir.resolve("raft"));
        RaftTransport transport = ClusterTransport.forServer(config, "sluice backend", host);
        backend = new BackendServer(id, host, raftPort, dataDir, new LeaderClock(SystemClock.INSTANCE,
                System::nanoTime, config.get(ServerConfigKeys.BACKEND_MAX_CLOCK_SKEW_MS)),
                config.get(ServerConfigKeys.SHARD_SNAPSHOT_EVERY), transport);
        backend.start();
        peers = MetadataPeers.parse(config.get(ServerConfigKeys.METADATA_PEERS));
        client = new MetadataClient(peers, transport);
        catalog = new CachedCatalog(client, config.get(ServerConfigKeys.CATALOG_REFRESH_MS), false); // no secrets
        agent = Executors.newSingleThreadScheduledExecutor(DevServer.daemon("sluice-backend-agent"));
        long every = Math.min(1000, Math.max(250, config.get(ServerConfigKeys.BACKEND_DEAD_AFTER_MS) / 5));
        sweeper = Executors.newSingleThreadScheduledExecutor(DevServer.daemon("sluice-backend-sweeper"));
        sweeper.scheduleWithFixedDelay(this::sweep, 1, 1, TimeUnit.SECONDS);
        agent.scheduleWithFixedDelay(() -> tick(id, advertisedAddress()), 0, every, TimeUnit.MILLISECONDS);
        registry.gauge("sluice.clock.offset.seconds", backend.clock(), c -> c.offsetMillis() / 1000.0);
        registry.getPrometheusRegistry().register(new ShardMetrics(backend, this::shardName, this::catalogReplicas));
        registry.getPrometheusRegistry().register(new QueueMetrics(this::primaryPartitions, SystemClock.INSTANCE));
        serving = true;
    }

    boolean serving() {
        return serving;
    }

    /** What this backend adds to a cluster status: its id, its lost-disk guard and the shard groups it hosts. */
    com.fasterxml.jackson.databind.node.ObjectNode status(com.fasterxml.jackson.databind.node.ObjectNode cluster) {
        return cluster.put("node", config.get(ServerConfigKeys.NODE_ID))
                .put("lostDiskGuard", !guard.forbidden().isEmpty()).set("hostedShards", hostedShards());
    }

    /** Whether it may take requests: registered and hosting every shard the catalog assigns it ({@link #ready(String)}). */
    boolean ready() {
        return ready(config.get(ServerConfigKeys.NODE_ID));
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
        if (me == null || !me.address().equals(advertisedAddress())) {
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

    /** host:port of its Raft server as the cluster reaches it. */
    private String advertisedAddress() {
        String advertised = config.get(ServerConfigKeys.BACKEND_ADVERTISE_HOST);
        return (advertised.isEmpty() ? config.get(ServerConfigKeys.HOST) : advertised) + ":"
                + config.get(ServerConfigKeys.BACKEND_RAFT_PORT);
    }

    private static RaftGroupId groupId(ShardInfo shard) {
        return RaftGroupId.valueOf(UUID.fromString(shard.groupId()));
    }

    private String shardName(RaftGroupId gid) {
        for (ShardInfo shard : catalog.image().shards().values()) {
            if (groupId(shard).equals(gid)) {
                return shard.shardId();
            }
        }
        return gid.getUuid().toString();
    }

    private java.util.Set<String> catalogReplicas(RaftGroupId gid) {
        for (ShardInfo shard : catalog.image().shards().values()) {
            if (groupId(shard).equals(gid)) {
                return new java.util.TreeSet<>(shard.replicas());
            }
        }
        return java.util.Set.of();
    }

    /** The partitions of the shards this backend leads, for the queue metrics (each is exported by its primary only). */
    private List<QueueMetrics.Row> primaryPartitions() {
        ClusterImage image = catalog.image();
        Map<String, List<io.sluice.partition.PartitionId>> byShard = new java.util.HashMap<>();
        Map<Long, String> names = new java.util.HashMap<>();
        for (var q : image.queues().values()) {
            names.put(q.queueId(), q.name());
            for (var p : image.partitionsOf(q.queueId())) {
                if (p.shardId() != null) {
                    byShard.computeIfAbsent(p.shardId(), k -> new ArrayList<>())
                            .add(new io.sluice.partition.PartitionId(q.queueId(), p.index()));
                }
            }
        }
        List<QueueMetrics.Row> rows = new ArrayList<>();
        for (ShardInfo shard : image.shards().values()) {
            RaftGroupId gid = groupId(shard);
            var machine = backend.shard(gid);
            List<io.sluice.partition.PartitionId> ids = byShard.get(shard.shardId());
            if (machine == null || ids == null || !backend.isLeaderReady(gid)) {
                continue;
            }
            try {
                for (var st : machine.stats(ids)) {
                    String name = names.get(st.id().queueId());
                    if (name != null) {
                        rows.add(new QueueMetrics.Row(name, st.id().index(), shard.shardId(), st.counts(), st.totals()));
                    }
                }
            } catch (RuntimeException e) { // one shard's failure must not empty the whole scrape
                LOG.warn("queue metrics of shard {} unavailable: {}", shard.shardId(), e.toString());
            }
        }
        return rows;
    }

    /**
     * Housekeeping of the shards this backend leads, every second (frontends of a cluster do none): step down if its
     * clock is off, open partitions idle since a restart, sweep retention, and every {@link #RECONCILE_EVERY} ticks
     * reconcile the shards' partitions with the catalog ({@link PartitionReconciler}).
     */
    private void sweep() {
        try {
            backend.stepDownIfSkewed();
            for (RaftGroupId gid : backend.hostedGroups()) {
                var machine = backend.shard(gid);
                if (machine != null && backend.isLeaderReady(gid)) {
                    machine.openStored(64);
                }
            }
            backend.sweep(backend.clock().now());
            if (++sweeps % RECONCILE_EVERY == 0) {
                reconcile();
            }
        } catch (RuntimeException e) {
            LOG.warn("retention sweep failed", e);
        }
    }

    static final int RECONCILE_EVERY = 10;
    private long sweeps;

    private void reconcile() {
        ClusterImage image = catalog.image();
        Map<String, List<io.sluice.partition.PartitionId>> assigned = new java.util.HashMap<>();
        for (var q : image.queues().values()) {
            for (var p : image.partitionsOf(q.queueId())) {
                if (p.shardId() != null) {
                    assigned.computeIfAbsent(p.shardId(), k -> new ArrayList<>())
                            .add(new io.sluice.partition.PartitionId(q.queueId(), p.index()));
                }
            }
        }
        for (ShardInfo shard : image.shards().values()) {
            RaftGroupId gid = groupId(shard);
            var machine = backend.shard(gid);
            if (machine == null || !backend.isLeaderReady(gid)) {
                continue;
            }
            PartitionReconciler.run(shard.shardId(), image, assigned.getOrDefault(shard.shardId(), List.of()),
                    machine.storedPartitions(), config.get(ServerConfigKeys.MAX_INFLIGHT),
                    (id, command) -> backend.submit(gid, id, command));
        }
    }

    /** The shard groups this backend hosts, with whether it leads each. */
    private com.fasterxml.jackson.databind.node.ArrayNode hostedShards() {
        var out = com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.arrayNode();
        for (RaftGroupId gid : backend.hostedGroups()) {
            var machine = backend.shard(gid);
            out.addObject().put("groupId", gid.getUuid().toString()).put("leader", backend.isLeader(gid))
                    .put("failed", machine != null && machine.closed())
                    .put("livePartitions", machine == null ? 0
                            : machine.storedPartitions().stream().filter(p -> !p.retired()).count());
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
            long sent = System.nanoTime();
            long reference = client.heartbeat(id);
            backend.clock().observeReference(reference, sent, System.nanoTime());
            if (image.shards().isEmpty() || !image.shardsOf(id).stream().allMatch(
                    sh -> backend.hostedGroups().contains(RaftGroupId.valueOf(UUID.fromString(sh.groupId()))))) {
                image = catalog.refresh(); // shards may have been assigned since the last periodic refresh
            }
            for (ShardInfo shard : image.shardsOf(id)) {
                if (guard.mayJoin(shard.groupId())) {
                    backend.join(group(image, shard));
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
            if (sweeper != null && reconfiguring.compareAndSet(false, true)) {
                // membership changes can block for seconds: never on the thread that heartbeats
                sweeper.execute(() -> {
                    try {
                        followReplicaChanges(id, current);
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
                backend.leave(gid);
            } else {
                backend.reconfigure(group(image, shard));
            }
        }
        java.util.Set<RaftGroupId> assigned = new java.util.HashSet<>();
        catalog.image().shardsOf(id).forEach(shard -> assigned.add(groupId(shard))); // the latest, not the tick's
        backend.deleteDroppedStores(assigned::contains);
    }

    /**
     * The Raft group of a shard: its replicas at their registered addresses. The first replica gets a higher Raft
     * priority: Ratis makes it the leader whenever it is up and caught up (a leader yields to it), which spreads
     * shard leadership, i.e. the primaries, over the backends.
     */
    static RaftGroup group(ClusterImage image, ShardInfo shard) {
        List<RaftPeer> peers = new ArrayList<>();
        for (String replica : shard.replicas()) {
            NodeInfo node = image.nodes().get(replica);
            if (node != null) {
                peers.add(RaftPeer.newBuilder().setId(replica).setAddress(node.address())
                        .setPriority(replica.equals(shard.replicas().get(0)) ? 1 : 0).build());
            }
        }
        return RaftGroup.valueOf(RaftGroupId.valueOf(UUID.fromString(shard.groupId())), peers);
    }

    public BackendServer server() {
        return backend;
    }

    public InetSocketAddress adminAddress() {
        return adminAddress;
    }

    @Override
    public void close() {
        serving = false;
        if (agent != null) {
            agent.shutdownNow();
        }
        if (sweeper != null) {
            sweeper.shutdownNow();
        }
        if (admin != null) {
            admin.close();
        }
        if (catalog != null) {
            catalog.close();
        }
        if (client != null) {
            client.close();
        }
        if (backend != null) {
            backend.close();
        }
    }
}
