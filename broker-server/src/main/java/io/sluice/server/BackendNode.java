package io.sluice.server;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.sluice.backend.agent.BackendAgent;
import io.sluice.backend.agent.DeadLetterHandOffs;
import io.sluice.backend.agent.LostDiskGuard;
import io.sluice.backend.agent.MoveTaskDriver;
import io.sluice.backend.metrics.QueueMetrics;
import io.sluice.backend.metrics.ShardMetrics;
import io.sluice.backend.raft.BackendServer;
import io.sluice.backend.shard.LeaderClock;
import io.sluice.backend.raft.ShardedPartitionService;
import io.sluice.common.Clock;
import io.sluice.common.SystemClock;
import io.sluice.common.raft.RaftTransport;
import io.sluice.metadata.image.MetadataJson;
import io.sluice.metadata.raft.CachedCatalog;
import io.sluice.metadata.raft.MetadataClient;
import io.sluice.metadata.raft.MetadataPeers;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code sluice backend}: assembles a {@link BackendServer}, a metadata client, the cached catalog and the
 * {@link BackendAgent} that registers, heartbeats, joins the shard groups the catalog assigns and keeps their
 * partitions in line; adds its meters and, standalone, an admin endpoint.
 */
public final class BackendNode implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(BackendNode.class);

    private final ServerConfig config;
    private BackendServer backend;
    private MetadataClient client;
    private CachedCatalog catalog;
    private BackendAgent agent;
    private ShardedPartitionService handOffPartitions;
    private DeadLetterHandOffs handOffs;
    private MoveTaskDriver moveTasks;
    private AdminServer admin;
    private InetSocketAddress adminAddress;
    private volatile boolean serving;
    private MetadataPeers peers;

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
                        peers.addresses(), null, null, config.get(ServerConfigKeys.REPLICATION_FACTOR)))), StandardCharsets.UTF_8),
                Map.of(), // catalog writes go through a metadata member or a frontend
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
        boolean fresh = !Files.exists(dataDir.resolve("raft"));
        DataDirs.prepare(dataDir, config.get(ServerConfigKeys.DATA_DIR_ALLOW_SHARED));
        LostDiskGuard guard = new LostDiskGuard(dataDir, fresh);
        // From now on the folder is not "fresh": a restart before the first join is not mistaken for a lost disk.
        Files.createDirectories(dataDir.resolve("raft"));
        RaftTransport transport = ClusterTransport.forServer(config, "sluice backend", host);
        int offset = config.get(ServerConfigKeys.TEST_CLOCK_OFFSET_MS);
        if (offset != 0) {
            LOG.warn("backend {}: its clock is shifted by {} ms (sluice.test.clock-offset-ms: testing only)", id, offset);
        }
        Clock wall = offset == 0 ? SystemClock.INSTANCE : () -> SystemClock.INSTANCE.nowMillis() + offset;
        backend = new BackendServer(id, host, raftPort, dataDir, new LeaderClock(wall,
                System::nanoTime, config.get(ServerConfigKeys.BACKEND_MAX_CLOCK_SKEW_MS)),
                config.get(ServerConfigKeys.SHARD_SNAPSHOT_EVERY), transport,
                config.get(ServerConfigKeys.RAFT_ELECTION_TIMEOUT_MS));
        backend.start();
        peers = MetadataPeers.parse(config.get(ServerConfigKeys.METADATA_PEERS));
        client = new MetadataClient(peers, transport);
        catalog = new CachedCatalog(client, config.get(ServerConfigKeys.CATALOG_REFRESH_MS), false); // no secrets
        agent = new BackendAgent(id, advertisedAddress(), config.get(ServerConfigKeys.MAX_INFLIGHT), backend, client,
                catalog, guard);
        agent.start(Math.min(1000, Math.max(250, config.get(ServerConfigKeys.BACKEND_DEAD_AFTER_MS) / 5)));
        // the dead-letter hand-offs of the shards it leads: copies go to the dead-letter queue's shard, wherever
        // that is (no arrival watches: this client only writes)
        handOffPartitions = new ShardedPartitionService(new CatalogRouter(catalog::image), transport, backend, false);
        handOffs = new DeadLetterHandOffs(catalog::image, catalog::refresh, handOffPartitions,
                backend::pendingDeadLetters, System::nanoTime);
        backend.addEffectListener(handOffs);
        handOffs.start().bindMetrics(registry);
        // the message move tasks of the dead-letter queues' partitions it leads, with the same client
        moveTasks = new MoveTaskDriver(catalog::image, catalog::refresh, handOffPartitions, backend::moveTasksToDrive,
                backend::isPrimaryOf);
        moveTasks.start().bindMetrics(registry);
        registry.gauge("sluice.clock.offset.seconds", backend.clock(), c -> c.offsetMillis() / 1000.0);
        registry.getPrometheusRegistry().register(new ShardMetrics(backend, agent::shardName, agent::catalogReplicas));
        registry.getPrometheusRegistry().register(new QueueMetrics(agent::primaryPartitions, SystemClock.INSTANCE));
        serving = true;
    }

    boolean serving() {
        return serving;
    }

    /** What this backend adds to a cluster status: its id, its lost-disk guard and the shard groups it hosts. */
    ObjectNode status(ObjectNode cluster) {
        return cluster.put("node", config.get(ServerConfigKeys.NODE_ID))
                .put("lostDiskGuard", agent.lostDiskGuarded()).set("hostedShards", agent.hostedShards());
    }

    /**
     * Whether it may take requests: registered under its current address and hosting every shard group the catalog
     * assigns to it (a rolling restart waits for this before taking down the next backend).
     */
    boolean ready() {
        return agent != null && agent.ready();
    }

    /** host:port of its Raft server as the cluster reaches it. */
    private String advertisedAddress() {
        String advertised = config.get(ServerConfigKeys.BACKEND_ADVERTISE_HOST);
        return (advertised.isEmpty() ? config.get(ServerConfigKeys.HOST) : advertised) + ":"
                + config.get(ServerConfigKeys.BACKEND_RAFT_PORT);
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
            agent.close();
        }
        if (moveTasks != null) {
            moveTasks.close();
        }
        if (handOffs != null) {
            handOffs.close();
        }
        if (handOffPartitions != null) {
            handOffPartitions.close();
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
