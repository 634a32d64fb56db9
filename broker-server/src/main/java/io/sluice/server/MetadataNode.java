package io.sluice.server;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.sluice.common.SystemClock;
import io.sluice.metadata.image.MetadataJson;
import io.sluice.metadata.raft.LeaderHealth;
import io.sluice.metadata.raft.MetadataPeers;
import io.sluice.metadata.raft.MetadataServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** {@code sluice metadata}: one member of the metadata group, with its admin endpoint. */
public final class MetadataNode implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(MetadataNode.class);

    private final ServerConfig config;
    private MetadataServer server;
    private AdminServer admin;
    private InetSocketAddress adminAddress;
    private MetadataPeers peers;
    private volatile boolean serving;
    private LeaderView leaderView;

    public MetadataNode(ServerConfig config) {
        this.config = config;
    }

    /** Standalone ({@code sluice metadata}): the member, JVM metrics and its own admin endpoint. */
    public void start() throws IOException, InterruptedException {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        DevServer.bindJvmMetrics(registry);
        startRole(registry);
        admin = new AdminServer(registry, () -> serving, this::ready, () -> new String(MetadataJson.write(status()),
                StandardCharsets.UTF_8), posts(), AdminAccess.configured(config));
        adminAddress = admin.start(config.get(ServerConfigKeys.ADMIN_HOST), config.get(ServerConfigKeys.ADMIN_PORT),
                HttpTls.context(config));
        LOG.info("metadata member {} serving; admin on port {}", server.nodeId(), adminAddress.getPort());
    }

    /** The role alone, its meters in {@code registry}: what a launcher assembles (standalone or in a combined node). */
    public void startRole(PrometheusMeterRegistry registry) throws IOException {
        String id = config.get(ServerConfigKeys.NODE_ID);
        String peersSpec = config.get(ServerConfigKeys.METADATA_PEERS);
        if (id.isEmpty() || peersSpec.isEmpty()) {
            throw new IllegalArgumentException("sluice metadata needs --node-id and --peers");
        }
        peers = MetadataPeers.parse(peersSpec);
        // its Raft port binds the configured host, like its admin port; its peers reach it at its --peers address
        String host = config.get(ServerConfigKeys.HOST);
        Path dataDir = Path.of(config.get(ServerConfigKeys.DATA_DIR)).toAbsolutePath();
        DataDirs.prepare(dataDir, config.get(ServerConfigKeys.DATA_DIR_ALLOW_SHARED));
        server = new MetadataServer(id, host, peers, dataDir,
                SystemClock.INSTANCE, config.get(ServerConfigKeys.REPLICATION_FACTOR),
                config.get(ServerConfigKeys.BACKEND_DEAD_AFTER_MS), config.get(ServerConfigKeys.METADATA_SNAPSHOT_EVERY),
                config.get(ServerConfigKeys.SHARDS), ClusterTransport.forServer(config, "sluice metadata", host),
                config.get(ServerConfigKeys.RAFT_ELECTION_TIMEOUT_MS));
        server.autoSplit(ServerConfigKeys.autoSplit(config));
        server.start();
        leaderView = new LeaderView(server::healthOnLeader);
        registerSplits(registry, server);
        registry.gauge("sluice.metadata.leader", server, m -> m.isLeader() ? 1 : 0);
        registry.gauge("sluice.metadata.leader_known", server, m -> m.leaderId() != null ? 1 : 0);
        serving = true;
    }

    /** {@code sluice_queue_splits_total}: the auto-splits a metadata member made while it led. */
    static void registerSplits(MeterRegistry registry, MetadataServer member) {
        FunctionCounter.builder("sluice.queue.splits", member, MetadataServer::splits)
                .description("Queues this metadata member split (raised a hot queue's partition count) while it led")
                .register(registry);
    }

    /** The member in this process (null before {@link #startRole}). */
    public MetadataServer server() {
        return server;
    }

    boolean serving() {
        return serving;
    }

    /** Ready once it knows the group's leader. */
    boolean ready() {
        return server.leaderId() != null;
    }

    /**
     * The cluster as this member sees it ({@code GET /admin/status}); backend liveness and shard reports are the
     * leader's (its own when it leads, else fetched from the leader in the background).
     */
    ObjectNode status() {
        var health = health();
        return ClusterStatus.render(server.image(), peers.addresses(), server.leaderId(), health,
                config.get(ServerConfigKeys.REPLICATION_FACTOR));
    }

    /** What the metadata leader knows of backends and shards (its own view when it leads), or null if not known. */
    LeaderHealth health() {
        return server.isLeader() ? server.localHealth() : leaderView.health();
    }

    /** The admin writes a member serves (they go through the group). */
    Map<String, Function<byte[], String>> posts() {
        return Map.of("/admin/access-keys", AccessKeyAdmin.handler(server::submit),
                "/admin/rebalance", AccessKeyAdmin.rebalance(server::submit));
    }

    public InetSocketAddress adminAddress() {
        return adminAddress;
    }

    @Override
    public void close() {
        serving = false;
        if (admin != null) {
            admin.close();
        }
        if (leaderView != null) {
            leaderView.close();
        }
        if (server != null) {
            server.close();
        }
    }
}
