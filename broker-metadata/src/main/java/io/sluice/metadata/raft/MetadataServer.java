package io.sluice.metadata.raft;

import io.sluice.common.Clock;
import io.sluice.common.raft.RaftTransport;
import io.sluice.common.raft.RatisSettings;
import io.sluice.metadata.image.ClusterImage;
import io.sluice.metadata.image.MetadataCommand;
import io.sluice.metadata.image.MetadataResult;
import io.sluice.metadata.image.PartitionLoad;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.storage.RaftStorage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One member of the metadata group. Every member replicates the catalog; the leader also watches backend liveness
 * and, when a backend has been silent longer than {@code deadAfterMillis}, proposes {@code ReplaceDeadNode} so the
 * replication factor is restored without an operator.
 */
public final class MetadataServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(MetadataServer.class);

    private final String nodeId;
    private final MetadataPeers peers;
    private final MetadataStateMachine stateMachine;
    private final RaftServer server;
    private final RaftTransport transport;
    private final ScheduledExecutorService leaderTasks;
    private final long deadAfterMillis;
    private final int shardCount;
    private final int replicationFactor;
    private MetadataClient selfClient;
    private final Clock clock;
    private volatile SplitPolicy splitPolicy = new SplitPolicy(SplitPolicy.Settings.DISABLED);
    private final AtomicLong splits = new AtomicLong();
    private boolean ledAtLastSplitCheck;

    public MetadataServer(String nodeId, MetadataPeers peers, Path dataDir, Clock clock, int replicationFactor,
                          long deadAfterMillis, long snapshotEvery) {
        this(nodeId, peers, dataDir, clock, replicationFactor, deadAfterMillis, snapshotEvery, 0);
    }

    /**
     * @param shardCount shards the cluster should have (0: partitions are not sharded, as in {@code sluice dev}); the
     *                   leader creates them once {@code replicationFactor} backends are alive
     */
    public MetadataServer(String nodeId, MetadataPeers peers, Path dataDir, Clock clock, int replicationFactor,
                          long deadAfterMillis, long snapshotEvery, int shardCount) {
        this(nodeId, "127.0.0.1", peers, dataDir, clock, replicationFactor, deadAfterMillis, snapshotEvery, shardCount);
    }

    /** @param bindHost the address its Raft server binds (its port is its entry's in {@code peers}) */
    public MetadataServer(String nodeId, String bindHost, MetadataPeers peers, Path dataDir, Clock clock,
                          int replicationFactor, long deadAfterMillis, long snapshotEvery, int shardCount) {
        this(nodeId, bindHost, peers, dataDir, clock, replicationFactor, deadAfterMillis, snapshotEvery, shardCount,
                RaftTransport.PLAINTEXT);
    }

    /** @param transport how its Raft server and its own client speak (mutual TLS in a cluster) */
    public MetadataServer(String nodeId, String bindHost, MetadataPeers peers, Path dataDir, Clock clock,
                          int replicationFactor, long deadAfterMillis, long snapshotEvery, int shardCount,
                          RaftTransport transport) {
        this(nodeId, bindHost, peers, dataDir, clock, replicationFactor, deadAfterMillis, snapshotEvery, shardCount,
                transport, RatisSettings.DEFAULT_ELECTION_TIMEOUT_MS);
    }

    /** @param electionTimeoutMillis the metadata group's shortest election timeout ({@link RatisSettings}) */
    public MetadataServer(String nodeId, String bindHost, MetadataPeers peers, Path dataDir, Clock clock,
                          int replicationFactor, long deadAfterMillis, long snapshotEvery, int shardCount,
                          RaftTransport transport, int electionTimeoutMillis) {
        this.nodeId = nodeId;
        this.clock = clock;
        this.transport = transport;
        this.shardCount = shardCount;
        this.replicationFactor = replicationFactor;
        this.peers = peers;
        this.deadAfterMillis = deadAfterMillis;
        this.stateMachine = new MetadataStateMachine(clock, new LivenessTracker(clock, deadAfterMillis), replicationFactor);
        stateMachine.onLoadReported(this::observeLoad);
        try {
            Files.createDirectories(dataDir);
            this.server = transport.server()
                    .setServerId(RaftPeerId.valueOf(nodeId))
                    .setGroup(peers.group())
                    .setStateMachine(stateMachine)
                    .setProperties(RatisSettings.server(dataDir, bindHost, peers.port(nodeId), snapshotEvery,
                            electionTimeoutMillis))
                    .setOption(RaftStorage.StartupOption.RECOVER)
                    .build();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create metadata server " + nodeId, e);
        }
        this.leaderTasks = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "sluice-metadata-leader-" + nodeId);
            t.setDaemon(true);
            return t;
        });
    }

    /** The Ratis settings its metadata group run with (for tests). */
    RaftProperties raftProperties() {
        return server.getProperties();
    }

    public void start() throws IOException {
        server.start();
        selfClient = new MetadataClient(peers, transport);
        long every = Math.max(100, Math.min(1_000, deadAfterMillis / 4)); // cheap: the leader reads its own image
        leaderTasks.scheduleWithFixedDelay(this::replaceDeadNodes, every, every, TimeUnit.MILLISECONDS);
        leaderTasks.scheduleWithFixedDelay(this::initReceiptSecret, 0, 200, TimeUnit.MILLISECONDS);
        if (splitPolicy.settings().enabled()) {
            leaderTasks.scheduleWithFixedDelay(this::splitHotQueues, 5, 5, TimeUnit.SECONDS);
        }
        LOG.info("metadata node {} started, group {}", nodeId, peers.addresses());
    }

    /**
     * Leader only, until done: give the cluster its receipt secret (32 random bytes). The first committed proposal
     * wins; a repeat after a leader change is a no-op.
     */
    private void initReceiptSecret() {
        try {
            if (stateMachine.image().receiptSecret() != null || !isLeader()) {
                return;
            }
            byte[] secret = new byte[32];
            new SecureRandom().nextBytes(secret);
            selfClient.submit(new MetadataCommand.InitReceiptSecret(Base64.getEncoder().encodeToString(secret)));
            LOG.info("proposed the cluster's receipt secret (the first committed proposal wins)");
        } catch (RuntimeException e) {
            LOG.warn("could not set the receipt secret yet: {}", e.getMessage());
        }
    }

    /** Leader only: create the configured shards, and move replicas off nodes that stopped heartbeating. */
    private void replaceDeadNodes() {
        try {
            if (!isLeader()) {
                return;
            }
            ClusterImage image = stateMachine.image();
            if (image.shards().size() < shardCount
                    && stateMachine.liveness().alive(image.nodes().keySet()).size() >= replicationFactor) {
                LOG.info("creating shards: {} of {} exist", image.shards().size(), shardCount);
                selfClient.submit(new MetadataCommand.EnsureShards(shardCount));
                image = stateMachine.image();
            }
            for (String node : image.nodes().keySet()) {
                boolean holdsReplicas = image.partitions().values().stream().anyMatch(a -> a.replicas().contains(node))
                        || !image.shardsOf(node).isEmpty();
                if (holdsReplicas && !stateMachine.liveness().isAlive(node)) {
                    LOG.warn("backend {} silent for over {} ms: re-replicating its partitions", node, deadAfterMillis);
                    selfClient.submit(new MetadataCommand.ReplaceDeadNode(node));
                }
            }
        } catch (RuntimeException e) {
            LOG.warn("dead-node check failed", e);
        }
    }

    /**
     * Lets the leader raise hot standard queues' partition counts by itself ({@link SplitPolicy}). Call before
     * {@link #start()}.
     */
    public void autoSplit(SplitPolicy.Settings settings) {
        splitPolicy = new SplitPolicy(settings);
    }

    /** Partitions' load as their primaries report it (with backends' heartbeats; in-process in {@code sluice dev}). */
    public void observeLoad(Collection<PartitionLoad> loads) {
        SplitPolicy policy = splitPolicy;
        synchronized (policy) {
            policy.observe(clock.nowMillis(), loads);
        }
    }

    /** Queues this member split while it led. */
    public long splits() {
        return splits.get();
    }

    /** Leader only: raise the partition count of each queue the policy finds hot. */
    private void splitHotQueues() {
        try {
            checkForSplits();
        } catch (RuntimeException e) { // a periodic task: an exception would cancel it for good
            LOG.warn("auto-split check failed", e);
        }
    }

    private void checkForSplits() {
        boolean leading = isLeader();
        boolean newlyLeading = leading && !ledAtLastSplitCheck;
        ledAtLastSplitCheck = leading;
        if (!leading) {
            return;
        }
        SplitPolicy policy = splitPolicy;
        List<SplitPolicy.Split> decided;
        synchronized (policy) {
            if (newlyLeading) {
                policy.becameLeader(stateMachine.image(), clock.nowMillis());
            }
            decided = policy.decide(stateMachine.image(), clock.nowMillis());
        }
        for (SplitPolicy.Split split : decided) {
            try {
                MetadataResult r = selfClient.submit(new MetadataCommand.RaisePartitions(split.queue(), split.to()));
                if (r.status() != MetadataResult.Status.OK) {
                    LOG.warn("could not split queue {}: {} {}", split.queue(), r.status(), r.message());
                    continue;
                }
                synchronized (policy) {
                    policy.splitDone(split, clock.nowMillis());
                }
                splits.incrementAndGet();
                LOG.info("split queue {}: {} -> {} partitions ({})", split.queue(), split.from(), split.to(),
                        split.reason());
            } catch (RuntimeException e) {
                LOG.warn("could not split queue {} (retried at the next check)", split.queue(), e);
            }
        }
    }

    /** Submits a command to the group (through whichever member leads). */
    public MetadataResult submit(MetadataCommand command) {
        return selfClient.submit(command);
    }

    public String nodeId() {
        return nodeId;
    }

    /** This member's copy of the catalog (may trail the leader by what it has not applied yet). */
    public ClusterImage image() {
        return stateMachine.image();
    }

    /** Called with every new image this member applies (in-process caches). */
    public void addImageListener(Consumer<ClusterImage> listener) {
        stateMachine.addListener(listener);
    }

    public boolean isLeader() {
        try {
            return server.getDivision(MetadataPeers.GROUP_ID).getInfo().isLeader();
        } catch (IOException e) {
            return false;
        }
    }

    /** The current leader's id as this member knows it, or null. */
    public String leaderId() {
        try {
            RaftPeerId leader = server.getDivision(MetadataPeers.GROUP_ID).getInfo().getLeaderId();
            return leader == null ? null : leader.toString();
        } catch (IOException e) {
            return null;
        }
    }

    public MetadataPeers peers() {
        return peers;
    }

    /** Last heartbeat time of a backend as the leader saw it (-1 if none or not leader). */
    public long lastHeartbeatMillis(String backend) {
        return stateMachine.liveness().lastBeatMillis(backend);
    }

    /** {@link LeaderHealth} as the group's leader answers it (a read through the group: this member may not lead). */
    public LeaderHealth healthOnLeader() {
        return selfClient.health();
    }

    /** {@link LeaderHealth} from this member's own memory while it leads the group, else null. */
    public LeaderHealth localHealth() {
        if (!isLeader()) {
            return null;
        }
        LivenessTracker liveness = stateMachine.liveness();
        return new LeaderHealth(nodeId, Set.copyOf(liveness.alive(image().nodes().keySet())),
                liveness.shardReports());
    }

    public boolean isBackendAlive(String backend) {
        return stateMachine.liveness().isAlive(backend);
    }

    @Override
    public void close() {
        leaderTasks.shutdownNow();
        if (selfClient != null) {
            selfClient.close();
        }
        try {
            server.close();
        } catch (IOException e) {
            LOG.warn("closing metadata server {}", nodeId, e);
        }
    }
}
