package io.sluice.backend.raft;

import io.sluice.backend.engine.ConfigurationWaits;
import io.sluice.backend.shard.LeaderClock;
import io.sluice.common.Clock;
import io.sluice.common.raft.RaftTransport;
import io.sluice.common.raft.RatisSettings;
import io.sluice.partition.Effect;
import io.sluice.partition.MoveTask;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionId;
import io.sluice.partition.PartitionOutcome;
import io.sluice.partition.PartitionService;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.Predicate;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.exceptions.AlreadyExistsException;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.storage.RaftStorage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A backend: one Ratis server (one port, one thread pool) hosting many shard groups (multi-raft), each with its own
 * {@link ShardStateMachine} and RocksDB under {@code dataDir/shards/<group uuid>}. It starts with the groups it
 * already had (recovered from disk) and joins new ones when the catalog assigns them ({@link #join}). Every member
 * of a new group joins on its own as soon as it sees the assignment, so the adds happen in parallel, as Ratis
 * needs (a lone member would campaign against peers that lack the group).
 */
public final class BackendServer implements AutoCloseable, LocalLeaders {
    private static final Logger LOG = LoggerFactory.getLogger(BackendServer.class);

    private final String nodeId;
    private final Path dataDir;
    private final RaftServer server;
    private final RaftTransport transport;
    private final Set<RaftGroupId> joining = ConcurrentHashMap.newKeySet();
    private final Map<RaftGroupId, ShardStateMachine> machines = new ConcurrentHashMap<>();
    private final Map<RaftGroupId, ShardClient> sweepers = new ConcurrentHashMap<>();
    private final List<PartitionService.EffectListener> effectListeners =
            new CopyOnWriteArrayList<>();
    private final LeaderClock clock;
    private final ShardLeadership leadership;
    private final ShardMembership membership;

    /**
     * @param bindHost      the address its Raft server binds
     * @param snapshotEvery Raft entries of a shard between snapshots (after each, its log is purged up to it)
     */
    public BackendServer(String nodeId, String bindHost, int raftPort, Path dataDir, Clock clock, long snapshotEvery) {
        this(nodeId, bindHost, raftPort, dataDir, clock, snapshotEvery, RaftTransport.PLAINTEXT);
    }

    /** @param transport how its Raft server and its admin clients speak (mutual TLS in a cluster) */
    public BackendServer(String nodeId, String bindHost, int raftPort, Path dataDir, Clock clock, long snapshotEvery,
                         RaftTransport transport) {
        this(nodeId, bindHost, raftPort, dataDir, new LeaderClock(clock), snapshotEvery, transport);
    }

    /** @param clock the time this backend's shard leaders stamp, shared by all its shards */
    public BackendServer(String nodeId, String bindHost, int raftPort, Path dataDir, LeaderClock clock,
                         long snapshotEvery, RaftTransport transport) {
        this(nodeId, bindHost, raftPort, dataDir, clock, snapshotEvery, transport,
                RatisSettings.DEFAULT_ELECTION_TIMEOUT_MS);
    }

    /** @param electionTimeoutMillis its shard groups' shortest election timeout ({@link RatisSettings}) */
    public BackendServer(String nodeId, String bindHost, int raftPort, Path dataDir, LeaderClock clock,
                         long snapshotEvery, RaftTransport transport, int electionTimeoutMillis) {
        this.nodeId = nodeId;
        this.clock = clock;
        this.dataDir = dataDir;
        this.transport = transport;
        try {
            Files.createDirectories(dataDir);
            this.server = transport.server()
                    .setServerId(RaftPeerId.valueOf(nodeId))
                    .setStateMachineRegistry(gid -> machines.compute(gid, (g, m) -> m != null && !m.closed() ? m
                            : withListeners(new ShardStateMachine(dataDir.resolve("shards")
                                    .resolve(g.getUuid().toString()), clock))))
                    .setProperties(RatisSettings.server(dataDir.resolve("raft"), bindHost, raftPort, snapshotEvery,
                            electionTimeoutMillis))
                    .setOption(RaftStorage.StartupOption.RECOVER)
                    .build();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create backend " + nodeId, e);
        }
        this.leadership = new ShardLeadership(nodeId, server, transport, clock);
        this.membership = new ShardMembership(nodeId, server, transport, leadership);
    }

    /** Where its shard leaderships go: handed back to preferred replicas, given up while its clock is off. */
    public ShardLeadership leadership() {
        return leadership;
    }

    /** Its led shards' membership changes towards the catalog's replicas. */
    public ShardMembership membership() {
        return membership;
    }

    private ShardStateMachine withListeners(ShardStateMachine machine) {
        effectListeners.forEach(machine.core()::addListener);
        machine.core().setConfigurationRequests(configRequests);
        return machine;
    }

    private volatile ConfigurationWaits.Requests configRequests =
            ConfigurationWaits.Requests.NONE;

    /**
     * Who configures a partition from the catalog at once when a frontend waits for it (the agent's reconciler), on
     * the shards hosted now and on those it joins later. Called on a Ratis thread: it must not block.
     */
    public void setConfigurationRequests(ConfigurationWaits.Requests requests) {
        configRequests = requests;
        machines.values().forEach(m -> m.core().setConfigurationRequests(requests));
    }

    /**
     * Registers for the effects of every command a shard hosted here applies while this backend leads it (its
     * dead-letter hand-offs), on the shards hosted now and on those it joins later. Called on the applying thread:
     * the listener must not block.
     */
    public void addEffectListener(PartitionService.EffectListener listener) {
        effectListeners.add(listener);
        machines.values().forEach(m -> m.core().addListener(listener));
    }

    /** The pending dead-letter hand-offs of the shards this backend leads now (its partitions as their primary). */
    public List<Effect.DeadLetter> pendingDeadLetters() {
        return fromLedShards(m -> m.core().pendingDeadLetters());
    }

    /** What {@code read} gives for each shard this backend is the ready leader of now, in one list. */
    private <T> List<T> fromLedShards(Function<ShardStateMachine, List<T>> read) {
        List<T> out = new ArrayList<>();
        for (Map.Entry<RaftGroupId, ShardStateMachine> e : machines.entrySet()) {
            if (isLeaderReady(e.getKey())) {
                out.addAll(read.apply(e.getValue()));
            }
        }
        return out;
    }

    /** Whether this backend leads the shard holding the partition now (has it open, as the shard's ready leader). */
    public boolean isPrimaryOf(PartitionId partition) {
        for (Map.Entry<RaftGroupId, ShardStateMachine> e : machines.entrySet()) {
            if (e.getValue().core().isOpen(partition)) {
                return isLeaderReady(e.getKey());
            }
        }
        return false;
    }

    /** The move tasks with work to do in the shards this backend leads now. */
    public List<MoveTask.Located> moveTasksToDrive() {
        return fromLedShards(m -> m.core().moveTasksToDrive());
    }

    /** The Ratis settings its shard groups run with (for tests). */
    RaftProperties raftProperties() {
        return server.getProperties();
    }

    public void start() throws IOException {
        server.start();
        LOG.info("backend {} started with {} shard groups", nodeId, hostedGroups().size());
    }

    public String nodeId() {
        return nodeId;
    }

    /** The time this backend's shard leaders stamp, and its offset from the reference. */
    public LeaderClock clock() {
        return clock;
    }

    public Set<RaftGroupId> hostedGroups() {
        Set<RaftGroupId> ids = new HashSet<>();
        server.getGroupIds().forEach(ids::add);
        return ids;
    }

    /**
     * Hosted shard groups whose replica here has failed: Ratis closed it (an exception in its log worker or state
     * machine) while the group is still hosted, so it neither votes nor acknowledges; the shard runs a replica short
     * until this process restarts and recovers it. The backend is then not ready.
     */
    public Set<RaftGroupId> failedGroups() {
        Set<RaftGroupId> failed = new HashSet<>();
        for (RaftGroupId id : hostedGroups()) {
            ShardStateMachine m = machines.get(id);
            if (m != null && m.closed()) {
                failed.add(id);
            }
        }
        return failed;
    }

    /** The state machine of a hosted shard (for listeners and status), or null. */
    public ShardStateMachine shard(RaftGroupId id) {
        return machines.get(id);
    }

    /** Whether this backend leads the shard now. */
    public boolean isLeader(RaftGroupId id) {
        try {
            return server.getDivision(id).getInfo().isLeader();
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * Deletes the stores of shard groups Raft no longer hosts here (removed by the leader after a committed
     * membership change) and that the catalog no longer assigns to this backend.
     */
    public void deleteDroppedStores(Predicate<RaftGroupId> assignedHere) {
        Set<RaftGroupId> hosted = hostedGroups();
        for (RaftGroupId id : List.copyOf(machines.keySet())) {
            ShardStateMachine candidate = machines.get(id);
            // closed by Ratis (the group was removed here), not hosted, not assigned: a live or starting group never
            if (candidate != null && candidate.closed() && !hosted.contains(id) && !assignedHere.test(id)
                    && !joining.contains(id)) {
                ShardStateMachine machine = machines.remove(id);
                if (machine != null) {
                    try {
                        machine.deleteStore();
                        LOG.info("backend {} deleted its store of dropped shard group {}", nodeId, id);
                    } catch (IOException e) {
                        LOG.warn("backend {} could not delete the store of {}: {}", nodeId, id, e.getMessage());
                    }
                }
            }
        }
    }

    private final ClientId localClient = ClientId.randomId();
    private final AtomicLong localCalls = new AtomicLong();

    /**
     * Hands a request to the local replica when it leads the group: the same path a request from the network takes
     * once gRPC has decoded it (retry cache, leader checks, append, replication), minus the network and the
     * (de)serialization. Every local request has a call id of its own under this backend's client id.
     */
    @Override
    public CompletableFuture<RaftClientReply> sendIfLeader(
            RaftGroupId group, Message message, boolean readOnly) {
        if (!isLeaderReady(group)) {
            return null;
        }
        RaftClientRequest request = RaftClientRequest.newBuilder()
                .setClientId(localClient).setServerId(server.getId()).setGroupId(group)
                .setCallId(localCalls.incrementAndGet()).setMessage(message)
                .setType(readOnly ? RaftClientRequest.readRequestType()
                        : RaftClientRequest.writeRequestType())
                .build();
        try {
            return server.submitClientRequestAsync(request);
        } catch (IOException e) {
            return null; // the server is not running (closing): the network path reports what is wrong
        }
    }

    @Override
    public boolean leads(RaftGroupId group) {
        return isLeaderReady(group);
    }

    @Override
    public boolean hosts(RaftPeerId peer) {
        return server.getId().equals(peer);
    }

    /** Whether this backend leads the shard and has committed an entry of its term (its state is current). */
    public boolean isLeaderReady(RaftGroupId id) {
        try {
            var info = server.getDivision(id).getInfo();
            return info.isLeader() && info.isLeaderReady();
        } catch (IOException e) {
            return false;
        }
    }

    /** The shard's Raft state as this replica sees it, or null if it does not host the group. */
    public ShardHealth health(RaftGroupId id) {
        RaftServer.Division division;
        try {
            division = server.getDivision(id);
        } catch (IOException e) {
            return null;
        }
        return ShardHealth.of(division, nodeId);
    }

    /** Bytes on disk of a hosted shard: its RocksDB store, its Raft log and its snapshots. */
    public Map<String, Long> diskUsage(RaftGroupId id) {
        String uuid = id.getUuid().toString();
        Path raftDir = dataDir.resolve("raft").resolve(uuid);
        Map<String, Long> out = new LinkedHashMap<>();
        out.put("rocksdb", ShardSnapshots.sizeOf(dataDir.resolve("shards").resolve(uuid)));
        out.put("raft_log", ShardSnapshots.sizeOf(raftDir.resolve("current")));
        out.put("snapshots", ShardSnapshots.sizeOf(raftDir.resolve("sm")));
        return out;
    }

    /** Joins a shard group this backend is a member of; a no-op if it already hosts it. */
    public void join(RaftGroup group) {
        join(group, false);
    }

    /**
     * Starts this backend's replica of {@code group} (whose peers include this backend) with the group's membership:
     * a new shard's replicas elect a leader among themselves. With {@code newcomer} (a replica added to a shard that
     * exists) it starts with no membership instead and waits, never campaigning, until the shard's leader adds it
     * and catches it up. Started with the new membership it would campaign whenever the leader is slower than an
     * election timeout to add it: a one-replica shard's replica would elect itself on an empty log (two leaders of one
     * shard, one of them without its data); with more replicas the leader, not yet counting it a member, answers its
     * pre-vote SHUTDOWN and Ratis closes the replica for good.
     */
    public void join(RaftGroup group, boolean newcomer) {
        ShardStateMachine dropped = machines.get(group.getGroupId());
        if (dropped != null && dropped.closed() && dropped.closedForNanos() < TimeUnit.SECONDS.toNanos(10)) {
            return; // just removed by its leader: a catalog copy that still assigns it here is stale; look again later
        }
        if (hostedGroups().contains(group.getGroupId()) || !joining.add(group.getGroupId())) {
            return;
        }
        try (RaftClient admin = transport.client(group).build()) {
            RaftClientReply reply = admin.getGroupManagementApi(RaftPeerId.valueOf(nodeId))
                    .add(newcomer ? RaftGroup.valueOf(group.getGroupId()) : group);
            if (!reply.isSuccess() && !String.valueOf(reply.getException()).contains("already exist")) {
                throw new IOException(String.valueOf(reply.getException()));
            }
            LOG.info("backend {} joined shard group {}{}", nodeId, group.getGroupId(),
                    newcomer ? " (empty, until its leader adds it)" : "");
        } catch (AlreadyExistsException e) {
            // a concurrent join won
        } catch (IOException e) {
            LOG.warn("backend {} could not join {} yet: {}", nodeId, group.getGroupId(), e.getMessage());
        } finally {
            joining.remove(group.getGroupId());
        }
    }

    /** A client of a hosted shard for this backend's own commands as its leader (sweeps, repairs), or null. */
    private ShardClient ownClient(RaftGroupId gid) {
        try {
            RaftGroup group = server.getDivision(gid).getGroup();
            return sweepers.compute(gid, (id, existing) -> {
                if (existing != null && existing.boundTo(group)) {
                    return existing;
                }
                closeQuietly(existing);
                return new ShardClient(group, 512, RatisSettings.MAX_ENTRY_PAYLOAD_BYTES, 1, Runnable::run, transport,
                        this);
            });
        } catch (IOException ex) {
            return null;
        }
    }

    /** Submits a command to a hosted shard as its leader does for its own housekeeping (the reconciler's repairs). */
    public CompletableFuture<PartitionOutcome> submit(
            RaftGroupId gid, PartitionId partition, PartitionCommand command) {
        ShardClient client = ownClient(gid);
        return client == null ? CompletableFuture.failedFuture(new IllegalStateException(
                "shard group " + gid + " is not hosted here")) : client.submit(partition, command);
    }

    private static void closeQuietly(AutoCloseable c) {
        if (c != null) {
            try {
                c.close();
            } catch (Exception e) {
                // replaced anyway
            }
        }
    }

    /**
     * Drops a hosted shard group this backend is no longer a replica of (the catalog replaced it), with its data, but
     * only once the group's Raft membership, as this replica knows it, no longer includes it: a backend that was
     * merely cut off (and replaced meanwhile) keeps its copy until the leader's membership change reached it, so the
     * old majority can still commit that change.
     */
    public void leave(RaftGroupId id) {
        if (!hostedGroups().contains(id)) {
            return;
        }
        try {
            RaftServer.Division division = server.getDivision(id);
            var conf = division.getRaftConf();
            if (conf.getCurrentPeers().stream().anyMatch(p -> p.getId().toString().equals(nodeId))
                    || !conf.getPreviousPeers().isEmpty()
                    || conf.getLogEntryIndex() > division.getRaftLog().getLastCommittedIndex()) {
                // still a member, or the change that drops it is not final yet (joint consensus, or not known to be
                // committed here): the old majority may still need this copy
                return;
            }
        } catch (IOException | RuntimeException e) {
            LOG.debug("backend {} cannot tell whether it may leave {} yet: {}", nodeId, id, e.toString());
            return;
        }
        try (RaftClient admin = transport.client(RaftGroup.valueOf(id, server.getPeer())).build()) { // to itself
            admin.getGroupManagementApi(RaftPeerId.valueOf(nodeId)).remove(id, true, false);
            ShardStateMachine machine = machines.remove(id);
            LOG.info("backend {} left shard group {} (replaced in the catalog)", nodeId, id);
            if (machine != null) {
                machine.deleteStore();
            }
        } catch (IOException e) {
            LOG.warn("backend {} could not leave {} yet: {}", nodeId, id, e.getMessage());
        }
    }

    @Override
    public void close() {
        sweepers.values().forEach(BackendServer::closeQuietly);
        try {
            server.close();
        } catch (IOException e) {
            LOG.warn("closing backend {}", nodeId, e);
        }
    }
}
