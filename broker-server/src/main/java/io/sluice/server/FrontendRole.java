package io.sluice.server;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.handler.ssl.SslContext;
import io.sluice.backend.agent.BackendAgent;
import io.sluice.backend.raft.ShardedPartitionService;
import io.sluice.common.Clock;
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
import io.sluice.metadata.raft.CachedCatalog;
import io.sluice.metadata.raft.LeaderHealth;
import io.sluice.metadata.raft.MetadataUnavailableException;
import io.sluice.partition.PartitionService;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.ratis.protocol.RaftGroupId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The frontend role: the SQS endpoint (both protocols, SigV4, access keys and their rules, rate limits, long polls)
 * over a catalog and a {@link PartitionService}, with its request workers, its housekeeping and the console it offers
 * an admin endpoint. {@code sluice dev} assembles it over its local shard, {@code sluice frontend} and
 * {@code sluice node} ({@link FrontendNode}) over the cluster's shards; it does not know which, except for the two
 * things a laptop does differently: the built-in dev key and a signature scoped to any region.
 */
final class FrontendRole implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(FrontendRole.class);

    private final ServerConfig config;
    private final Clock clock;
    private final CachedCatalog catalog;
    private final PartitionService partitions;
    /** The shards (readiness, entry counters): a cluster's, or {@code sluice dev}'s one local shard; null: none. */
    private final ShardedPartitionService sharded;
    private final boolean dev;
    private final FrontendConfig frontend;
    private final SqsServices services;
    private volatile boolean serving;
    private boolean stopped;
    private LongPolls longPolls;
    private ExecutorService workers;
    private ScheduledExecutorService scheduler;
    private ScheduledExecutorService historySampler;
    private QueueHistory history;
    private CatalogAccessKeys accessKeys;
    private SqsRequestProcessor processor;
    private SqsHttpServer sqs;
    private InetSocketAddress sqsAddress;

    /**
     * @param sharded the shards when {@code partitions} is them (both launchers pass the same object today)
     * @param dev     {@code sluice dev}: the node key is the built-in dev key unless configured, and a signature may
     *                be scoped to any region (a laptop's SDK may be set to any)
     */
    FrontendRole(ServerConfig config, Clock clock, CachedCatalog catalog, PartitionService partitions,
                 ShardedPartitionService sharded, boolean dev, boolean https) {
        this.config = config;
        this.clock = clock;
        this.catalog = catalog;
        this.partitions = partitions;
        this.sharded = sharded;
        this.dev = dev;
        String publicUrl = config.get(ServerConfigKeys.PUBLIC_URL);
        this.frontend = new FrontendConfig(config.get(ServerConfigKeys.REGION), config.get(ServerConfigKeys.ACCOUNT_ID),
                publicUrl.isEmpty() ? null : publicUrl, config.get(ServerConfigKeys.MAX_REQUEST_BYTES), https);
        this.services = new SqsServices(catalog, partitions, clock, frontend,
                new ReceiptHandleSeal(() -> catalog.image().receiptSecret()));
    }

    /** The SQS services over the catalog and the partitions (before {@link #start}, for a dev shard's reconciling). */
    SqsServices services() {
        return services;
    }

    /** Starts serving SQS on {@code sluice.host}/{@code sluice.port}; its meters go into {@code registry}. */
    void start(PrometheusMeterRegistry registry, SslContext httpTls) throws InterruptedException {
        workers = Executors.newFixedThreadPool(config.get(ServerConfigKeys.WORKER_THREADS), DevServer.daemon("sluice-worker"));
        scheduler = Executors.newScheduledThreadPool(1, DevServer.daemon("sluice-frontend-housekeeping"));
        longPolls = new LongPolls(clock);
        partitions.addListener(longPolls);
        registry.gauge("sqs.long_polls.parked", longPolls, LongPolls::parked);
        if (sharded != null) {
            FunctionCounter.builder("sluice.shard.entries", sharded, s -> s.groupCommitStats()[0])
                    .description("shard log entries this frontend wrote (Raft or local)").register(registry);
            FunctionCounter.builder("sluice.shard.commands", sharded, s -> s.groupCommitStats()[1])
                    .description("partition commands those entries carried").register(registry);
        }
        accessKeys = accessKeys();
        SigV4Verifier verifier = config.get(ServerConfigKeys.AUTH_ENABLED)
                // sluice dev accepts a signature scoped to any region (a laptop's SDK may be set to any); a cluster's
                // frontend only its own (sluice.region), as SQS does
                ? new SigV4Verifier(accessKeys, clock, dev ? Optional.empty() : Optional.of(config.get(ServerConfigKeys.REGION)),
                        config.get(ServerConfigKeys.AUTH_ALLOW_UNSIGNED_PAYLOAD))
                : null;
        AccessKeyRateLimiter limiter = new AccessKeyRateLimiter(config.get(ServerConfigKeys.KEY_RATE_LIMIT),
                config.get(ServerConfigKeys.KEY_RATE_BURST_MS) / 1000.0,
                AccessKeyRateLimiter.parseRates(config.get(ServerConfigKeys.KEY_RATE_LIMITS)), System::nanoTime);
        processor = new SqsRequestProcessor(new ActionTable(services, longPolls, new MoveTasks(services)),
                verifier, accessKeys, workers, registry, limiter, name -> catalog.image().queues().containsKey(name),
                config.get(ServerConfigKeys.REQUEST_TIMEOUT_MS));

        history = new QueueHistory(services, config.get(ServerConfigKeys.CONSOLE_HISTORY_QUEUES));
        historySampler = Executors.newSingleThreadScheduledExecutor(DevServer.daemon("sluice-console-history"));
        historySampler.scheduleAtFixedRate(history::sample, 1, QueueHistory.EVERY_SECONDS, TimeUnit.SECONDS);
        scheduler.scheduleWithFixedDelay(processor::forgetDeletedQueues, 60, 60, TimeUnit.SECONDS);
        scheduler.scheduleWithFixedDelay(() -> {
            try {
                services.forgetDeletedQueues();
            } catch (RuntimeException e) { // a periodic task: an exception would cancel it for good
                LOG.warn("could not drop the parsed attributes of deleted queues", e);
            }
        }, 60, 60, TimeUnit.SECONDS);

        sqs = new SqsHttpServer(processor, frontend.maxRequestBytes(), new ConnectionLimits(
                config.get(ServerConfigKeys.HTTP_REQUEST_READ_TIMEOUT_MS), config.get(ServerConfigKeys.HTTP_IDLE_TIMEOUT_MS),
                config.get(ServerConfigKeys.HTTP_MAX_CONNECTIONS), config.get(ServerConfigKeys.HTTP_MAX_PIPELINED),
                config.get(ServerConfigKeys.HTTP_MAX_CONNECTIONS_PER_ADDRESS)),
                httpTls);
        sqsAddress = sqs.start(config.get(ServerConfigKeys.HOST), config.get(ServerConfigKeys.PORT));
        registry.gauge("sqs.http.connections.open", sqs, SqsHttpServer::openConnections);
        serving = true;
    }

    /**
     * The node's key (the dev key in {@code sluice dev}; in a cluster only when configured) and the keys file's, with
     * the catalog's keys behind them.
     */
    private CatalogAccessKeys accessKeys() {
        Map<String, String> secrets = new LinkedHashMap<>();
        Map<String, List<AuthorizationPolicy.Rule>> rules = new HashMap<>();
        boolean nodeKey = dev || (config.isSet(ServerConfigKeys.ACCESS_KEY) && config.isSet(ServerConfigKeys.SECRET_KEY));
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
        ConfiguredKeys.check(secrets, !dev, config.get(ServerConfigKeys.HOST), config.get(ServerConfigKeys.AUTH_ENABLED),
                catalog.image());
        return new CatalogAccessKeys(secrets, rules, catalog::image);
    }

    /** The web console over this frontend's actions, keys and rules, for the admin endpoint that serves it. */
    Console console(AdminAccess access, Supplier<String> status, Function<byte[], String> rebalance) {
        return new Console(processor, services, accessKeys, accessKeys, accessKeys::isAdmin,
                token -> access.permits("Bearer " + token), status, clock::nowMillis, history,
                access.writesEnabled() ? rebalance : null, workers, config.get(ServerConfigKeys.CONSOLE_REFRESH_SECONDS));
    }

    boolean serving() {
        return serving;
    }

    InetSocketAddress sqsAddress() {
        return sqsAddress;
    }

    /**
     * How recently this process must have reached the metadata group and every shard's leader to call itself ready:
     * five probe (and catalog refresh) intervals, so a lost answer or a slow one under load does not flap it.
     */
    static final long READY_WINDOW_MILLIS = 5_000;

    /**
     * Why it cannot serve its clients now ({@code /ready}'s body), or null when it can: it holds the catalog, reached
     * the metadata group in the last {@link #READY_WINDOW_MILLIS}, and (in a cluster) reached as recently the leader
     * of every shard that has one. A node cut off from the majority turns not ready within ~1-5 s, so a load balancer
     * routes around it; ready again a few seconds after the network heals. A shard that has no leader for anyone (two
     * of its three replicas down: the metadata leader has no recent report from a leader of it) does not count: every
     * frontend would otherwise turn not ready at once, and the queues of the other shards would go down with it.
     *
     * @param health the metadata leader's view of the shards (null when not known: then every shard counts)
     */
    String notReady(Supplier<LeaderHealth> health) {
        if (catalog.image().appliedIndex() == 0) {
            return "no catalog yet";
        }
        // refreshes run every sluice.catalog.refresh-ms: a slow refresh setting must not make readiness flap
        long catalogWindow = Math.max(READY_WINDOW_MILLIS, 3L * config.get(ServerConfigKeys.CATALOG_REFRESH_MS));
        if (!catalog.reachedWithin(catalogWindow)) {
            return "the metadata group has not answered for " + catalogWindow + " ms";
        }
        if (sharded == null) {
            return null;
        }
        List<RaftGroupId> unreachable = sharded.unreachableShards(READY_WINDOW_MILLIS);
        if (unreachable.isEmpty()) {
            return null;
        }
        ClusterImage image = catalog.image();
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

    /**
     * Waits (bounded) until the metadata group answers a read and its leader has set the cluster's receipt secret
     * (receipt handles are sealed under it: without it this process could not answer a receive).
     */
    static void awaitCatalog(CachedCatalog catalog) throws InterruptedException {
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

    /**
     * Stops taking requests and answers the parked polls; in-flight requests get the shutdown grace to finish. Once
     * (a launcher calls it before closing its admin endpoint, and {@link #close} again).
     */
    synchronized void stopServing() {
        if (stopped) {
            return;
        }
        stopped = true;
        serving = false;
        if (longPolls != null) {
            longPolls.wakeAllForShutdown();
        }
        if (sqs != null) {
            sqs.stop(config.get(ServerConfigKeys.SHUTDOWN_GRACE_MS));
        }
    }

    /** Graceful: stop accepting, answer parked polls, let in-flight requests finish, then stop its threads. */
    @Override
    public void close() {
        stopServing();
        if (scheduler != null) {
            scheduler.shutdownNow();
        }
        if (historySampler != null) {
            historySampler.shutdownNow();
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
    }
}
