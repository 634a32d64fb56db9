package io.sluice.server;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.sluice.metadata.image.MetadataJson;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code sluice node}: every role in one JVM, a member of a combined cluster (three of them make a 3-node cluster).
 * The launcher only assembles: a metadata member ({@link MetadataNode}), a backend ({@link BackendNode}) and a
 * frontend ({@link FrontendNode}), started in that order with one meter registry and one admin
 * endpoint. Each keeps its own port (metadata Raft, shard Raft, SQS) and its own folder under the node's data folder
 * ({@code metadata/}, {@code backend/}). The frontend reaches a shard leader hosted by this same process without an
 * RPC ({@link io.sluice.backend.raft.BackendServer#sendIfLeader}).
 */
public final class CombinedNode implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(CombinedNode.class);

    private final ServerConfig config;
    private MetadataNode metadata;
    private BackendNode backend;
    private FrontendNode frontend;
    private AdminServer admin;
    private InetSocketAddress adminAddress;

    public CombinedNode(ServerConfig config) {
        this.config = config;
    }

    public void start() throws Exception {
        String id = config.get(ServerConfigKeys.NODE_ID);
        if (id.isEmpty() || config.get(ServerConfigKeys.METADATA_PEERS).isEmpty()) {
            throw new IllegalArgumentException("sluice node needs --node-id and --metadata-peers");
        }
        Path data = Path.of(config.get(ServerConfigKeys.DATA_DIR)).toAbsolutePath();
        DataDirs.prepare(data, config.get(ServerConfigKeys.DATA_DIR_ALLOW_SHARED));
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        DevServer.bindJvmMetrics(registry);
        metadata = new MetadataNode(config.with(ServerConfigKeys.DATA_DIR, data.resolve("metadata").toString()));
        metadata.startRole(registry);
        backend = new BackendNode(config.with(ServerConfigKeys.DATA_DIR, data.resolve("backend").toString()));
        backend.startRole(registry);
        frontend = new FrontendNode(config);
        frontend.startRole(registry, backend.server(), HttpTls.context(config));
        Supplier<String> status =
                () -> new String(MetadataJson.write(backend.status(metadata.status())), StandardCharsets.UTF_8);
        AdminAccess access = AdminAccess.configured(config);
        admin = new AdminServer(registry, this::serving, () -> notReady() == null, status,
                metadata.posts(), access).withConsole(frontend.console(access, status,
                metadata.posts().get("/admin/rebalance"))).withReadinessReason(this::notReady);
        adminAddress = admin.start(config.get(ServerConfigKeys.ADMIN_HOST), config.get(ServerConfigKeys.ADMIN_PORT),
                HttpTls.context(config));
        LOG.info("node {} serving: SQS on port {}, admin on port {}", id, frontend.sqsAddress().getPort(),
                adminAddress.getPort());
    }

    /** Why the node is not ready ({@code /ready}'s body), or null. */
    private String notReady() {
        if (!metadata.ready()) {
            return "its metadata member knows no leader";
        }
        if (!backend.ready()) {
            return "its backend does not host every shard the catalog assigns to it yet";
        }
        return frontend.notReady(metadata::health);
    }

    private boolean serving() {
        return metadata.serving() && backend.serving() && frontend.serving();
    }

    public InetSocketAddress sqsAddress() {
        return frontend.sqsAddress();
    }

    public InetSocketAddress adminAddress() {
        return adminAddress;
    }

    /** In reverse order of start: the frontend drains its requests while its shards and catalog still answer. */
    @Override
    public void close() {
        if (admin != null) {
            admin.close();
        }
        if (frontend != null) {
            frontend.close();
        }
        if (backend != null) {
            backend.close();
        }
        if (metadata != null) {
            metadata.close();
        }
    }
}
