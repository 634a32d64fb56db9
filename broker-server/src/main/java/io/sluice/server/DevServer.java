package io.sluice.server;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.FileDescriptorMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.handler.ssl.SslContext;
import io.sluice.backend.agent.DeadLetterHandOffs;
import io.sluice.backend.agent.LoadReporter;
import io.sluice.backend.agent.MoveTaskDriver;
import io.sluice.backend.agent.PromptReconciler;
import io.sluice.backend.agent.ShardHousekeeping;
import io.sluice.backend.metrics.QueueMetrics;
import io.sluice.backend.raft.ShardedPartitionService;
import io.sluice.backend.shard.LeaderClock;
import io.sluice.backend.shard.LocalLog;
import io.sluice.backend.shard.ShardCore;
import io.sluice.backend.storage.ShardStore;
import io.sluice.common.Clock;
import io.sluice.common.SystemClock;
import io.sluice.common.raft.RaftTransport;
import io.sluice.frontend.service.SqsServices;
import io.sluice.metadata.image.ClusterImage;
import io.sluice.metadata.image.MetadataCommand;
import io.sluice.metadata.image.MetadataJson;
import io.sluice.metadata.raft.CachedCatalog;
import io.sluice.metadata.raft.LeaderHealth;
import io.sluice.metadata.raft.MetadataClient;
import io.sluice.metadata.raft.MetadataPeers;
import io.sluice.metadata.raft.MetadataServer;
import io.sluice.metadata.raft.MetadataUnavailableException;
import io.sluice.partition.PartitionId;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code sluice dev}: every role in one process. The catalog is a one-member metadata group (Ratis) in-process; the
 * data is one shard of one replica on local disk, holding every partition: the same {@link ShardCore} and
 * {@link ShardedPartitionService} a cluster runs, over a local group-commit log ({@link LocalLog}) instead of a Raft
 * log. Both force to disk before any request is acknowledged. Restart it on the same data folder and every queue and
 * acknowledged message is there. The SQS endpoint is the same {@link FrontendRole} a cluster's frontend runs. As the
 * leader of its shard it also does what a shard's leader does in a cluster: dead-letter hand-offs, message move
 * tasks, sweeps, reconciling its partitions with the catalog, queue metrics. With {@code sluice.metadata.peers}
 * ({@code --metadata-peers}, a flag of the dev command) it uses an external metadata group instead of a member of
 * its own, its data still local.
 */
public final class DevServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(DevServer.class);
    /** The one shard's name (in metrics and logs). */
    static final String LOCAL_SHARD = "local";

    private final ServerConfig config;
    private final Clock clock = SystemClock.INSTANCE;
    private ShardCore core;
    private ShardedPartitionService partitions;
    private ExecutorService completions;
    private MetadataServer metadataServer;
    private MetadataClient metadataClient;
    private MetadataPeers peers;
    private CachedCatalog catalog;
    /** The external metadata leader's health, for the status (null with a member of its own, which always leads). */
    private LeaderView leaderView;
    private ScheduledExecutorService heartbeats;
    private ScheduledExecutorService scheduler;
    private FrontendRole frontend;
    private AdminServer admin;
    private InetSocketAddress adminAddress;
    private DeadLetterHandOffs handOffs;
    private MoveTaskDriver moveTaskDriver;
    private PromptReconciler promptReconciler;
    private ShardHousekeeping housekeeping;

    public DevServer(ServerConfig config) {
        this.config = config;
    }

    public void start() throws InterruptedException {
        SslContext httpTls = HttpTls.context(config); // first: a bad file stops the start before anything runs
        Path data = Path.of(config.get(ServerConfigKeys.DATA_DIR)).toAbsolutePath();
        DataDirs.prepare(data, config.get(ServerConfigKeys.DATA_DIR_ALLOW_SHARED)); // messages and the catalog's secrets
        CachedCatalog catalog = startMetadata(data);
        // one shard of one replica holds every partition: the same shard (ShardCore) and data plane
        // (ShardedPartitionService) a cluster runs, over a local group-commit log instead of Raft
        core = new ShardCore(LOCAL_SHARD, data.resolve("shard-0"), ShardStore.Durability.SYNC_WAL,
                new LeaderClock(clock));
        core.open();
        completions = Executors.newSingleThreadExecutor(daemon("sluice-shard-completions"));
        LocalLog log = new LocalLog(core, completions);
        partitions = ShardedPartitionService.overLocalLog(log);
        frontend = new FrontendRole(config, clock, catalog, partitions, partitions, true, httpTls != null);
        SqsServices services = frontend.services();
        ShardCore local = core;
        // this process leads its one shard: the housekeeping every shard leader runs, on it
        housekeeping = new ShardHousekeeping(new ShardHousekeeping.LedShards() {
            @Override
            public List<ShardHousekeeping.Led> led(ClusterImage image) {
                return List.of(new ShardHousekeeping.Led(LOCAL_SHARD, local, log::submit));
            }

            @Override
            public Map<String, List<PartitionId>> assigned(ClusterImage image) {
                List<PartitionId> all = new ArrayList<>();
                image.queues().values().forEach(q -> all.addAll(services.partitionIds(q)));
                return Map.of(LOCAL_SHARD, all);
            }
        }, catalog::image, config.get(ServerConfigKeys.MAX_INFLIGHT));
        local.openStored(Integer.MAX_VALUE); // swept and their hand-offs resumed from the start
        housekeeping.reconcile(); // e.g. created in the catalog, not yet on disk: finish it
        promptReconciler = new PromptReconciler(catalog::image, catalog::refresh, housekeeping::placement,
                config.get(ServerConfigKeys.MAX_INFLIGHT));
        local.setConfigurationRequests(promptReconciler);
        handOffs = new DeadLetterHandOffs(catalog::image, catalog::refresh, partitions, local::pendingDeadLetters,
                System::nanoTime);
        local.addListener(handOffs);
        handOffs.start();
        moveTaskDriver = new MoveTaskDriver(catalog::image, catalog::refresh, partitions, local::moveTasksToDrive,
                p -> true).start();

        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        bindJvmMetrics(registry);
        handOffs.bindMetrics(registry);
        moveTaskDriver.bindMetrics(registry);
        registry.getPrometheusRegistry().register(new QueueMetrics(housekeeping::primaryPartitions, clock));

        scheduler = Executors.newScheduledThreadPool(1, daemon("sluice-housekeeping"));
        long every = config.get(ServerConfigKeys.EXPIRE_INTERVAL_MS); // a cluster's shard leaders: every second
        scheduler.scheduleWithFixedDelay(housekeeping::tick, every, every, TimeUnit.MILLISECONDS);
        if (metadataServer != null) { // a cluster's backends report their loads with their heartbeats
            MetadataServer member = metadataServer;
            LoadReporter reporter = new LoadReporter();
            scheduler.scheduleWithFixedDelay(() -> {
                try {
                    member.observeLoad(reporter.changed(housekeeping.primaryPartitions(), catalog.image()));
                } catch (RuntimeException e) { // a periodic task: an exception would cancel it for good
                    LOG.warn("could not report the partitions' load to the auto-split policy", e);
                }
            }, 5, 5, TimeUnit.SECONDS);
            MetadataNode.registerSplits(registry, member);
        }

        frontend.start(registry, httpTls);

        int rf = config.get(ServerConfigKeys.REPLICATION_FACTOR);
        leaderView = metadataServer == null ? new LeaderView(metadataClient::health) : null;
        LeaderView external = leaderView;
        Supplier<String> status = () -> {
            // sluice dev's own metadata member always leads its one-member group
            LeaderHealth health = metadataServer != null ? metadataServer.localHealth() : external.health();
            String leader = metadataServer != null ? metadataServer.leaderId() : health == null ? null : health.leader();
            return new String(MetadataJson.write(ClusterStatus.render(catalog.image(), peers.addresses(), leader,
                    health, rf)), StandardCharsets.UTF_8);
        };
        AdminAccess adminAccess = AdminAccess.forDev(config, data);
        Function<byte[], String> rebalance = AccessKeyAdmin.rebalance(metadataClient::submit);
        admin = new AdminServer(registry, frontend::serving, () -> frontend.notReady(() -> null) == null, status,
                Map.of("/admin/access-keys", AccessKeyAdmin.handler(metadataClient::submit),
                        "/admin/rebalance", rebalance),
                adminAccess).withConsole(frontend.console(adminAccess, status, rebalance))
                .withReadinessReason(() -> frontend.notReady(() -> null));
        String adminHost = config.get(ServerConfigKeys.ADMIN_HOST);
        adminAddress = admin.start(adminHost, config.get(ServerConfigKeys.ADMIN_PORT), httpTls);
        String scheme = httpTls == null ? "http" : "https";
        LOG.info("Sluice dev serving SQS on {}://{}:{} (admin {}://{}:{}, its token in {}), data in {}", scheme,
                config.get(ServerConfigKeys.HOST), frontend.sqsAddress().getPort(), scheme, adminHost,
                adminAddress.getPort(), config.get(ServerConfigKeys.ADMIN_TOKEN).isEmpty()
                        ? data.resolve(AdminAccess.TOKEN_FILE) : "sluice.admin.token", data);
    }

    /** JVM memory, GC, threads, CPU, file descriptors and uptime: every role exports them. */
    static void bindJvmMetrics(MeterRegistry registry) {
        new JvmMemoryMetrics().bindTo(registry);
        new JvmGcMetrics().bindTo(registry);
        new JvmThreadMetrics().bindTo(registry);
        new ProcessorMetrics().bindTo(registry);
        new FileDescriptorMetrics().bindTo(registry);
        new UptimeMetrics().bindTo(registry);
    }

    /**
     * The catalog: a metadata member in this process (one-member group) unless {@code sluice.metadata.peers} names an
     * external group; either way read through a {@link CachedCatalog}. Registers this process as the backend
     * {@code local} and starts its heartbeats.
     */
    private CachedCatalog startMetadata(Path data) throws InterruptedException {
        String spec = config.get(ServerConfigKeys.METADATA_PEERS);
        RaftTransport transport;
        if (spec.isEmpty()) {
            // the in-process metadata member is used in-process only: its Raft port binds loopback, whatever --host
            peers = new MetadataPeers(Map.of("meta-1", "127.0.0.1:" + config.get(ServerConfigKeys.METADATA_PORT)));
            // loopback is no trust boundary: mutual TLS with a certificate made now, trusted by this process alone
            transport = DevRaftTls.create(data);
            metadataServer = new MetadataServer("meta-1", "127.0.0.1", peers, data.resolve("metadata"), clock,
                    config.get(ServerConfigKeys.REPLICATION_FACTOR), config.get(ServerConfigKeys.BACKEND_DEAD_AFTER_MS),
                    config.get(ServerConfigKeys.METADATA_SNAPSHOT_EVERY), 0, transport);
            metadataServer.autoSplit(ServerConfigKeys.autoSplit(config));
            try {
                metadataServer.start();
            } catch (IOException e) {
                throw new UncheckedIOException("cannot start the metadata member", e);
            }
        } else {
            peers = MetadataPeers.parse(spec);
            transport = ClusterTransport.forClient(config);
        }
        metadataClient = new MetadataClient(peers, transport);
        CachedCatalog catalog = new CachedCatalog(metadataClient, config.get(ServerConfigKeys.CATALOG_REFRESH_MS));
        if (metadataServer != null) {
            metadataServer.addImageListener(catalog::accept);
        }
        String nodeId = config.get(ServerConfigKeys.NODE_ID).isEmpty() ? "local" : config.get(ServerConfigKeys.NODE_ID);
        String address = config.get(ServerConfigKeys.HOST) + ":" + config.get(ServerConfigKeys.PORT);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            try {
                metadataClient.submit(new MetadataCommand.RegisterNode(nodeId, address));
                catalog.refresh();
                break;
            } catch (MetadataUnavailableException e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
                LOG.info("waiting for the metadata group: {}", e.getMessage());
            }
        }
        heartbeats = Executors.newSingleThreadScheduledExecutor(daemon("sluice-heartbeat"));
        long every = Math.max(250, config.get(ServerConfigKeys.BACKEND_DEAD_AFTER_MS) / 5);
        heartbeats.scheduleWithFixedDelay(() -> {
            try {
                metadataClient.heartbeat(nodeId);
            } catch (RuntimeException e) {
                LOG.debug("heartbeat failed", e);
            }
        }, 0, every, TimeUnit.MILLISECONDS);
        FrontendRole.awaitCatalog(catalog);
        this.catalog = catalog;
        return catalog;
    }

    public InetSocketAddress sqsAddress() {
        return frontend.sqsAddress();
    }

    public InetSocketAddress adminAddress() {
        return adminAddress;
    }

    /** Graceful: stop accepting, answer parked polls, let in-flight requests finish, then close storage. */
    @Override
    public void close() {
        if (frontend != null) {
            frontend.stopServing();
        }
        if (admin != null) {
            admin.close();
        }
        if (scheduler != null) {
            scheduler.shutdownNow();
        }
        if (frontend != null) {
            frontend.close();
        }
        if (leaderView != null) {
            leaderView.close();
        }
        if (moveTaskDriver != null) {
            moveTaskDriver.close();
        }
        if (promptReconciler != null) {
            promptReconciler.close();
        }
        if (handOffs != null) {
            handOffs.close();
        }
        if (partitions != null) {
            partitions.close(); // and the local log, after the work queued to it
        }
        if (core != null) {
            core.close(); // its parked awaits answered while their completions still run
        }
        if (completions != null) {
            completions.shutdown();
        }
        if (heartbeats != null) {
            heartbeats.shutdownNow();
        }
        if (catalog != null) {
            catalog.close();
        }
        if (metadataClient != null) {
            metadataClient.close();
        }
        if (metadataServer != null) {
            metadataServer.close();
        }
        LOG.info("Sluice dev stopped");
    }

    /** Daemon threads named {@code prefix-<n>}. */
    static ThreadFactory daemon(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }
}
