package io.sluice.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sluice.common.raft.RaftTransport;
import io.sluice.metadata.image.ClusterImage;
import io.sluice.metadata.image.PartitionAssignment;
import io.sluice.metadata.raft.MetadataClient;
import io.sluice.metadata.raft.MetadataPeers;
import io.sluice.testing.Ports;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import software.amazon.awssdk.services.sqs.SqsClient;

/**
 * A cluster of real Sluice processes on loopback for one test, in either topology:
 * <ul>
 *   <li><b>split</b>: three metadata members {@code m1..m3}, backends {@code b1..bN}, SQS frontends {@code f1..fM};</li>
 *   <li><b>combined</b>: nodes {@code n1..nN}, each {@code sluice node} (a metadata member, a backend and a
 *       frontend in one JVM).</li>
 * </ul>
 * Every process is addressed by its name: {@link #kill} (SIGKILL, the crash), {@link #stop} (SIGTERM, the graceful
 * path), {@link #start} again on the same data, {@link #pause} (SIGSTOP: alive but silent, as a machine in a long GC
 * pause or a partition) and {@link #resume} (SIGCONT). {@link #shardLeader} finds the backend (or node) leading a
 * queue partition's shard; {@link #sqs} gives an SDK client of a frontend; {@link #state} describes every process
 * (status and shard gauges) for the message of a wait that timed out. Closing stops every process, paused ones too.
 */
final class LocalCluster implements AutoCloseable {
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private static final ObjectMapper JSON = new ObjectMapper();

    enum Topology { SPLIT, COMBINED }

    /**
     * The topologies a test runs on: {@code -Dsluice.topologies=split,combined} (scripts/fault-suite.sh and
     * scripts/scale-suite.sh), the split one alone by default (CI: the combined topology's own test is
     * CombinedClusterIT).
     */
    static java.util.stream.Stream<Topology> topologies() {
        return java.util.Arrays.stream(System.getProperty("sluice.topologies", "split").split(","))
                .map(t -> Topology.valueOf(t.trim().toUpperCase(java.util.Locale.ROOT)));
    }

    /** {@link #split} with one frontend, or {@link #combined}, with {@code hosts} backends or nodes. */
    static LocalCluster start(Topology topology, String name, int shards, int hosts, Map<String, String> env)
            throws IOException {
        return topology == Topology.SPLIT ? split(name, shards, hosts, 1, env)
                : combined(name + "-combined", shards, hosts, env);
    }

    final Topology topology;
    final String metadataPeers;
    private final Path base;
    private final Map<String, String> env;
    private final Hosts hosts;
    private final Map<String, Member> members = new LinkedHashMap<>();

    /** One process of the cluster: its launcher arguments are fixed, so a restart reuses its ports and data. */
    static final class Member {
        final String name;
        final String role;
        /** The address it binds and is reached at: loopback, or its host's address on a cluster of hosts. */
        final String host;
        final int adminPort;
        /** Its SQS port (frontends and nodes), else 0. */
        final int sqsPort;
        /** Its shard Raft port (backends and nodes), else 0. */
        final int raftPort;
        final Path dataDir;
        private final List<String> args;
        private final List<String> jvm;
        private final Map<String, String> env;
        private final List<String> prefix;
        private Process process;
        private boolean paused;

        Member(String name, String role, String host, List<String> prefix, int adminPort, int sqsPort, int raftPort,
               Path dataDir, List<String> args, List<String> jvm, Map<String, String> env) {
            this.name = name;
            this.role = role;
            this.host = host;
            this.prefix = prefix;
            this.adminPort = adminPort;
            this.sqsPort = sqsPort;
            this.raftPort = raftPort;
            this.dataDir = dataDir;
            this.args = args;
            this.jvm = jvm;
            this.env = env;
        }

        void launch() throws IOException {
            launch(Map.of());
        }

        /** Launches it with {@code extra} configuration (SLUICE_... variables) over its own, for this run only. */
        void launch(Map<String, String> extra) throws IOException {
            Path log = dataDir.resolveSibling(dataDir.getFileName() + ".log");
            Map<String, String> all = new LinkedHashMap<>(env);
            all.putAll(extra);
            process = ProcessFixtures.launch(prefix, jvm, args, log, all);
        }

        void awaitHealthy() {
            Path log = dataDir.resolveSibling(dataDir.getFileName() + ".log");
            ProcessFixtures.awaitHealthy(process, adminUri(), log, role + " " + name);
        }

        boolean alive() {
            return process != null && process.isAlive();
        }

        long pid() {
            return process.pid();
        }

        URI endpoint() {
            return URI.create("http://" + host + ":" + sqsPort);
        }

        /** Its admin endpoint's base URI. */
        URI adminUri() {
            return URI.create("http://" + host + ":" + adminPort);
        }

        /** Its {@code /admin/status}, or null if it does not answer. */
        JsonNode status() {
            return LocalCluster.status(adminUri());
        }

        /** How many shard groups it hosts now, -1 if it does not answer. */
        int hostedShards() {
            JsonNode s = status();
            return s == null ? -1 : s.path("hostedShards").size();
        }

        /** Whether it leads the shard group {@code groupId} now. */
        boolean leads(String groupId) {
            return hostedShard(groupId).path("leader").asBoolean();
        }

        /** Partitions of the shard group its replica stores that are not retired (-1 if it hosts none of the group). */
        int livePartitions(String groupId) {
            return hostedShard(groupId).path("livePartitions").asInt(-1);
        }

        private JsonNode hostedShard(String groupId) {
            JsonNode s = status();
            if (s != null) {
                for (JsonNode shard : s.path("hostedShards")) {
                    if (shard.path("groupId").asText().equals(groupId)) {
                        return shard;
                    }
                }
            }
            return com.fasterxml.jackson.databind.node.MissingNode.getInstance();
        }

        /** Its {@code GET /ready} status code, or -1 if it does not answer. */
        int readyStatus() {
            try {
                return HTTP.send(HttpRequest.newBuilder(adminUri().resolve("/ready"))
                        .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.discarding()).statusCode();
            } catch (IOException | InterruptedException e) {
                return -1;
            }
        }

        /** Waits until it holds at least {@code n} parked long polls (its {@code sqs_long_polls_parked} gauge). */
        void awaitParkedPolls(int n) {
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(20))
                    .until(() -> PromScrape.of(adminUri()).sum("sqs_long_polls_parked")
                            >= n);
        }
    }

    /** The {@code /admin/status} of the process whose admin endpoint is given, or null if it does not answer. */
    static JsonNode status(URI admin) {
        try {
            HttpResponse<String> r = HTTP.send(ProcessFixtures.adminRequest(admin.resolve("/admin/status"))
                    .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
            return r.statusCode() == 200 ? JSON.readTree(r.body()) : null;
        } catch (IOException | InterruptedException e) {
            return null;
        }
    }

    private LocalCluster(Topology topology, String metadataPeers, Path base, Map<String, String> env, Hosts hosts) {
        this.topology = topology;
        this.metadataPeers = metadataPeers;
        this.base = base;
        this.env = env;
        this.hosts = hosts;
    }

    /**
     * Starts three metadata members, {@code backends} backends and {@code frontends} frontends, and waits until every
     * backend hosts its shards ({@code shards} groups at R = min(3, backends)); on hosts only with
     * {@code -Dsluice.netns=true}.
     *
     * @param env configuration of every process, as SLUICE_... variables ({@code SLUICE_SHARDS} and
     *            {@code SLUICE_REPLICATION_FACTOR} are set from the arguments unless given)
     */
    static LocalCluster split(String name, int shards, int backends, int frontends, Map<String, String> env)
            throws IOException {
        return split(name, shards, backends, frontends, env, Hosts.everywhere());
    }

    /**
     * {@link #split(String, int, int, int, Map)}, each process in a host of its own ({@link Hosts}: a network
     * namespace with its own address, Raft over mutual TLS with certificates for those addresses) when
     * {@code onHosts}, else all on loopback.
     */
    static LocalCluster split(String name, int shards, int backends, int frontends, Map<String, String> env,
                              boolean onHosts) throws IOException {
        Path base = Files.createTempDirectory(SluiceProcess.itDir(), name + "-");
        Map<String, String> all = clusterEnv(shards, Math.min(3, backends), env);
        Hosts hosts = onHosts ? Hosts.create(List.of("m1", "m2", "m3")) : null;
        List<String> parts = new ArrayList<>();
        for (int i = 1; i <= 3; i++) {
            String id = "m" + i;
            parts.add(id + "=" + (hosts == null ? "127.0.0.1" : hosts.address(id)) + ":" + Ports.free());
        }
        LocalCluster cluster = new LocalCluster(Topology.SPLIT, String.join(",", parts), base, all, hosts);
        try {
            for (String part : parts) {
                String id = part.substring(0, part.indexOf('='));
                int admin = Ports.free();
                cluster.add(cluster.newMember(id, "metadata", admin, 0, 0, List.of("metadata", "--node-id", id,
                        "--peers", cluster.metadataPeers, "--data-dir", base.resolve(id).toString(), "--admin-port",
                        Integer.toString(admin)), List.of("-Xmx256m", "-XX:+UseSerialGC"), all));
            }
            cluster.startAll(List.of("m1", "m2", "m3"));
            for (int i = 1; i <= backends; i++) {
                cluster.addBackend();
            }
            cluster.awaitShardsHosted(shards, backends);
            for (int i = 1; i <= frontends; i++) {
                String id = "f" + i;
                int admin = Ports.free();
                int sqs = Ports.free();
                cluster.add(cluster.newMember(id, "frontend", admin, sqs, 0, List.of("frontend",
                        "--metadata-peers", cluster.metadataPeers, "--port", Integer.toString(sqs), "--admin-port",
                        Integer.toString(admin), "--access-key", SluiceProcess.ACCESS_KEY, "--secret-key",
                        SluiceProcess.SECRET_KEY), List.of("-Xmx512m", "-XX:+UseSerialGC"), all));
                cluster.start(id);
            }
            return cluster;
        } catch (IOException | RuntimeException | Error e) {
            cluster.close();
            throw e;
        }
    }

    /**
     * Starts {@code nodes} combined nodes ({@code sluice node}: every role in one JVM), all launched before any is
     * awaited (the metadata group needs a majority to serve), and waits until every node hosts its shards; on hosts
     * only with {@code -Dsluice.netns=true}.
     */
    static LocalCluster combined(String name, int shards, int nodes, Map<String, String> env) throws IOException {
        return combined(name, shards, nodes, env, Hosts.everywhere());
    }

    /** {@link #combined(String, int, int, Map)}, each node in a host of its own when {@code onHosts}. */
    static LocalCluster combined(String name, int shards, int nodes, Map<String, String> env, boolean onHosts)
            throws IOException {
        Path base = Files.createTempDirectory(SluiceProcess.itDir(), name + "-");
        Map<String, String> all = clusterEnv(shards, Math.min(3, nodes), env);
        List<String> names = new ArrayList<>();
        for (int i = 1; i <= nodes; i++) {
            names.add("n" + i);
        }
        Hosts hosts = onHosts ? Hosts.create(names) : null;
        List<String> parts = new ArrayList<>();
        for (String id : names) {
            parts.add(id + "=" + (hosts == null ? "127.0.0.1" : hosts.address(id)) + ":" + Ports.free());
        }
        LocalCluster cluster = new LocalCluster(Topology.COMBINED, String.join(",", parts), base, all, hosts);
        try {
            for (String id : names) {
                int admin = Ports.free();
                int sqs = Ports.free();
                int raft = Ports.free();
                cluster.add(cluster.newMember(id, "node", admin, sqs, raft, List.of("node", "--node-id", id,
                        "--metadata-peers", cluster.metadataPeers, "--raft-port",
                        Integer.toString(raft), "--port", Integer.toString(sqs), "--admin-port",
                        Integer.toString(admin), "--data-dir", base.resolve(id).toString(), "--access-key",
                        SluiceProcess.ACCESS_KEY, "--secret-key", SluiceProcess.SECRET_KEY),
                        List.of("-Xmx768m", "-XX:+UseSerialGC"), all));
            }
            cluster.startAll(names);
            cluster.awaitShardsHosted(shards, nodes);
            return cluster;
        } catch (IOException | RuntimeException | Error e) {
            cluster.close();
            throw e;
        }
    }

    /**
     * A process of this cluster. On hosts it gets a host of its own (made here unless it exists), binds that host's
     * address ({@code --host}, the admin endpoint too), and speaks Raft over mutual TLS with a certificate for it.
     */
    private Member newMember(String id, String role, int admin, int sqs, int raft, List<String> args, List<String> jvm,
                             Map<String, String> env) throws IOException {
        if (hosts == null) {
            return new Member(id, role, "127.0.0.1", List.of(), admin, sqs, raft, base.resolve(id), args, jvm, env);
        }
        hosts.add(List.of(id));
        String host = hosts.address(id);
        List<String> onHost = new ArrayList<>(args);
        onHost.addAll(List.of("--host", host));
        Map<String, String> own = new LinkedHashMap<>(env);
        own.put("SLUICE_ADMIN_HOST", host);
        own.putAll(certificate(id, host));
        return new Member(id, role, host, hosts.prefix(id), admin, sqs, raft, base.resolve(id), List.copyOf(onHost),
                jvm, Map.copyOf(own));
    }

    /** A certificate of the cluster's CA (made on first use) for {@code name} at {@code address}, as TLS settings. */
    private Map<String, String> certificate(String name, String address) throws IOException {
        Path tls = base.resolve("tls");
        Process make = new ProcessBuilder("bash", DeployFiles.root().resolve("deploy/tls/make-certs.sh").toString(),
                tls.toString(), name + "=IP:" + address).redirectErrorStream(true).start();
        String out = new String(make.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        try {
            if (!make.waitFor(60, TimeUnit.SECONDS) || make.exitValue() != 0) {
                throw new IOException("make-certs.sh for " + name + " failed: " + out);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
        return Map.of("SLUICE_CLUSTER_TLS_CERT_FILE", tls.resolve(name + ".pem").toString(),
                "SLUICE_CLUSTER_TLS_KEY_FILE", tls.resolve(name + "-key.pem").toString(),
                "SLUICE_CLUSTER_TLS_CA_FILE", tls.resolve("ca.pem").toString());
    }

    /** How this test talks Raft to the cluster (the metadata group): plaintext on loopback, mutual TLS on hosts. */
    private RaftTransport transport() throws IOException {
        if (hosts == null) {
            return RaftTransport.PLAINTEXT;
        }
        Map<String, String> tls = certificate("it-client", hosts.machineAddress());
        return RaftTransport.mutualTls(Path.of(tls.get("SLUICE_CLUSTER_TLS_CERT_FILE")),
                Path.of(tls.get("SLUICE_CLUSTER_TLS_KEY_FILE")), Path.of(tls.get("SLUICE_CLUSTER_TLS_CA_FILE")));
    }

    /** The hosts this cluster runs on, for network faults; null on loopback. */
    Hosts hosts() {
        return hosts;
    }

    /**
     * Starts one more backend of the split topology ({@code b<n+1>}) and waits until it is healthy (joining shards is
     * the metadata group's decision: wait for that separately).
     */
    Member addBackend(String... extraArgs) throws IOException {
        return addBackend(Map.of(), extraArgs);
    }

    /** {@link #addBackend(String...)} with configuration of its own (SLUICE_... variables) over the cluster's. */
    Member addBackend(Map<String, String> extraEnv, String... extraArgs) throws IOException {
        if (topology != Topology.SPLIT) {
            throw new IllegalStateException("backends are added to a split cluster");
        }
        String id = "b" + (members.values().stream().filter(m -> m.role.equals("backend")).count() + 1);
        int admin = Ports.free();
        int raft = Ports.free();
        List<String> args = new ArrayList<>(List.of("backend", "--node-id", id, "--metadata-peers", metadataPeers,
                "--raft-port", Integer.toString(raft), "--data-dir", base.resolve(id).toString(),
                "--admin-port", Integer.toString(admin)));
        args.addAll(List.of(extraArgs));
        Map<String, String> own = new LinkedHashMap<>(env);
        own.putAll(extraEnv);
        Member m = newMember(id, "backend", admin, 0, raft, List.copyOf(args), List.of("-Xmx384m", "-XX:+UseSerialGC"),
                own);
        add(m);
        start(id);
        return m;
    }

    /** Deletes everything in a stopped process's data folder: a lost disk. */
    void wipeData(String name) throws IOException {
        Member m = member(name);
        if (m.alive()) {
            throw new IllegalStateException(name + " is running");
        }
        if (!Files.exists(m.dataDir)) {
            return;
        }
        try (var walk = Files.walk(m.dataDir)) {
            for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                if (!p.equals(m.dataDir)) {
                    Files.delete(p);
                }
            }
        }
    }

    private static Map<String, String> clusterEnv(int shards, int replication, Map<String, String> env) {
        Map<String, String> all = new LinkedHashMap<>(Map.of("SLUICE_SHARDS", Integer.toString(shards),
                "SLUICE_REPLICATION_FACTOR", Integer.toString(replication), "SLUICE_ACCESS_LOG_LEVEL", "WARN"));
        all.putAll(env);
        return Map.copyOf(all);
    }

    private void add(Member m) {
        members.put(m.name, m);
    }

    /** Launches every named process first, then waits for each: members of one Raft group need each other. */
    private void startAll(List<String> names) throws IOException {
        for (String n : names) {
            member(n).launch();
        }
        for (String n : names) {
            member(n).awaitHealthy();
        }
    }

    /** Waits until the backends host every replica: {@code shards} groups of the cluster's replication factor. */
    private void awaitShardsHosted(int shards, int hosts) {
        int replicas = shards * Math.min(hosts, Integer.parseInt(env.get("SLUICE_REPLICATION_FACTOR")));
        ClusterState.awaitTrue("the backends host all " + replicas + " shard replicas", Duration.ofMinutes(2),
                () -> backends().stream().mapToInt(Member::hostedShards).sum() == replicas, this::state);
    }

    Member member(String name) {
        Member m = members.get(name);
        if (m == null) {
            throw new IllegalArgumentException("no process " + name + " in " + members.keySet());
        }
        return m;
    }

    /** The processes holding shard replicas: backends, or every node. */
    List<Member> backends() {
        return members.values().stream().filter(m -> m.role.equals("backend") || m.role.equals("node")).toList();
    }

    /** The processes serving SQS: frontends, or every node. */
    List<Member> frontends() {
        return members.values().stream().filter(m -> m.sqsPort != 0).toList();
    }

    /** An SDK client (the test key) of the {@code i}-th SQS-serving process (0-based); the caller closes it. */
    SqsClient sqs(int i) {
        return SqsClients.client(frontends().get(i).endpoint());
    }

    /** The first SQS-serving process other than {@code name}: one that stays up while {@code name} is killed. */
    Member frontendOtherThan(String name) {
        return frontends().stream().filter(m -> !m.name.equals(name)).findFirst().orElseThrow();
    }

    /** Starts a stopped or killed process again, on its ports and data, and waits until it is healthy. */
    void start(String name) throws IOException {
        start(name, Map.of());
    }

    /** {@link #start(String)} with extra configuration for this run (e.g. a test-only clock offset). */
    void start(String name, Map<String, String> extraEnv) throws IOException {
        Member m = member(name);
        m.launch(extraEnv);
        m.awaitHealthy();
    }

    /** Every process, in start order. */
    List<Member> members() {
        return List.copyOf(members.values());
    }

    /** SIGKILL: the crash path (a paused process is killed too). */
    void kill(String name) throws InterruptedException {
        Member m = member(name);
        ProcessFixtures.kill(m.process);
        m.paused = false;
    }

    /** SIGTERM and wait: the graceful path. */
    void stop(String name) throws InterruptedException, IOException {
        Member m = member(name);
        if (m.paused) {
            resume(name); // a stopped process cannot act on SIGTERM
        }
        ProcessFixtures.stop(m.process);
    }

    /** SIGSTOP: the process stays alive and holds its sockets but does nothing, as in a long pause. */
    void pause(String name) throws IOException, InterruptedException {
        signal(member(name), "STOP");
        member(name).paused = true;
    }

    /** SIGCONT after {@link #pause}. */
    void resume(String name) throws IOException, InterruptedException {
        signal(member(name), "CONT");
        member(name).paused = false;
    }

    private static void signal(Member m, String signal) throws IOException, InterruptedException {
        if (!m.alive()) {
            throw new IllegalStateException(m.name + " is not running");
        }
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(m.pid())).inheritIO().start();
        if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
            throw new IOException("kill -" + signal + " " + m.pid() + " failed");
        }
    }

    /** The catalog as the metadata group holds it now. */
    ClusterImage image() throws IOException {
        try (MetadataClient metadata = new MetadataClient(MetadataPeers.parse(metadataPeers), transport())) {
            return metadata.fetchImage();
        }
    }

    /** The Raft group id of the shard holding partition {@code index} of {@code queue}. */
    String shardGroupOf(String queue, int index) throws IOException {
        ClusterImage image = image();
        long queueId = image.queues().get(queue).queueId();
        String shardId = image.partitions().get(PartitionAssignment.key(queueId, index)).shardId();
        return image.shards().get(shardId).groupId();
    }

    /** The metadata member (or node) that leads the metadata group now, as its members see it; null if none says. */
    String metadataLeader() {
        for (Member m : members.values()) {
            if (m.role.equals("metadata") || m.role.equals("node")) {
                JsonNode s = m.status();
                if (s != null) {
                    for (JsonNode member : s.path("metadata")) {
                        if (member.path("role").asText().equals("leader")) {
                            return member.path("id").asText();
                        }
                    }
                }
            }
        }
        return null;
    }

    /** The backend (or node) leading the shard of partition {@code index} of {@code queue}, waiting for one. */
    String shardLeader(String queue, int index) throws IOException {
        String group = shardGroupOf(queue, index);
        return ClusterState.await("the leader of " + queue + "/" + index + "'s shard " + group, Duration.ofMinutes(2),
                () -> backends().stream().filter(b -> b.leads(group)).map(b -> b.name).findFirst().orElse(null),
                n -> n != null, this::state);
    }

    /** Every process's status and shard gauges, for the message of a wait that timed out. */
    String state() {
        Map<String, URI> admins = new LinkedHashMap<>();
        members.values().forEach(m -> admins.put(m.role + " " + m.name + (m.paused ? " (paused)" : "")
                + (m.alive() ? "" : " (not running)"), m.adminUri()));
        StringBuilder out = new StringBuilder(ClusterState.describeAt(admins));
        for (Member m : members.values()) {
            List<String> lines = raftEvents(m.dataDir.resolveSibling(m.dataDir.getFileName() + ".log"), 8);
            if (!lines.isEmpty()) {
                out.append("\n  ").append(m.name).append(": its last Raft role changes and elections");
                lines.forEach(l -> out.append("\n    ").append(l.length() > 240 ? l.substring(0, 240) + "..." : l));
            }
        }
        return out.toString();
    }

    private static final java.util.regex.Pattern RAFT_EVENT = java.util.regex.Pattern.compile(
            "changes role|change Leader|round \\d+: result|Lost leadership|Skipping leader election|replies to ELECTION"
                    + "|changed the members|hands the leadership|stepping down");

    /** The last {@code n} lines of a member's log that record Raft roles, elections and membership changes. */
    private static List<String> raftEvents(Path log, int n) {
        try (var lines = Files.lines(log)) {
            List<String> events = lines.filter(l -> RAFT_EVENT.matcher(l).find()).toList();
            return events.subList(Math.max(0, events.size() - n), events.size());
        } catch (IOException | java.io.UncheckedIOException e) {
            return List.of();
        }
    }

    /**
     * Stops every process (SIGTERM, then SIGKILL after 30 s), resuming paused ones first; frontends first. Then
     * removes the hosts, if any (their faults go with them).
     */
    @Override
    public void close() {
        try {
            closeProcesses();
        } finally {
            if (hosts != null) {
                hosts.close();
            }
        }
    }

    private void closeProcesses() {
        List<Member> order = new ArrayList<>(members.values());
        java.util.Collections.reverse(order);
        for (Member m : order) {
            try {
                if (m.paused) {
                    resume(m.name);
                }
                ProcessFixtures.stop(m.process);
            } catch (IOException | InterruptedException | RuntimeException e) {
                try {
                    ProcessFixtures.kill(m.process);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }
}
