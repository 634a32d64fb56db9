package io.sluice.server;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** The {@code sluice} command line. */
@Command(name = "sluice", mixinStandardHelpOptions = true, version = "sluice 0.1.0-SNAPSHOT",
        description = "A clustered, durable work-queue server that speaks the Amazon SQS API.",
        subcommands = {SluiceMain.Dev.class, SluiceMain.Node.class, SluiceMain.Frontend.class, SluiceMain.Metadata.class,
            SluiceMain.Backend.class,
            AdminCommand.class})
public final class SluiceMain implements Runnable {

    public static void main(String[] args) {
        ensureAsyncPool();
        System.exit(new CommandLine(new SluiceMain()).execute(args));
    }

    @Override
    public void run() {
        new CommandLine(this).usage(System.out);
    }

    /**
     * On a machine with fewer than 3 cores the JDK's common pool has a parallelism of 1, and then every
     * {@code CompletableFuture.*Async} call without an executor starts a new thread (Ratis' client completes each
     * unordered read that way): measured, a thread per shard read and ~1 core of thread churn under load on 2 cores.
     * A parallelism of 2 makes those continuations run on the common pool. Set before anything touches the pool; an
     * explicit {@code -Djava.util.concurrent.ForkJoinPool.common.parallelism} wins.
     */
    static void ensureAsyncPool() {
        String key = "java.util.concurrent.ForkJoinPool.common.parallelism";
        if (System.getProperty(key) == null && Runtime.getRuntime().availableProcessors() < 3) {
            System.setProperty(key, "2");
        }
    }

    /** {@code sluice dev}: all roles in one process, data on local disk. The flags are a contract: keep them. */
    @Command(name = "dev", mixinStandardHelpOptions = true,
            description = "Run a single-process development server (replication factor 1, data forced to disk).")
    static final class Dev implements Callable<Integer> {
        @Option(names = "--port", description = "SQS endpoint port (default ${DEFAULT-VALUE}).", defaultValue = "9324")
        int port;

        @Option(names = "--admin-port", description = "Health and metrics port (default ${DEFAULT-VALUE}).",
                defaultValue = "9325")
        int adminPort;

        @Option(names = "--data-dir", description = "Data folder (default ${DEFAULT-VALUE}).", defaultValue = "./data")
        String dataDir;

        @Option(names = "--access-key", description = "Accepted access key id (default ${DEFAULT-VALUE}).",
                defaultValue = "sluice")
        String accessKey;

        @Option(names = "--secret-key", description = "Accepted secret key (default ${DEFAULT-VALUE}).",
                defaultValue = "sluice-dev-secret")
        String secretKey;

        @Option(names = "--host", description = "Bind address of the SQS endpoint (default ${DEFAULT-VALUE}; the admin"
                + " endpoint binds sluice.admin.host, loopback by default).", defaultValue = "127.0.0.1")
        String host;

        @Option(names = "--config", description = "A properties file of configuration keys (docs/configuration.md).")
        Path configFile;

        @Option(names = "--no-auth", description = "Accept unsigned requests (SigV4 verification off).")
        boolean noAuth;

        @Option(names = "--metadata-peers", description = "Use this external metadata group (id=host:port,...) instead"
                + " of a metadata member in this process.")
        String metadataPeers;

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() throws Exception {
            Map<String, String> overrides = new HashMap<>();
            CommandLine.ParseResult parsed = spec.commandLine().getParseResult();
            putIfGiven(parsed, overrides, "--port", ServerConfigKeys.PORT, Integer.toString(port));
            putIfGiven(parsed, overrides, "--admin-port", ServerConfigKeys.ADMIN_PORT, Integer.toString(adminPort));
            putIfGiven(parsed, overrides, "--data-dir", ServerConfigKeys.DATA_DIR, dataDir);
            putIfGiven(parsed, overrides, "--access-key", ServerConfigKeys.ACCESS_KEY, accessKey);
            putIfGiven(parsed, overrides, "--secret-key", ServerConfigKeys.SECRET_KEY, secretKey);
            putIfGiven(parsed, overrides, "--host", ServerConfigKeys.HOST, host);
            if (noAuth) {
                overrides.put(ServerConfigKeys.AUTH_ENABLED.name(), "false");
            }
            if (metadataPeers != null) {
                overrides.put(ServerConfigKeys.METADATA_PEERS.name(), metadataPeers);
            }
            ServerConfig config = ServerConfig.load(configFile, System.getenv(), overrides);
            DevServer server = new DevServer(config);
            CountDownLatch stopped = new CountDownLatch(1);
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                server.close();
                stopped.countDown();
            }, "sluice-shutdown"));
            server.start();
            String scheme = config.get(ServerConfigKeys.TLS_CERT).isBlank() ? "http" : "https";
            System.out.printf("Sluice dev is running.%n  SQS endpoint: %s://%s:%d%n  Admin:        %s://%s:%d/health"
                            + "%n  Credentials:  AWS_ACCESS_KEY_ID=%s AWS_SECRET_ACCESS_KEY=%s (any region)%s%n",
                    scheme, config.get(ServerConfigKeys.HOST), server.sqsAddress().getPort(), scheme,
                    config.get(ServerConfigKeys.ADMIN_HOST), server.adminAddress().getPort(), config.get(ServerConfigKeys.ACCESS_KEY),
                    // the documented default is no secret; one that was configured is never printed (nor logged)
                    ServerConfigKeys.SECRET_KEY.defaultValue().equals(config.get(ServerConfigKeys.SECRET_KEY))
                            ? config.get(ServerConfigKeys.SECRET_KEY) : "(the configured secret, not shown)",
                    config.get(ServerConfigKeys.AUTH_ENABLED) ? "" : "  [authentication OFF]");
            stopped.await();
            return 0;
        }

    }

    /** {@code sluice metadata}: one member of the metadata group. */
    @Command(name = "metadata", mixinStandardHelpOptions = true,
            description = "Run one member of the Raft metadata group (the catalog and cluster manager).")
    static final class Metadata implements Callable<Integer> {
        @Option(names = "--node-id", required = true, description = "This member's id, as in --peers.")
        String nodeId;

        @Option(names = "--peers", required = true, description = "Every member: id=host:port,... (Raft gRPC).")
        String peers;

        @Option(names = "--data-dir", defaultValue = "./metadata-data", description = "Raft log and snapshots"
                + " (default ${DEFAULT-VALUE}).")
        String dataDir;

        @Option(names = "--admin-port", defaultValue = "9425", description = "Health, metrics and /admin/status"
                + " (default ${DEFAULT-VALUE}).")
        int adminPort;

        @Option(names = "--host", defaultValue = "127.0.0.1", description = "Bind address of its Raft port (default"
                + " ${DEFAULT-VALUE}; the admin endpoint binds sluice.admin.host).")
        String host;

        @Option(names = "--config", description = "A properties file of configuration keys (docs/configuration.md).")
        Path configFile;

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() throws Exception {
            Map<String, String> overrides = new HashMap<>();
            Map<String, String> defaults = new HashMap<>();
            CommandLine.ParseResult parsed = spec.commandLine().getParseResult();
            overrides.put(ServerConfigKeys.NODE_ID.name(), nodeId);
            overrides.put(ServerConfigKeys.METADATA_PEERS.name(), peers);
            flagOrDefault(parsed, overrides, defaults, "--data-dir", ServerConfigKeys.DATA_DIR, dataDir);
            flagOrDefault(parsed, overrides, defaults, "--admin-port", ServerConfigKeys.ADMIN_PORT,
                    Integer.toString(adminPort));
            flagOrDefault(parsed, overrides, defaults, "--host", ServerConfigKeys.HOST, host);
            MetadataNode node = new MetadataNode(ServerConfig.load(configFile, System.getenv(), overrides, defaults));
            return runUntilStopped(node::start, node);
        }
    }

    /** {@code sluice frontend}: the SQS endpoint of a cluster (catalog from the metadata group, data on shards). */
    @Command(name = "frontend", mixinStandardHelpOptions = true,
            description = "Run a stateless SQS frontend of a cluster.")
    static final class Frontend implements Callable<Integer> {
        @Option(names = "--metadata-peers", required = true, description = "The metadata group: id=host:port,...")
        String metadataPeers;

        @Option(names = "--port", defaultValue = "9324", description = "SQS endpoint port (default ${DEFAULT-VALUE}).")
        int port;

        @Option(names = "--admin-port", defaultValue = "9325", description = "Health and metrics (default ${DEFAULT-VALUE}).")
        int adminPort;

        @Option(names = "--host", defaultValue = "127.0.0.1", description = "Bind address of the SQS endpoint (default"
                + " ${DEFAULT-VALUE}; the admin endpoint binds sluice.admin.host).")
        String host;

        @CommandLine.Mixin
        ClusterKey key;

        @Option(names = "--config", description = "A properties file of configuration keys (docs/configuration.md).")
        Path configFile;

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() throws Exception {
            Map<String, String> overrides = new HashMap<>();
            Map<String, String> defaults = new HashMap<>();
            CommandLine.ParseResult parsed = spec.commandLine().getParseResult();
            overrides.put(ServerConfigKeys.METADATA_PEERS.name(), metadataPeers);
            flagOrDefault(parsed, overrides, defaults, "--port", ServerConfigKeys.PORT, Integer.toString(port));
            flagOrDefault(parsed, overrides, defaults, "--admin-port", ServerConfigKeys.ADMIN_PORT,
                    Integer.toString(adminPort));
            flagOrDefault(parsed, overrides, defaults, "--host", ServerConfigKeys.HOST, host);
            key.putInto(overrides);
            FrontendNode server = new FrontendNode(ServerConfig.load(configFile, System.getenv(), overrides, defaults));
            return runUntilStopped(server::start, server);
        }
    }

    /** {@code sluice backend}: hosts the shard groups the catalog assigns to it (multi-raft). */
    @Command(name = "backend", mixinStandardHelpOptions = true,
            description = "Run a backend: one Raft server hosting the shards (queue partitions) assigned to it.")
    static final class Backend implements Callable<Integer> {
        @Option(names = "--node-id", required = true, description = "This backend's id.")
        String nodeId;

        @Option(names = "--metadata-peers", required = true, description = "The metadata group: id=host:port,...")
        String metadataPeers;

        @Option(names = "--raft-port", defaultValue = "9500", description = "Raft port of all its shard groups"
                + " (default ${DEFAULT-VALUE}).")
        int raftPort;

        @Option(names = "--data-dir", defaultValue = "./backend-data", description = "Shard logs and stores"
                + " (default ${DEFAULT-VALUE}).")
        String dataDir;

        @Option(names = "--admin-port", defaultValue = "9525", description = "Health, metrics, status"
                + " (default ${DEFAULT-VALUE}).")
        int adminPort;

        @Option(names = "--host", defaultValue = "127.0.0.1", description = "Bind address of its Raft port, and the"
                + " address advertised to the cluster unless --advertise-host is given (default ${DEFAULT-VALUE}; the"
                + " admin endpoint binds sluice.admin.host).")
        String host;

        @Option(names = "--advertise-host", description = "The address (name or IP) other backends and the metadata"
                + " group reach this backend's Raft port at, when it differs from --host (e.g. --host 0.0.0.0"
                + " --advertise-host backend-1.example).")
        String advertiseHost;

        @Option(names = "--config", description = "A properties file of configuration keys (docs/configuration.md).")
        Path configFile;

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() throws Exception {
            Map<String, String> overrides = new HashMap<>();
            Map<String, String> defaults = new HashMap<>();
            CommandLine.ParseResult parsed = spec.commandLine().getParseResult();
            overrides.put(ServerConfigKeys.NODE_ID.name(), nodeId);
            overrides.put(ServerConfigKeys.METADATA_PEERS.name(), metadataPeers);
            flagOrDefault(parsed, overrides, defaults, "--raft-port", ServerConfigKeys.BACKEND_RAFT_PORT,
                    Integer.toString(raftPort));
            flagOrDefault(parsed, overrides, defaults, "--data-dir", ServerConfigKeys.DATA_DIR, dataDir);
            flagOrDefault(parsed, overrides, defaults, "--admin-port", ServerConfigKeys.ADMIN_PORT,
                    Integer.toString(adminPort));
            flagOrDefault(parsed, overrides, defaults, "--host", ServerConfigKeys.HOST, host);
            if (advertiseHost != null) {
                overrides.put(ServerConfigKeys.BACKEND_ADVERTISE_HOST.name(), advertiseHost);
            }
            BackendNode node = new BackendNode(ServerConfig.load(configFile, System.getenv(), overrides, defaults));
            return runUntilStopped(node::start, node);
        }
    }

    /**
     * {@code sluice node}: every role in one JVM, one node of a combined cluster (a metadata member, a backend and a
     * frontend; three nodes make a 3-node cluster). Its metadata Raft address is its entry in --metadata-peers.
     */
    @Command(name = "node", mixinStandardHelpOptions = true,
            description = "Run a combined node: metadata member, backend and SQS frontend in one process.")
    static final class Node implements Callable<Integer> {
        @Option(names = "--node-id", required = true, description = "This node's id: its metadata member and backend"
                + " id, as in --metadata-peers.")
        String nodeId;

        @Option(names = "--metadata-peers", required = true, description = "Every node's metadata member:"
                + " id=host:port,... (Raft gRPC).")
        String metadataPeers;

        @Option(names = "--raft-port", defaultValue = "9500", description = "Raft port of its shard groups"
                + " (default ${DEFAULT-VALUE}).")
        int raftPort;

        @Option(names = "--port", defaultValue = "9324", description = "SQS endpoint port (default ${DEFAULT-VALUE}).")
        int port;

        @Option(names = "--admin-port", defaultValue = "9325", description = "Health, metrics, status"
                + " (default ${DEFAULT-VALUE}).")
        int adminPort;

        @Option(names = "--data-dir", defaultValue = "./node-data", description = "Metadata log, shard logs and"
                + " stores, in metadata/ and backend/ (default ${DEFAULT-VALUE}).")
        String dataDir;

        @Option(names = "--host", defaultValue = "127.0.0.1", description = "Bind address of its Raft and SQS ports,"
                + " advertised to the cluster unless --advertise-host is given (default ${DEFAULT-VALUE}; the admin"
                + " endpoint binds sluice.admin.host).")
        String host;

        @Option(names = "--advertise-host", description = "The address other nodes reach this node's shard Raft port"
                + " at, when it differs from --host.")
        String advertiseHost;

        @CommandLine.Mixin
        ClusterKey key;

        @Option(names = "--config", description = "A properties file of configuration keys (docs/configuration.md).")
        Path configFile;

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() throws Exception {
            Map<String, String> overrides = new HashMap<>();
            Map<String, String> defaults = new HashMap<>();
            CommandLine.ParseResult parsed = spec.commandLine().getParseResult();
            overrides.put(ServerConfigKeys.NODE_ID.name(), nodeId);
            overrides.put(ServerConfigKeys.METADATA_PEERS.name(), metadataPeers);
            flagOrDefault(parsed, overrides, defaults, "--raft-port", ServerConfigKeys.BACKEND_RAFT_PORT,
                    Integer.toString(raftPort));
            flagOrDefault(parsed, overrides, defaults, "--port", ServerConfigKeys.PORT, Integer.toString(port));
            flagOrDefault(parsed, overrides, defaults, "--admin-port", ServerConfigKeys.ADMIN_PORT,
                    Integer.toString(adminPort));
            flagOrDefault(parsed, overrides, defaults, "--data-dir", ServerConfigKeys.DATA_DIR, dataDir);
            flagOrDefault(parsed, overrides, defaults, "--host", ServerConfigKeys.HOST, host);
            if (advertiseHost != null) {
                overrides.put(ServerConfigKeys.BACKEND_ADVERTISE_HOST.name(), advertiseHost);
            }
            key.putInto(overrides);
            CombinedNode node = new CombinedNode(ServerConfig.load(configFile, System.getenv(), overrides, defaults));
            return runUntilStopped(node::start, node);
        }
    }

    /** A cluster frontend's own access key (besides the catalog's): {@code sluice frontend} and {@code sluice node}. */
    static final class ClusterKey {
        @Option(names = "--access-key", description = "An access key accepted besides the catalog's.")
        String accessKey;

        @Option(names = "--secret-key", description = "Its secret.")
        String secretKey;

        void putInto(Map<String, String> overrides) {
            if (accessKey != null) {
                overrides.put(ServerConfigKeys.ACCESS_KEY.name(), accessKey);
            }
            if (secretKey != null) {
                overrides.put(ServerConfigKeys.SECRET_KEY.name(), secretKey);
            }
        }
    }

    /** Starts, then blocks until SIGTERM/SIGINT, which closes gracefully. */
    static int runUntilStopped(Startable start, AutoCloseable service) throws Exception {
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                service.close();
            } catch (Exception e) {
                e.printStackTrace();
            }
            stopped.countDown();
        }, "sluice-shutdown"));
        start.start();
        stopped.await();
        return 0;
    }

    @FunctionalInterface
    interface Startable {
        void start() throws Exception;
    }

    /**
     * A flag given on the command line overrides everything; otherwise its default is the role's default, which the
     * config file and the environment ({@code SLUICE_...}) may still change.
     */
    static void flagOrDefault(CommandLine.ParseResult parsed, Map<String, String> overrides,
                              Map<String, String> defaults, String option, ConfigKey<?> key, String value) {
        (parsed.hasMatchedOption(option) ? overrides : defaults).put(key.name(), value);
    }

    /** Command-line values win over file and environment, but only when actually given. */
    static void putIfGiven(CommandLine.ParseResult parsed, Map<String, String> overrides, String option,
                           ConfigKey<?> key, String value) {
        if (parsed.hasMatchedOption(option)) {
            overrides.put(key.name(), value);
        }
    }
}
