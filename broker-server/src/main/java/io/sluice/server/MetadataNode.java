package io.sluice.server;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.sluice.common.SystemClock;
import io.sluice.metadata.image.MetadataJson;
import io.sluice.metadata.raft.MetadataPeers;
import io.sluice.metadata.raft.MetadataServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** {@code sluice metadata}: one member of the metadata group, with its admin endpoint. */
public final class MetadataNode implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(MetadataNode.class);

    private final ServerConfig config;
    private MetadataServer server;
    private AdminServer admin;
    private InetSocketAddress adminAddress;
    private volatile boolean serving;

    public MetadataNode(ServerConfig config) {
        this.config = config;
    }

    public void start() throws IOException, InterruptedException {
        String id = config.get(ServerConfigKeys.NODE_ID);
        String peersSpec = config.get(ServerConfigKeys.METADATA_PEERS);
        if (id.isEmpty() || peersSpec.isEmpty()) {
            throw new IllegalArgumentException("sluice metadata needs --node-id and --peers");
        }
        MetadataPeers peers = MetadataPeers.parse(peersSpec);
        // its Raft port binds the configured host, like its admin port; its peers reach it at its --peers address
        String host = config.get(ServerConfigKeys.HOST);
        server = new MetadataServer(id, host, peers, Path.of(config.get(ServerConfigKeys.DATA_DIR)).toAbsolutePath(),
                SystemClock.INSTANCE, config.get(ServerConfigKeys.REPLICATION_FACTOR),
                config.get(ServerConfigKeys.BACKEND_DEAD_AFTER_MS), config.get(ServerConfigKeys.METADATA_SNAPSHOT_EVERY),
                config.get(ServerConfigKeys.SHARDS), ClusterTransport.forServer(config, "sluice metadata", host));
        server.start();
        int rf = config.get(ServerConfigKeys.REPLICATION_FACTOR);
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        registry.gauge("sluice.metadata.leader", server, m -> m.isLeader() ? 1 : 0);
        registry.gauge("sluice.metadata.leader_known", server, m -> m.leaderId() != null ? 1 : 0);
        DevServer.bindJvmMetrics(registry);
        admin = new AdminServer(registry, () -> serving, () -> server.leaderId() != null,
                () -> new String(MetadataJson.write(ClusterStatus.render(server.image(), server.memberRoles(),
                        peers.addresses(), server::isBackendAlive, server.isLeader(), rf)),
                        java.nio.charset.StandardCharsets.UTF_8),
                java.util.Map.of("/admin/access-keys", AccessKeyAdmin.handler(server::submit),
                        "/admin/rebalance", AccessKeyAdmin.rebalance(server::submit)), AdminAccess.configured(config));
        adminAddress = admin.start(config.get(ServerConfigKeys.ADMIN_HOST), config.get(ServerConfigKeys.ADMIN_PORT),
                HttpTls.context(config));
        serving = true;
        LOG.info("metadata member {} serving; admin on port {}", id, adminAddress.getPort());
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
        if (server != null) {
            server.close();
        }
    }
}
