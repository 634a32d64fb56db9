package io.sluice.server;

import io.micrometer.core.instrument.FunctionCounter;
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
import io.sluice.backend.agent.BackendAgent;
import io.sluice.backend.agent.DeadLetterHandOffs;
import io.sluice.backend.agent.LoadReporter;
import io.sluice.backend.agent.MoveTaskDriver;
import io.sluice.backend.agent.PartitionReconciler;
import io.sluice.backend.agent.PromptReconciler;
import io.sluice.backend.local.LocalShard;
import io.sluice.backend.metrics.QueueMetrics;
import io.sluice.backend.raft.LocalLeaders;
import io.sluice.backend.raft.ShardedPartitionService;
import io.sluice.backend.storage.ShardStore;
import io.sluice.catalog.QueueMetadata;
import io.sluice.common.Clock;
import io.sluice.common.SystemClock;
import io.sluice.common.raft.RaftTransport;
import io.sluice.frontend.FrontendConfig;
import io.sluice.frontend.action.ActionTable;
import io.sluice.frontend.auth.AuthorizationPolicy;
import io.sluice.frontend.auth.SigV4Verifier;
import io.sluice.frontend.console.Console;
import io.sluice.frontend.console.QueueHistory;
import io.sluice.frontend.http.AccessKeyRateLimiter;
import io.sluice.frontend.http.ConnectionLimits;
import io.sluice.frontend.http.SqsHttpServer;
import io.sluice.frontend.http.SqsRequestProcessor;
import io.sluice.frontend.service.LongPolls;
import io.sluice.frontend.service.MoveTasks;
import io.sluice.frontend.service.ReceiptHandleSeal;
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
import io.sluice.partition.PartitionService;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.ratis.protocol.RaftGroupId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code sluice dev}: every role in one process. The catalog is a one-member metadata group (Ratis) in-process, the
 * data one shard on local disk (replication factor 1); both force to disk before any request is acknowledged.
 * Restart it on the same data folder and every queue and acknowledged message is there. With
 * {@code sluice.metadata.peers} set it uses an external metadata group instead and acts as a frontend with a local
 * backend (the interim cluster shape until replicated backends exist).
 */
public final class DevServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(DevServer.class);

    private final ServerConfig config;
    private final Clock clock = SystemClock.INSTANCE;
    private volatile boolean serving;
    private ShardStore store;
    private LocalShard shard;
    private LongPolls longPolls;
    private ExecutorService workers;
    private ExecutorService completions;
    private MetadataServer metadataServer;
    private MetadataClient metadataClient;
    private MetadataPeers peers;
    /** How this process dials Raft: the cluster's mutual TLS when it joins one (a frontend). */
    private RaftTransport transport;
    private CachedCatalog catalog;
    private ScheduledExecutorService heartbeats;
    private ScheduledExecutorService scheduler;
    private SqsHttpServer sqs;
    private AdminServer admin;
    private InetSocketAddress sqsAddress;
    private InetSocketAddress adminAddress;

    private final boolean frontendOnly;
    private ShardedPartitionService sharded;
    private DeadLetterHandOffs handOffs;
    private MoveTaskDriver moveTaskDriver;
    private PromptReconciler promptReconciler;

    public DevServer(ServerConfig config) {
        this(config, false);
    }

    /**
     * @param frontendOnly {@code sluice frontend}: no metadata member and no local data; the catalog comes from
     *                     {@code sluice.metadata.peers} and partitions live on the backends' shards
     */
    public DevServer(ServerConfig config, boolean frontendOnly) {
        this(config, frontendOnly, null, LocalLeaders.NONE);
    }

    /**
     * A cluster frontend that is a component of a combined node ({@link CombinedNode}).
     *
     * @param sharedRegistry the node's meters (the node serves the admin endpoint), or null: a process of its own,
     *                       with its own registry and admin endpoint
     * @param localLeaders   shard leaders in this process, reached without an RPC
     */
    DevServer(ServerConfig config, boolean frontendOnly, PrometheusMeterRegistry sharedRegistry,
              LocalLeaders localLeaders) {
        this.config = config;
        this.frontendOnly = frontendOnly;
        this.sharedRegistry = sharedRegistry;
        this.localLeaders = localLeaders;
    }

    private final PrometheusMeterRegistry sharedRegistry;
    private final LocalLeaders localLeaders;

    boolean serving() {
        return serving;
    }

    public void start() throws InterruptedException {
        SslContext httpTls = HttpTls.context(config); // first: a bad file stops the start before anything runs
        Path data = Path.of(config.get(ServerConfigKeys.DATA_DIR)).toAbsolutePath();
        if (!frontendOnly) { // sluice dev keeps messages and the catalog's secrets there (a frontend has no data)
            DataDirs.prepare(data, config.get(ServerConfigKeys.DATA_DIR_ALLOW_SHARED));
        }
        CachedCatalog catalog = startMetadata(data);
        PartitionService partitions;
        if (frontendOnly) {
            sharded = new ShardedPartitionService(new CatalogRouter(catalog::image), transport,
                    localLeaders);
            partitions = sharded;
        } else {
            store = ShardStore.open(data.resolve("shard-0"), ShardStore.Durability.SYNC_WAL);
            completions = Executors.newSingleThreadExecutor(daemon("sluice-shard-completions"));
            shard = new LocalShard(store, clock, completions);
            partitions = shard;
        }

        String publicUrl = config.get(ServerConfigKeys.PUBLIC_URL);
        FrontendConfig frontend = new FrontendConfig(config.get(ServerConfigKeys.REGION),
                config.get(ServerConfigKeys.ACCOUNT_ID), publicUrl.isEmpty() ? null : publicUrl,
                config.get(ServerConfigKeys.MAX_REQUEST_BYTES), httpTls != null);
        SqsServices services = new SqsServices(catalog, partitions, clock, frontend,
                new ReceiptHandleSeal(() -> catalog.image().receiptSecret()));
        if (shard != null) {
            for (QueueMetadata q : catalog.list("")) {
                for (PartitionId id : services.partitionIds(q)) {
                    shard.openPartition(id).join(); // swept and their hand-offs resumed from the start
                }
            }
            reconcile(shard, catalog, services).join(); // e.g. created in the catalog, not yet on disk: finish it
            LocalShard local = shard;
            promptReconciler = new PromptReconciler(catalog::image, catalog::refresh, (image, p) -> {
                boolean listed = image.queueById(p.queueId()).filter(q -> p.index() < q.partitions()).isPresent();
                return listed ? Optional.of(new PromptReconciler.Placement("local",
                        local.storedPartition(p).join(), local::submit)) : Optional.empty();
            }, config.get(ServerConfigKeys.MAX_INFLIGHT));
            local.setConfigurationRequests(promptReconciler);
        }

        workers = Executors.newFixedThreadPool(config.get(ServerConfigKeys.WORKER_THREADS), daemon("sluice-worker"));
        scheduler = Executors.newScheduledThreadPool(1, daemon("sluice-housekeeping"));
        longPolls = new LongPolls(clock);
        partitions.addListener(longPolls);
        if (shard != null) { // this process is the primary of every partition (in a cluster, each shard's leader)
            LocalShard local = shard;
            handOffs = new DeadLetterHandOffs(catalog::image, catalog::refresh, local,
                    () -> local.pendingDeadLetters().join(), System::nanoTime);
            local.addListener(handOffs);
            handOffs.start();
            moveTaskDriver = new MoveTaskDriver(catalog::image, catalog::refresh, local,
                    () -> local.moveTasksToDrive().join(), p -> true).start(); // the primary of every partition
        }
        MoveTasks moveTasks = new MoveTasks(services);

        PrometheusMeterRegistry registry = sharedRegistry;
        if (registry == null) {
            registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
            bindJvmMetrics(registry);
        }
        registry.gauge("sqs.long_polls.parked", longPolls, LongPolls::parked);
        if (handOffs != null) {
            handOffs.bindMetrics(registry);
            moveTaskDriver.bindMetrics(registry);
        }
        if (shard != null) { // dev: this process is the primary of every partition (in a cluster, the backends export)
            LocalShard local = shard;
            registry.getPrometheusRegistry().register(new QueueMetrics(() -> localPartitions(local, catalog), clock));
        }
        if (sharded != null) {
            FunctionCounter.builder("sluice.shard.entries", sharded,
                    s -> s.groupCommitStats()[0]).description("Raft entries this frontend wrote to shards")
                    .register(registry);
            FunctionCounter.builder("sluice.shard.commands", sharded,
                    s -> s.groupCommitStats()[1]).description("partition commands those entries carried")
                    .register(registry);
        }
        Map<String, String> secrets = new LinkedHashMap<>();
        Map<String, List<AuthorizationPolicy.Rule>> rules = new HashMap<>();
        // the built-in dev key exists only in sluice dev: a frontend has the node key only when it is configured
        boolean nodeKey = !frontendOnly
                || (config.isSet(ServerConfigKeys.ACCESS_KEY) && config.isSet(ServerConfigKeys.SECRET_KEY));
        if (nodeKey) {
            secrets.put(config.get(ServerConfigKeys.ACCESS_KEY), config.get(ServerConfigKeys.SECRET_KEY));
            // the key of --access-key / sluice.access-key is the node's admin key
            rules.put(config.get(ServerConfigKeys.ACCESS_KEY), List.of(AuthorizationPolicy.ADMIN));
        }
        String keysFile = config.get(ServerConfigKeys.KEYS_FILE);
        if (!keysFile.isEmpty()) {
            AccessKeysFile keys = AccessKeysFile.read(Path.of(keysFile));
            keys.secrets().forEach((id, secret) -> {
                if (secrets.putIfAbsent(id, secret) != null) {
                    throw new IllegalArgumentException("access key " + id + " is both the node's key and in " + keysFile);
                }
            });
            rules.putAll(keys.rules());
            keys.rules().forEach((key, list) -> {
                if (list.isEmpty()) {
                    LOG.warn("access key {} in {} has no rules and may do nothing (give it \"allow\" rules, or"
                            + " \"admin\": true)", key, keysFile);
                }
            });
        }
        ConfiguredKeys.check(secrets, frontendOnly, config.get(ServerConfigKeys.HOST),
                config.get(ServerConfigKeys.AUTH_ENABLED), catalog.image());
        CatalogAccessKeys accessKeys = new CatalogAccessKeys(secrets, rules, catalog::image);
        SigV4Verifier verifier = config.get(ServerConfigKeys.AUTH_ENABLED)
                // sluice dev accepts a signature scoped to any region (a laptop's SDK may be set to any); a cluster's
                // frontend only its own (sluice.region), as SQS does
                ? new SigV4Verifier(accessKeys, clock, frontendOnly ? Optional.of(config.get(ServerConfigKeys.REGION))
                        : Optional.empty(),
                        config.get(ServerConfigKeys.AUTH_ALLOW_UNSIGNED_PAYLOAD))
                : null;
        AccessKeyRateLimiter limiter = new AccessKeyRateLimiter(config.get(ServerConfigKeys.KEY_RATE_LIMIT),
                config.get(ServerConfigKeys.KEY_RATE_BURST_MS) / 1000.0,
                AccessKeyRateLimiter.parseRates(config.get(ServerConfigKeys.KEY_RATE_LIMITS)), System::nanoTime);
        this.accessKeys = accessKeys;
        this.services = services;
        SqsRequestProcessor processor = new SqsRequestProcessor(new ActionTable(services, longPolls, moveTasks),
                verifier, accessKeys, workers, registry, limiter, name -> catalog.image().queues().containsKey(name),
                config.get(ServerConfigKeys.REQUEST_TIMEOUT_MS));
        this.processor = processor;

        if (shard != null) { // in a cluster each shard's leader sweeps its own partitions (BackendServer.sweep)
            LocalShard local = shard;
            long expireEvery = config.get(ServerConfigKeys.EXPIRE_INTERVAL_MS);
            scheduler.scheduleWithFixedDelay(() -> sweep(local), expireEvery, expireEvery, TimeUnit.MILLISECONDS);
        }
        if (shard != null) { // in a cluster each shard's leader reconciles its own partitions (BackendNode)
            LocalShard local = shard;
            scheduler.scheduleWithFixedDelay(() -> reconcile(local, catalog, services).exceptionally(e -> {
                LOG.warn("reconciling partitions with the catalog failed", e);
                return null;
            }), 10, 10, TimeUnit.SECONDS);
        }
        if (shard != null && metadataServer != null) { // a cluster's backends report with their heartbeats
            LocalShard local = shard;
            MetadataServer member = metadataServer;
            LoadReporter reporter = new LoadReporter();
            scheduler.scheduleWithFixedDelay(() -> {
                try {
                    member.observeLoad(reporter.changed(localPartitions(local, catalog), catalog.image()));
                } catch (RuntimeException e) { // a periodic task: an exception would cancel it for good
                    LOG.warn("could not report the partitions' load to the auto-split policy", e);
                }
            }, 5, 5, TimeUnit.SECONDS);
            MetadataNode.registerSplits(registry, member);
        }
        history = new QueueHistory(services,
                config.get(ServerConfigKeys.CONSOLE_HISTORY_QUEUES));
        historySampler = Executors.newSingleThreadScheduledExecutor(daemon("sluice-console-history"));
        historySampler.scheduleAtFixedRate(history::sample, 1, QueueHistory.EVERY_SECONDS,
                TimeUnit.SECONDS);
        scheduler.scheduleWithFixedDelay(processor::forgetDeletedQueues, 60, 60, TimeUnit.SECONDS);
        scheduler.scheduleWithFixedDelay(() -> {
            try {
                services.forgetDeletedQueues();
            } catch (RuntimeException e) { // a periodic task: an exception would cancel it for good
                LOG.warn("could not drop the parsed attributes of deleted queues", e);
            }
        }, 60, 60, TimeUnit.SECONDS);

        String host = config.get(ServerConfigKeys.HOST);
        sqs = new SqsHttpServer(processor, frontend.maxRequestBytes(), new ConnectionLimits(
                config.get(ServerConfigKeys.HTTP_REQUEST_READ_TIMEOUT_MS), config.get(ServerConfigKeys.HTTP_IDLE_TIMEOUT_MS),
                config.get(ServerConfigKeys.HTTP_MAX_CONNECTIONS), config.get(ServerConfigKeys.HTTP_MAX_PIPELINED),
                config.get(ServerConfigKeys.HTTP_MAX_CONNECTIONS_PER_ADDRESS)),
                httpTls);
        sqsAddress = sqs.start(host, config.get(ServerConfigKeys.PORT));
        SqsHttpServer server = sqs;
        registry.gauge("sqs.http.connections.open", server, SqsHttpServer::openConnections);
        if (sharedRegistry != null) { // a component of a combined node: the node serves the admin endpoint
            serving = true;
            LOG.info("frontend serving SQS on {}://{}:{}", httpTls == null ? "http" : "https", host, sqsAddress.getPort());
            return;
        }
        int rf = config.get(ServerConfigKeys.REPLICATION_FACTOR);
        if (metadataServer == null) { // a frontend: what the metadata leader knows, fetched in the background
            MetadataClient client = metadataClient;
            leaderView = new LeaderView(client::health);
        }
        Supplier<String> status = () -> {
            // sluice dev's own metadata member always leads its one-member group
            LeaderHealth health = metadataServer != null ? metadataServer.localHealth() : leaderView.health();
            String leader = metadataServer != null ? metadataServer.leaderId() : health == null ? null : health.leader();
            return new String(MetadataJson.write(ClusterStatus.render(catalog.image(), peers.addresses(), leader,
                    health, rf)), StandardCharsets.UTF_8);
        };
        AdminAccess adminAccess = sharded == null ? AdminAccess.forDev(config, data) : AdminAccess.configured(config);
        admin = new AdminServer(registry, () -> serving, this::ready, status,
                Map.of("/admin/access-keys", AccessKeyAdmin.handler(metadataClient::submit),
                        "/admin/rebalance", AccessKeyAdmin.rebalance(metadataClient::submit)),
                adminAccess).withConsole(console(adminAccess, status, AccessKeyAdmin.rebalance(metadataClient::submit)))
                .withReadinessReason(this::notReady);
        String adminHost = config.get(ServerConfigKeys.ADMIN_HOST);
        adminAddress = admin.start(adminHost, config.get(ServerConfigKeys.ADMIN_PORT), httpTls);
        String scheme = httpTls == null ? "http" : "https";
        serving = true;
        if (sharded == null) {
            LOG.info("Sluice dev serving SQS on {}://{}:{} (admin {}://{}:{}, its token in {}), data in {}", scheme,
                    host, sqsAddress.getPort(), scheme, adminHost, adminAddress.getPort(),
                    config.get(ServerConfigKeys.ADMIN_TOKEN).isEmpty() ? data.resolve(AdminAccess.TOKEN_FILE)
                            : "sluice.admin.token", data);
        } else { // a cluster frontend stores nothing
            LOG.info("Sluice frontend serving SQS on {}://{}:{} (admin {}://{}:{}), shards from the metadata group",
                    scheme, host, sqsAddress.getPort(), scheme, adminHost, adminAddress.getPort());
        }
    }

    private CatalogAccessKeys accessKeys;
    private SqsRequestProcessor processor;
    private SqsServices services;
    private LeaderView leaderView;
    private QueueHistory history;
    private ScheduledExecutorService historySampler;

    /**
     * The web console over this frontend's SQS actions, keys and rules, for the admin endpoint that serves it (its
     * own, or a combined node's).
     */
    Console console(AdminAccess access, Supplier<String> status,
                                               Function<byte[], String> rebalance) {
        return new Console(processor, services, accessKeys, accessKeys,
                accessKeys::isAdmin, token -> access.permits("Bearer " + token), status, clock::nowMillis, history,
                access.writesEnabled() ? rebalance : null, workers);
    }

    /** Every partition of the local shard, named from the catalog, for the queue metrics. */
    /** The local shard's partitions made to agree with the catalog ({@link PartitionReconciler}). */
    private CompletableFuture<Void> reconcile(LocalShard local, CachedCatalog catalog, SqsServices services) {
        ClusterImage image = catalog.image();
        List<PartitionId> all = new ArrayList<>();
        image.queues().values().forEach(q -> all.addAll(services.partitionIds(q)));
        return local.storedPartitions().thenAccept(stored -> PartitionReconciler.run("local", image, all, stored,
                config.get(ServerConfigKeys.MAX_INFLIGHT), local::submit));
    }

    private static List<QueueMetrics.Row> localPartitions(LocalShard local, CachedCatalog catalog) {
        Map<Long, String> names = new HashMap<>();
        catalog.image().queues().values().forEach(q -> names.put(q.queueId(), q.name()));
        List<QueueMetrics.Row> rows = new ArrayList<>();
        try {
            for (var st : local.stats().get(5, TimeUnit.SECONDS)) {
                String name = names.get(st.id().queueId());
                if (name != null) {
                    rows.add(new QueueMetrics.Row(name, st.id().index(), "local", st.counts(), st.totals(),
                            st.arrivalSkew()));
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            LOG.warn("queue metrics unavailable: {}", e.toString());
        }
        return rows;
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
        if (spec.isEmpty() && frontendOnly) {
            throw new IllegalArgumentException("sluice frontend needs --metadata-peers");
        }
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
        if (frontendOnly) {
            awaitCatalog(catalog);
            this.catalog = catalog;
            return catalog; // a frontend is not a backend: it neither registers nor heartbeats
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
        awaitCatalog(catalog);
        this.catalog = catalog;
        return catalog;
    }

    /**
     * Waits (bounded) until the metadata group answers a read and its leader has set the cluster's receipt secret
     * (receipt handles are sealed under it: without it this process could not answer a receive).
     */
    private static void awaitCatalog(CachedCatalog catalog) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (true) {
            try {
                if (catalog.refresh().receiptSecret() != null) {
                    return;
                }
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("the metadata group has not set the receipt secret in 120 s (is"
                            + " its leader older than this frontend? upgrade the metadata members first)");
                }
                Thread.sleep(100);
            } catch (MetadataUnavailableException e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
                LOG.info("waiting for the metadata group: {}", e.getMessage());
            }
        }
    }

    /** The local shard's sweep: as a replicated shard's leader, only partitions that one would change. */
    private void sweep(LocalShard local) {
        local.sweep().exceptionally(e -> {
            LOG.warn("sweep failed", e);
            return 0;
        });
    }

    /**
     * How recently this process must have reached the metadata group and every shard's leader to call itself ready:
     * five probe (and catalog refresh) intervals, so a lost answer or a slow one under load does not flap it.
     */
    static final long READY_WINDOW_MILLIS = 5_000;

    /**
     * {@code GET /ready}: whether it can serve its clients now: it holds the catalog, reached the metadata group in
     * the last {@link #READY_WINDOW_MILLIS}, and (in a cluster) reached as recently the leader of every shard that has
     * one. A node cut off from the majority turns not ready within ~1-5 s, so a load balancer routes around it; ready
     * again a few seconds after the network heals. A shard that has no leader for anyone (two of its three replicas
     * down: the metadata leader has no recent report from a leader of it) does not count: every frontend would
     * otherwise turn not ready at once, and the queues of the other shards would go down with it.
     */
    boolean ready() {
        return notReady() == null;
    }

    /** Why {@link #ready} is false (a line for {@code /ready}'s body), or null when it is true. */
    String notReady() {
        return notReady(leaderView == null ? () -> null : leaderView::health);
    }

    /**
     * {@link #notReady()} with the metadata leader's view of the shards from {@code health} (null when not known:
     * then every shard counts).
     */
    String notReady(Supplier<LeaderHealth> health) {
        CachedCatalog c = catalog;
        if (c == null || c.image().appliedIndex() == 0) {
            return "no catalog yet";
        }
        // refreshes run every sluice.catalog.refresh-ms: a slow refresh setting must not make readiness flap
        long catalogWindow = Math.max(READY_WINDOW_MILLIS, 3L * config.get(ServerConfigKeys.CATALOG_REFRESH_MS));
        if (!c.reachedWithin(catalogWindow)) {
            return "the metadata group has not answered for " + catalogWindow + " ms";
        }
        if (sharded == null) {
            return null;
        }
        List<RaftGroupId> unreachable = sharded.unreachableShards(READY_WINDOW_MILLIS);
        if (unreachable.isEmpty()) {
            return null;
        }
        ClusterImage image = c.image();
        LeaderHealth h = health.get();
        List<String> led = new ArrayList<>();
        for (var shard : image.shards().values()) {
            boolean hasLeader = h == null || h.shards().stream().anyMatch(r -> r.shardId().equals(shard.shardId())
                    && r.leader() != null);
            if (hasLeader && unreachable.contains(BackendAgent.group(image, shard).getGroupId())) {
                led.add(shard.shardId());
            }
        }
        return led.isEmpty() ? null : "no answer for " + READY_WINDOW_MILLIS + " ms from the leader of shard(s) "
                + led;
    }

    public InetSocketAddress sqsAddress() {
        return sqsAddress;
    }

    public InetSocketAddress adminAddress() {
        return adminAddress;
    }

    /** Graceful: stop accepting, answer parked polls, let in-flight requests finish, then close storage. */
    @Override
    public void close() {
        serving = false;
        if (longPolls != null) {
            longPolls.wakeAllForShutdown();
        }
        if (sqs != null) {
            sqs.stop(config.get(ServerConfigKeys.SHUTDOWN_GRACE_MS));
        }
        if (admin != null) {
            admin.close();
        }
        if (scheduler != null) {
            scheduler.shutdownNow();
        }
        if (historySampler != null) {
            historySampler.shutdownNow();
        }
        if (leaderView != null) {
            leaderView.close();
        }
        if (workers != null) {
            workers.shutdown();
            try {
                workers.awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (longPolls != null) {
            longPolls.close();
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
        if (shard != null) {
            shard.close();
        }
        if (completions != null) {
            completions.shutdown();
        }
        if (sharded != null) {
            sharded.close();
        }
        if (store != null) {
            store.close();
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
