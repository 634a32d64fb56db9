package io.sluice.server;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.handler.ssl.SslContext;
import io.sluice.backend.raft.LocalLeaders;
import io.sluice.backend.raft.ShardedPartitionService;
import io.sluice.common.SystemClock;
import io.sluice.common.raft.RaftTransport;
import io.sluice.frontend.console.Console;
import io.sluice.metadata.image.MetadataJson;
import io.sluice.metadata.raft.CachedCatalog;
import io.sluice.metadata.raft.LeaderHealth;
import io.sluice.metadata.raft.MetadataClient;
import io.sluice.metadata.raft.MetadataPeers;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code sluice frontend}: a cluster's frontend. It stores nothing: the catalog comes from the metadata group
 * ({@code sluice.metadata.peers}, read through a {@link CachedCatalog}) and partitions live on the backends' shards
 * ({@link ShardedPartitionService}); the SQS endpoint over them is a {@link FrontendRole}. Standalone ({@link #start})
 * it adds JVM metrics and an admin endpoint of its own; in a combined node ({@link #startRole}) it is one of the
 * node's roles and reaches the shard leaders hosted by that process without an RPC.
 */
public final class FrontendNode implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(FrontendNode.class);

    private final ServerConfig config;
    private MetadataClient metadataClient;
    private CachedCatalog catalog;
    private ShardedPartitionService sharded;
    private FrontendRole role;
    private LeaderView leaderView;
    private AdminServer admin;
    private InetSocketAddress adminAddress;

    public FrontendNode(ServerConfig config) {
        this.config = config;
    }

    /** Standalone: the role, JVM metrics and its own admin endpoint (catalog writes through the metadata group). */
    public void start() throws InterruptedException {
        SslContext httpTls = HttpTls.context(config); // first: a bad file stops the start before anything runs
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        DevServer.bindJvmMetrics(registry);
        startRole(registry, LocalLeaders.NONE, httpTls);
        leaderView = new LeaderView(metadataClient::health);
        int rf = config.get(ServerConfigKeys.REPLICATION_FACTOR);
        MetadataPeers peers = MetadataPeers.parse(config.get(ServerConfigKeys.METADATA_PEERS));
        Supplier<String> status = () -> {
            LeaderHealth health = leaderView.health();
            return new String(MetadataJson.write(ClusterStatus.render(catalog.image(), peers.addresses(),
                    health == null ? null : health.leader(), health, rf)), StandardCharsets.UTF_8);
        };
        AdminAccess access = AdminAccess.configured(config);
        Function<byte[], String> rebalance = AccessKeyAdmin.rebalance(metadataClient::submit);
        admin = new AdminServer(registry, role::serving, () -> notReady(leaderView::health) == null, status,
                Map.of("/admin/access-keys", AccessKeyAdmin.handler(metadataClient::submit),
                        "/admin/rebalance", rebalance), access)
                .withConsole(role.console(access, status, rebalance))
                .withReadinessReason(() -> notReady(leaderView::health));
        String adminHost = config.get(ServerConfigKeys.ADMIN_HOST);
        adminAddress = admin.start(adminHost, config.get(ServerConfigKeys.ADMIN_PORT), httpTls);
        String scheme = httpTls == null ? "http" : "https";
        LOG.info("Sluice frontend serving SQS on {}://{}:{} (admin {}://{}:{}), shards from the metadata group",
                scheme, config.get(ServerConfigKeys.HOST), role.sqsAddress().getPort(), scheme, adminHost,
                adminAddress.getPort());
    }

    /**
     * The role alone, its meters in {@code registry}: what a launcher assembles (standalone, or in a combined node).
     *
     * @param localLeaders shard leaders in this process, reached without an RPC
     */
    void startRole(PrometheusMeterRegistry registry, LocalLeaders localLeaders, SslContext httpTls)
            throws InterruptedException {
        String spec = config.get(ServerConfigKeys.METADATA_PEERS);
        if (spec.isEmpty()) {
            throw new IllegalArgumentException("sluice frontend needs --metadata-peers");
        }
        RaftTransport transport = ClusterTransport.forClient(config);
        metadataClient = new MetadataClient(MetadataPeers.parse(spec), transport);
        catalog = new CachedCatalog(metadataClient, config.get(ServerConfigKeys.CATALOG_REFRESH_MS));
        FrontendRole.awaitCatalog(catalog); // a frontend is not a backend: it neither registers nor heartbeats
        sharded = new ShardedPartitionService(new CatalogRouter(catalog::image), transport, localLeaders);
        role = new FrontendRole(config, SystemClock.INSTANCE, catalog, sharded, sharded, false, httpTls != null);
        role.start(registry, httpTls);
    }

    /** The web console over this frontend, for the admin endpoint that serves it (a combined node's). */
    Console console(AdminAccess access, Supplier<String> status, Function<byte[], String> rebalance) {
        return role.console(access, status, rebalance);
    }

    boolean serving() {
        return role != null && role.serving();
    }

    /** Why it is not ready ({@code /ready}'s body), or null; {@code health} is the metadata leader's view. */
    String notReady(Supplier<LeaderHealth> health) {
        return role == null ? "not started" : role.notReady(health);
    }

    public InetSocketAddress sqsAddress() {
        return role.sqsAddress();
    }

    public InetSocketAddress adminAddress() {
        return adminAddress;
    }

    /** Graceful: stop accepting, answer parked polls, let in-flight requests finish, then close its clients. */
    @Override
    public void close() {
        if (role != null) {
            role.stopServing();
        }
        if (admin != null) {
            admin.close();
        }
        if (role != null) {
            role.close();
        }
        if (leaderView != null) {
            leaderView.close();
        }
        if (sharded != null) {
            sharded.close();
        }
        if (catalog != null) {
            catalog.close();
        }
        if (metadataClient != null) {
            metadataClient.close();
        }
        LOG.info("Sluice frontend stopped");
    }
}
