package io.sluice.server;

import io.sluice.common.raft.RatisSettings;
import io.sluice.metadata.raft.SplitPolicy;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;

/** Every configuration key of the server, in one place. docs/configuration.md is generated from this class. */
public final class ServerConfigKeys {
    private ServerConfigKeys() {
    }

    public static final ConfigKey<String> HOST = ConfigKey.string("sluice.host", "127.0.0.1",
            "Address the SQS endpoint (sluice dev, frontend) and the Raft port (metadata member, backend) bind to"
                    + " (0.0.0.0 for all interfaces).");
    public static final ConfigKey<String> ADMIN_HOST = ConfigKey.string("sluice.admin.host", "127.0.0.1",
            "Address the admin endpoint binds to (/health, /ready, /metrics, /admin/...): loopback unless set, e.g."
                    + " 0.0.0.0 where probes and Prometheus reach it over the network.");
    public static final ConfigKey<String> ADMIN_TOKEN = ConfigKey.string("sluice.admin.token", "",
            "Bearer token that state-changing admin endpoints (POST /admin/...) require. Empty: sluice dev generates"
                    + " one into DATA_DIR/admin-token; the cluster roles refuse admin writes.");
    public static final ConfigKey<Boolean> ADMIN_READ_AUTH = ConfigKey.bool("sluice.admin.read-auth", true,
            "Whether GET /metrics and GET /admin/status need a token (the read token or the admin token): they name"
                    + " queues and access key ids. On by default except in sluice dev; /health and /ready never need"
                    + " one. A cluster role with it on and no token answers them 403 (and says so at start).");
    public static final ConfigKey<Boolean> ADMIN_METRICS_AUTH = ConfigKey.bool("sluice.admin.metrics-auth", false,
            "Deprecated: sluice.admin.read-auth, which it sets when that is not given.");
    public static final ConfigKey<String> ADMIN_READ_TOKEN = ConfigKey.string("sluice.admin.read-token", "",
            "Bearer token that lets Prometheus and operators read GET /metrics and GET /admin/status, and nothing else"
                    + " (the admin token reads them too). Give Prometheus this one, not the admin token.");
    public static final ConfigKey<String> ADMIN_READ_TOKEN_FILE = ConfigKey.string("sluice.admin.read-token-file", "",
            "A file holding sluice.admin.read-token (read at start; the setting itself wins when both are given).");
    public static final ConfigKey<String> ADMIN_ALLOWED_HOSTS = ConfigKey.string("sluice.admin.allowed-hosts", "",
            "Host names the admin endpoint answers to besides IP addresses and localhost (comma-separated): the names"
                    + " Prometheus, probes and browsers reach it by. A request naming another host gets 403, so a web"
                    + " page whose name an attacker points at this address (DNS rebinding) cannot read it.");
    public static final ConfigKey<String> TLS_CERT = ConfigKey.string("sluice.tls.cert-file", "",
            "HTTPS: certificate chain (PEM, leaf first) of the SQS and admin ports. Set with sluice.tls.key-file; both"
                    + " ports then speak HTTPS only and queue URLs start with https://.");
    public static final ConfigKey<String> TLS_KEY = ConfigKey.string("sluice.tls.key-file", "",
            "HTTPS: the private key of sluice.tls.cert-file (unencrypted PKCS#8 PEM).");
    public static final ConfigKey<Integer> PORT = ConfigKey.integer("sluice.port", 9324, 0, 65535,
            "SQS endpoint port (both protocols). 0 picks a free port.");
    public static final ConfigKey<Integer> ADMIN_PORT = ConfigKey.integer("sluice.admin-port", 9325, 0, 65535,
            "Admin port: GET /health and GET /metrics (Prometheus). 0 picks a free port.");
    public static final ConfigKey<String> DATA_DIR = ConfigKey.string("sluice.data-dir", "./data",
            "Where queues and messages are stored.");
    public static final ConfigKey<Boolean> DATA_DIR_ALLOW_SHARED = ConfigKey.bool("sluice.data-dir.allow-shared",
            false, "Start although the data folder is open to other users and not this process's to make owner-only"
                    + " (a volume mounted with a group, say): the data then lives in owner-only folders inside it. Without"
                    + " it such a start is refused; a folder the process owns is made owner-only (rwx------) either way.");
    public static final ConfigKey<String> ACCESS_KEY = ConfigKey.string("sluice.access-key", "sluice",
            "Access key id accepted by SigV4 verification (dev credentials; printed at start).");
    public static final ConfigKey<String> SECRET_KEY = ConfigKey.string("sluice.secret-key", "sluice-dev-secret",
            "Secret access key for sluice.access-key.");
    public static final ConfigKey<Boolean> AUTH_ENABLED = ConfigKey.bool("sluice.auth.enabled", true,
            "Verify AWS Signature V4 on every request. Off accepts unsigned requests as 'anonymous'.");
    public static final ConfigKey<Boolean> AUTH_ALLOW_UNSIGNED_PAYLOAD = ConfigKey.bool(
            "sluice.auth.allow-unsigned-payload", false, "Accept header-signed requests that declare UNSIGNED-PAYLOAD"
                    + " (their body is then not covered by the signature; only sensible behind TLS).");
    public static final ConfigKey<String> KEYS_FILE = ConfigKey.string("sluice.auth.keys-file", "",
            "JSON file of further access keys and per-key rules (actions and queue-name globs); see docs/operations.md.");
    public static final ConfigKey<String> REGION = ConfigKey.string("sluice.region", "us-east-1",
            "Region used in queue ARNs; a cluster's frontends accept signatures scoped to it only (sluice dev: any"
                    + " region).");
    public static final ConfigKey<String> ACCOUNT_ID = ConfigKey.string("sluice.account-id", "000000000000",
            "The 12-digit account id in queue URLs and ARNs.");
    public static final ConfigKey<String> PUBLIC_URL = ConfigKey.string("sluice.public-url", "",
            "Base of queue URLs handed to clients (e.g. https://sqs.example.com); empty uses the request's Host.");
    public static final ConfigKey<Integer> MAX_REQUEST_BYTES = ConfigKey.integer("sluice.max-request-bytes",
            5 * 1024 * 1024, 64 * 1024, 64 * 1024 * 1024,
            "Largest request accepted; larger ones are refused before being buffered (1 MiB messages need ~4 MiB when"
                    + " form-encoded).");
    public static final ConfigKey<Integer> HTTP_REQUEST_READ_TIMEOUT_MS = ConfigKey.integer(
            "sluice.http.request-read-timeout-ms", 10_000, 100, 600_000, "SQS port: a request must arrive whole (headers"
                    + " and body) within this long of its first byte (the first: of the connection's opening), or its"
                    + " connection is closed.");
    public static final ConfigKey<Integer> HTTP_IDLE_TIMEOUT_MS = ConfigKey.integer("sluice.http.idle-timeout-ms",
            75_000, 1_000, 3_600_000, "SQS port: a connection with no request in flight and no traffic for this long"
                    + " is closed (a parked long poll is never idle; above the SDKs' 60 s, so they close first).");
    public static final ConfigKey<Integer> HTTP_MAX_CONNECTIONS = ConfigKey.integer("sluice.http.max-connections",
            4096, 1, 1_000_000, "SQS port: open connections beyond this are closed as they open.");
    public static final ConfigKey<Integer> HTTP_MAX_CONNECTIONS_PER_ADDRESS = ConfigKey.integer(
            "sluice.http.max-connections-per-address", 1024, 1, 1_000_000, "SQS port: open connections from one client"
                    + " address beyond this are closed as they open, so one address cannot take the whole cap (behind a"
                    + " proxy that does not pass client addresses on, raise it to sluice.http.max-connections).");
    public static final ConfigKey<Integer> HTTP_MAX_PIPELINED = ConfigKey.integer("sluice.http.max-pipelined", 16, 1,
            1024, "SQS port: requests of one connection received but not yet answered; past it the server stops"
                    + " reading from it until it has answered some.");
    public static final ConfigKey<Integer> MAX_INFLIGHT = ConfigKey.integer("sluice.max-inflight-per-partition",
            120_000, 1, Integer.MAX_VALUE, "In-flight message limit of one queue partition (SQS: 120,000).");
    public static final ConfigKey<Integer> EXPIRE_INTERVAL_MS = ConfigKey.integer("sluice.expire-interval-ms", 1000,
            10, 3_600_000, "sluice dev: how often its shard's leader housekeeping runs: the sweep for retention expiry and"
                    + " dedup-window cleanup (only partitions with something to expire are written), and every tenth"
                    + " time the reconciling with the catalog (in a cluster each shard's leader does it every second).");
    public static final ConfigKey<Integer> SHUTDOWN_GRACE_MS = ConfigKey.integer("sluice.shutdown-grace-ms", 5000, 0,
            600_000, "On stop: how long in-flight requests may take to finish; parked long polls are answered at once.");
    public static final ConfigKey<String> NODE_ID = ConfigKey.string("sluice.node-id", "",
            "This node's id: a metadata member's id in sluice.metadata.peers, or a backend's id (sluice dev: 'local').");
    public static final ConfigKey<String> METADATA_PEERS = ConfigKey.string("sluice.metadata.peers", "",
            "The metadata group, id=host:port,... (Raft gRPC addresses). Empty for sluice dev: one member in-process.");
    public static final ConfigKey<Integer> METADATA_PORT = ConfigKey.integer("sluice.metadata.port", 9326, 1, 65535,
            "sluice dev: Raft port of the in-process metadata member.");
    public static final ConfigKey<Integer> REPLICATION_FACTOR = ConfigKey.integer("sluice.replication-factor", 3, 1, 7,
            "Replicas per queue partition (capped by the live backends; sluice dev uses 1).");
    public static final ConfigKey<Integer> BACKEND_DEAD_AFTER_MS = ConfigKey.integer("sluice.backend-dead-after-ms",
            30_000, 500, 3_600_000, "A backend silent this long is replaced in every partition it holds.");
    public static final ConfigKey<Integer> METADATA_SNAPSHOT_EVERY = ConfigKey.integer("sluice.metadata.snapshot-every",
            10_000, 1, Integer.MAX_VALUE, "Metadata log entries between snapshots (bounds log size and replay time).");
    public static final ConfigKey<Integer> SHARDS = ConfigKey.integer("sluice.shards", 0, 0, 10_000,
            "Shards (Raft groups of backends) the metadata leader creates once enough backends are alive; 0: none.");
    public static final ConfigKey<Integer> BACKEND_RAFT_PORT = ConfigKey.integer("sluice.backend.raft-port", 9500, 1,
            65535, "sluice backend: the Raft port all of its shard groups share.");
    public static final ConfigKey<String> BACKEND_ADVERTISE_HOST = ConfigKey.string("sluice.backend.advertise-host", "",
            "sluice backend: the address the cluster reaches its Raft port at (blank: its --host). Set it when the"
                    + " backend binds a wildcard or a private address, e.g. its DNS name in Kubernetes.");
    public static final ConfigKey<Integer> BACKEND_MAX_CLOCK_SKEW_MS = ConfigKey.integer(
            "sluice.backend.max-clock-skew-ms", 1_000, 50, 60_000, "How far the time a backend's shard leaders stamp"
                    + " may stray from the metadata leader's clock (read on each heartbeat). A backend whose clock is"
                    + " further off stamps the reference's time instead and steps down from the shards it leads.");
    public static final ConfigKey<Integer> TEST_CLOCK_OFFSET_MS = ConfigKey.integer("sluice.test.clock-offset-ms", 0,
            -3_600_000, 3_600_000, "Testing only (the nemesis test's clock fault): shifts the wall clock a backend's"
                    + " shard leaders read by this many milliseconds. Never set it in production.");
    public static final ConfigKey<Integer> SHARD_SNAPSHOT_EVERY = ConfigKey.integer("sluice.backend.snapshot-every",
            10_000, 1, Integer.MAX_VALUE, "Raft entries of a shard between snapshots (RocksDB checkpoints); the log is"
                    + " purged up to each, bounding its size and the replay time after a restart.");
    public static final ConfigKey<Integer> RAFT_ELECTION_TIMEOUT_MS = ConfigKey.integer(
            "sluice.raft.election-timeout-ms", RatisSettings.DEFAULT_ELECTION_TIMEOUT_MS, 200,
            2_000, "Cluster Raft groups (metadata members, backends, combined nodes; sluice dev's one-member groups keep"
                    + " the default): a follower that hears nothing from its leader for between this and twice this"
                    + " long calls an election; leaders send heartbeats every half of it. Shorter: faster failover"
                    + " (measured 2-3x it), more idle CPU per group and more spurious elections on a loaded machine."
                    + " At most 2000: clients retry a shard or the metadata group for ~10 s. Use one value on every"
                    + " process.");
    public static final ConfigKey<String> CLUSTER_TLS_CERT = ConfigKey.string("sluice.cluster.tls.cert-file", "",
            "Raft mutual TLS: this process's certificate chain (PEM, leaf first) for every Raft server and client it"
                    + " runs. Set with key-file and ca-file, or none of the three.");
    public static final ConfigKey<String> CLUSTER_TLS_KEY = ConfigKey.string("sluice.cluster.tls.key-file", "",
            "Raft mutual TLS: the private key of cert-file (unencrypted PKCS#8 PEM).");
    public static final ConfigKey<String> CLUSTER_TLS_CA = ConfigKey.string("sluice.cluster.tls.ca-file", "",
            "Raft mutual TLS: the cluster CA's certificate(s) (PEM): a peer is trusted only with a certificate it"
                    + " signed, for the address it is dialled at.");
    public static final ConfigKey<Boolean> CLUSTER_ALLOW_PLAINTEXT = ConfigKey.bool("sluice.cluster.allow-plaintext",
            false, "Let a metadata member or backend whose Raft port binds a non-loopback address run without Raft"
                    + " TLS (anyone who reaches the port could then submit commands and read the catalog).");
    public static final ConfigKey<Integer> REQUEST_TIMEOUT_MS = ConfigKey.integer("sluice.frontend.request-timeout-ms",
            5_000, 500, 60_000, "How long an SQS request may take (a long poll: plus its wait) before the frontend"
                    + " answers 503 ServiceUnavailable, which every SDK retries, instead of holding it: a node cut off"
                    + " from a shard's leader or the metadata group fails fast. Keep it below the clients' timeouts"
                    + " (the AWS SDKs' default socket timeout is 30-50 s) and above a leader failover (~1.5-4 s).");
    public static final ConfigKey<Integer> CATALOG_REFRESH_MS = ConfigKey.integer("sluice.catalog.refresh-ms", 1000, 50,
            60_000, "How often a frontend refreshes its cached catalog: the bound on how stale it can be.");
    public static final ConfigKey<Integer> WORKER_THREADS = ConfigKey.integer("sluice.worker-threads", 8, 1, 512,
            "Threads that run SQS actions (never the network event loops).");
    public static final ConfigKey<Integer> KEY_RATE_LIMIT = ConfigKey.integer("sluice.frontend.key-rate-limit", 0, 0,
            1_000_000, "Requests per second each access key may make through one frontend (0 = unlimited); past it,"
                    + " requests get the retryable RequestThrottled (403).");
    public static final ConfigKey<String> KEY_RATE_LIMITS = ConfigKey.string("sluice.frontend.key-rate-limits", "",
            "Per-key overrides of sluice.frontend.key-rate-limit: key=requestsPerSecond,... (0 = unlimited).");
    public static final ConfigKey<Integer> KEY_RATE_BURST_MS = ConfigKey.integer("sluice.frontend.key-rate-burst-ms",
            1000, 0, 60_000, "How much of its rate a key may spend at once after being idle (token bucket depth).");
    public static final ConfigKey<Boolean> AUTOSPLIT_ENABLED = ConfigKey.bool("sluice.autosplit.enabled", true,
            "Let the metadata leader raise a hot standard queue's partition count by itself (doubling it, up to"
                    + " sluice.autosplit.max-partitions); a queue opts out with SluiceAutoSplit=false.");
    public static final ConfigKey<Integer> AUTOSPLIT_SENDS_PER_PARTITION = ConfigKey.integer(
            "sluice.autosplit.sends-per-second-per-partition", 1000, 1, 10_000_000, "Auto-split: messages sent per second"
                    + " per partition, sustained over sluice.autosplit.sustain-seconds, that make a queue split.");
    public static final ConfigKey<Integer> AUTOSPLIT_OLDEST_AGE_SECONDS = ConfigKey.integer(
            "sluice.autosplit.oldest-age-seconds", 300, 0, 1_209_600, "Auto-split: an oldest message older than this,"
                    + " for all of sluice.autosplit.sustain-seconds while consumers receive from the queue, makes it"
                    + " split (consumers falling behind); 0 turns this trigger off.");
    public static final ConfigKey<Integer> AUTOSPLIT_SUSTAIN_SECONDS = ConfigKey.integer(
            "sluice.autosplit.sustain-seconds", 60, 5, 86_400, "Auto-split: how long a trigger must hold.");
    public static final ConfigKey<Integer> AUTOSPLIT_MAX_PARTITIONS = ConfigKey.integer(
            "sluice.autosplit.max-partitions", 16, 1, 64, "Auto-split: the most partitions it gives a queue (a"
                    + " SetQueueAttributes SluicePartitions may go further, up to 64).");
    public static final ConfigKey<Integer> AUTOSPLIT_COOLDOWN_SECONDS = ConfigKey.integer(
            "sluice.autosplit.cooldown-seconds", 300, 0, 86_400, "Auto-split: the least time between two splits of"
                    + " one queue.");
    public static final ConfigKey<Integer> CONSOLE_HISTORY_QUEUES = ConfigKey.integer(
            "sluice.console.history-queues", 1_000, 0, 100_000, "Web console: how many queues (the first by name)"
                    + " get the last hour's charts (0: no charts). Each costs ~11.5 KB of heap; the samples themselves"
                    + " are one counts read per shard every 10 s while the console is in use.");
    public static final ConfigKey<Integer> CONSOLE_REFRESH_SECONDS = ConfigKey.integer(
            "sluice.console.refresh-seconds", 10, 1, 300, "Web console: how often a page's figures reload in place.");

    /** Every key declared above, in declaration order. */
    public static List<ConfigKey<?>> all() {
        List<ConfigKey<?>> keys = new ArrayList<>();
        for (Field f : ServerConfigKeys.class.getDeclaredFields()) {
            if (Modifier.isStatic(f.getModifiers()) && f.getType() == ConfigKey.class) {
                try {
                    keys.add((ConfigKey<?>) f.get(null));
                } catch (IllegalAccessException e) {
                    throw new IllegalStateException(e);
                }
            }
        }
        return keys;
    }

    /** The auto-split policy's settings (the metadata leader's: {@code sluice metadata}, {@code node}, {@code dev}). */
    public static SplitPolicy.Settings autoSplit(ServerConfig config) {
        return new SplitPolicy.Settings(config.get(AUTOSPLIT_ENABLED),
                config.get(AUTOSPLIT_SENDS_PER_PARTITION), config.get(AUTOSPLIT_OLDEST_AGE_SECONDS) * 1000L,
                config.get(AUTOSPLIT_SUSTAIN_SECONDS) * 1000L, config.get(AUTOSPLIT_MAX_PARTITIONS),
                config.get(AUTOSPLIT_COOLDOWN_SECONDS) * 1000L);
    }

    /** docs/configuration.md. */
    public static String renderMarkdown() {
        StringBuilder sb = new StringBuilder();
        sb.append("# Configuration\n\n");
        sb.append("Generated from `ServerConfigKeys` (a test fails when this file is stale). Each key is read, lowest");
        sb.append(" precedence first, from its default, the config file (`--config FILE`, Java properties), the");
        sb.append(" environment (upper case, `.` and `-` as `_`), and the command line.\n\n");
        sb.append("| key | environment | type | default | meaning |\n|---|---|---|---|---|\n");
        for (ConfigKey<?> k : all()) {
            sb.append("| `").append(k.name()).append("` | `").append(k.environmentName()).append("` | ")
                    .append(k.type()).append(" | `").append(k.defaultValue()).append("` | ").append(k.doc())
                    .append(" |\n");
        }
        return sb.toString();
    }
}
