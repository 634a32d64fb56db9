package io.sluice.backend.raft;

import io.sluice.common.Clock;
import io.sluice.common.raft.RaftTransport;
import io.sluice.common.raft.RatisSettings;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionId;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.exceptions.AlreadyExistsException;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.util.TimeDuration;
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
    private final java.util.Map<RaftGroupId, ShardStateMachine> machines = new ConcurrentHashMap<>();
    private final java.util.Map<RaftGroupId, ShardClient> sweepers = new ConcurrentHashMap<>();
    private final List<io.sluice.partition.PartitionService.EffectListener> effectListeners =
            new java.util.concurrent.CopyOnWriteArrayList<>();
    private final LeaderClock clock;
    /** Replicas dropped by a committed membership change that could not be told yet (this backend led it). */
    private final java.util.Map<RaftGroupId, Set<RaftPeer>> pendingDrops = new ConcurrentHashMap<>();
    /** Since when a shard's membership change has been refused as "in progress" with a stable configuration. */
    private final java.util.Map<RaftGroupId, Long> stuckSince = new ConcurrentHashMap<>();
    private static final long STUCK_STEP_DOWN_NANOS = TimeUnit.SECONDS.toNanos(30);

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
    }

    private ShardStateMachine withListeners(ShardStateMachine machine) {
        effectListeners.forEach(machine::addListener);
        machine.setConfigurationRequests(configRequests);
        return machine;
    }

    private volatile io.sluice.backend.engine.ConfigurationWaits.Requests configRequests =
            io.sluice.backend.engine.ConfigurationWaits.Requests.NONE;

    /**
     * Who configures a partition from the catalog at once when a frontend waits for it (the agent's reconciler), on
     * the shards hosted now and on those it joins later. Called on a Ratis thread: it must not block.
     */
    public void setConfigurationRequests(io.sluice.backend.engine.ConfigurationWaits.Requests requests) {
        configRequests = requests;
        machines.values().forEach(m -> m.setConfigurationRequests(requests));
    }

    /**
     * Registers for the effects of every command a shard hosted here applies while this backend leads it (its
     * dead-letter hand-offs), on the shards hosted now and on those it joins later. Called on the applying thread:
     * the listener must not block.
     */
    public void addEffectListener(io.sluice.partition.PartitionService.EffectListener listener) {
        effectListeners.add(listener);
        machines.values().forEach(m -> m.addListener(listener));
    }

    /** The pending dead-letter hand-offs of the shards this backend leads now (its partitions as their primary). */
    public List<io.sluice.partition.Effect.DeadLetter> pendingDeadLetters() {
        return fromLedShards(ShardStateMachine::pendingDeadLetters);
    }

    /** What {@code read} gives for each shard this backend is the ready leader of now, in one list. */
    private <T> List<T> fromLedShards(java.util.function.Function<ShardStateMachine, List<T>> read) {
        List<T> out = new java.util.ArrayList<>();
        for (Map.Entry<RaftGroupId, ShardStateMachine> e : machines.entrySet()) {
            if (isLeaderReady(e.getKey())) {
                out.addAll(read.apply(e.getValue()));
            }
        }
        return out;
    }

    /** Whether this backend leads the shard holding the partition now (has it open, as the shard's ready leader). */
    public boolean isPrimaryOf(io.sluice.partition.PartitionId partition) {
        for (Map.Entry<RaftGroupId, ShardStateMachine> e : machines.entrySet()) {
            if (e.getValue().isOpen(partition)) {
                return isLeaderReady(e.getKey());
            }
        }
        return false;
    }

    /** The move tasks with work to do in the shards this backend leads now. */
    public List<io.sluice.partition.MoveTask.Located> moveTasksToDrive() {
        return fromLedShards(ShardStateMachine::moveTasksToDrive);
    }

    /** The Ratis settings its shard groups run with (for tests). */
    org.apache.ratis.conf.RaftProperties raftProperties() {
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
     * After a committed membership change, tells each dropped replica to remove the group (it may never learn of
     * the commit itself: the leader stops replicating to it); one that is down keeps an orphan copy until removed by
     * hand. This backend itself, if dropped, removes its own.
     */
    private void tellToDrop(RaftGroupId id, java.util.List<RaftPeer> dropped) {
        for (RaftPeer peer : dropped) {
            if (peer.getId().toString().equals(nodeId)) {
                continue; // never happens: a leader hands its leadership over before a change removes it (reconfigure)
            }
            try (RaftClient admin = transport.client(RaftGroup.valueOf(id, peer), 5_000)
                    .setRetryPolicy(RetryPolicies.noRetry()).build()) {
                RaftClientReply reply = admin.getGroupManagementApi(peer.getId()).remove(id, true, false);
                if (!reply.isSuccess() && !String.valueOf(reply.getException()).contains("not found")) {
                    throw new IOException(String.valueOf(reply.getException()));
                }
                LOG.info("backend {} told {} to drop its copy of shard group {}", nodeId, peer.getId(), id);
                pendingDrops.computeIfPresent(id, (g, peers) -> {
                    peers.remove(peer);
                    return peers.isEmpty() ? null : peers;
                });
            } catch (IOException e) {
                // down or unreachable: told again on every pass while this backend leads (a restart forgets)
                pendingDrops.computeIfAbsent(id, g -> ConcurrentHashMap.newKeySet()).add(peer);
                LOG.warn("backend {} could not tell {} to drop shard group {} yet: {}", nodeId, peer.getId(), id,
                        e.getMessage());
            }
        }
    }

    private void retryDrops(RaftGroupId id) {
        Set<RaftPeer> pending = pendingDrops.get(id);
        if (pending != null && !pending.isEmpty()) {
            tellToDrop(id, List.copyOf(pending));
        }
    }

    /**
     * Deletes the stores of shard groups Raft no longer hosts here (removed by the leader after a committed
     * membership change) and that the catalog no longer assigns to this backend.
     */
    public void deleteDroppedStores(java.util.function.Predicate<RaftGroupId> assignedHere) {
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

    private final org.apache.ratis.protocol.ClientId localClient = org.apache.ratis.protocol.ClientId.randomId();
    private final java.util.concurrent.atomic.AtomicLong localCalls = new java.util.concurrent.atomic.AtomicLong();

    /**
     * Hands a request to the local replica when it leads the group: the same path a request from the network takes
     * once gRPC has decoded it (retry cache, leader checks, append, replication), minus the network and the
     * (de)serialization. Every local request has a call id of its own under this backend's client id.
     */
    @Override
    public java.util.concurrent.CompletableFuture<org.apache.ratis.protocol.RaftClientReply> sendIfLeader(
            RaftGroupId group, org.apache.ratis.protocol.Message message, boolean readOnly) {
        if (!isLeaderReady(group)) {
            return null;
        }
        org.apache.ratis.protocol.RaftClientRequest request = org.apache.ratis.protocol.RaftClientRequest.newBuilder()
                .setClientId(localClient).setServerId(server.getId()).setGroupId(group)
                .setCallId(localCalls.incrementAndGet()).setMessage(message)
                .setType(readOnly ? org.apache.ratis.protocol.RaftClientRequest.readRequestType()
                        : org.apache.ratis.protocol.RaftClientRequest.writeRequestType())
                .build();
        try {
            return server.submitClientRequestAsync(request);
        } catch (IOException e) {
            return null; // the server is not running (closing): the network path reports what is wrong
        }
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
        var info = division.getInfo();
        boolean leader = info.isLeader() && info.isLeaderReady(); // a new leader counts once it committed its term
        long applied = info.getLastAppliedIndex();
        if (!leader) {
            return new ShardHealth(false, info.getLeaderId() != null, 0, 0, Map.of(), applied, java.util.Set.of(),
                    false);
        }
        // members of the current configuration (voters), not peers still being caught up for a membership change
        var conf = division.getRaftConf();
        java.util.Set<String> members = new java.util.TreeSet<>();
        conf.getCurrentPeers().forEach(p -> members.add(p.getId().toString()));
        long commit = division.getRaftLog().getLastCommittedIndex();
        Map<String, Long> heardAgo = new java.util.HashMap<>();
        var role = info.getRoleInfoProto();
        if (role.hasLeaderInfo()) {
            role.getLeaderInfo().getFollowerInfoList().forEach(f -> heardAgo.put(
                    RaftPeerId.valueOf(f.getId().getId()).toString(), f.getLastRpcElapsedTimeMs()));
        }
        Map<String, Long> lag = new java.util.TreeMap<>();
        int inSync = members.contains(nodeId) ? 1 : 0; // the leader itself
        for (var c : division.getCommitInfos()) {
            String peer = RaftPeerId.valueOf(c.getServer().getId()).toString();
            if (peer.equals(nodeId) || !members.contains(peer)) {
                continue;
            }
            long behind = Math.max(0, commit - c.getCommitIndex());
            lag.put(peer, behind);
            Long heard = heardAgo.get(peer);
            if (heard != null && heard <= ShardHealth.IN_SYNC_HEARD_MILLIS && behind <= ShardHealth.IN_SYNC_MAX_LAG) {
                inSync++;
            }
        }
        boolean changing = !conf.getPreviousPeers().isEmpty() || conf.getLogEntryIndex() > commit;
        return new ShardHealth(true, true, members.size(), inSync, lag, applied, members, changing);
    }

    /** Bytes on disk of a hosted shard: its RocksDB store, its Raft log and its snapshots. */
    public Map<String, Long> diskUsage(RaftGroupId id) {
        String uuid = id.getUuid().toString();
        Path raftDir = dataDir.resolve("raft").resolve(uuid);
        Map<String, Long> out = new java.util.LinkedHashMap<>();
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
     * a new shard's replicas elect a leader among themselves; a replica added to a shard that exists is caught up by
     * the shard's leader once that leader changes the membership (the others hold the log and refuse it their votes).
     * With {@code newcomer} it starts with no membership instead and waits, never campaigning, until the shard's
     * leader adds it: for a one-replica shard moved here, which started as the group's only member would elect itself
     * on an empty log (two leaders of one shard, one of them without its data).
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

    /**
     * Retention and window sweeps, done by each shard's leader for its own partitions (only those an {@code Expire}
     * would change), through the shard's log like every other state change. Returns the commands submitted.
     */
    public int sweep(long nowMillis) {
        int submitted = 0;
        for (Map.Entry<RaftGroupId, ShardStateMachine> e : machines.entrySet()) {
            if (!isLeader(e.getKey())) {
                continue;
            }
            List<PartitionId> due = e.getValue().partitionsToSweep(nowMillis);
            if (due.isEmpty()) {
                continue;
            }
            ShardClient client = ownClient(e.getKey());
            if (client == null) {
                continue; // the group went away meanwhile
            }
            for (PartitionId id : due) {
                client.submit(id, new PartitionCommand.Expire(1000));
                submitted++;
            }
        }
        return submitted;
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
    public java.util.concurrent.CompletableFuture<io.sluice.partition.PartitionOutcome> submit(
            RaftGroupId gid, PartitionId partition, PartitionCommand command) {
        ShardClient client = ownClient(gid);
        return client == null ? java.util.concurrent.CompletableFuture.failedFuture(new IllegalStateException(
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
     * The next membership on the way from {@code current} to {@code target}: the target itself, unless it adds at
     * least as many replicas as it keeps (a one-replica shard moved, say), which Ratis refuses in one change (an
     * endless election could follow, RATIS-1912); then the current members plus one of the new ones, and the rest on
     * the following calls.
     */
    static java.util.List<RaftPeer> nextMembership(java.util.Collection<RaftPeer> current,
                                                   java.util.Collection<RaftPeer> target) {
        java.util.Set<RaftPeerId> currentIds = new java.util.HashSet<>();
        current.forEach(p -> currentIds.add(p.getId()));
        java.util.List<RaftPeer> added = target.stream().filter(p -> !currentIds.contains(p.getId()))
                .toList();
        long kept = target.size() - added.size();
        if (added.isEmpty() || added.size() < kept) {
            return new java.util.ArrayList<>(target);
        }
        java.util.List<RaftPeer> step = new java.util.ArrayList<>(current);
        step.add(added.get(0));
        return step;
    }

    /**
     * As the shard's leader, makes the group's Raft membership {@code target}'s (the catalog's replicas) if it differs:
     * a replica the catalog replaced is removed and its replacement added; Ratis catches the newcomer up from the log
     * or a snapshot before counting it. Returns whether a change was requested. Blocking: call from an agent thread.
     */
    public boolean reconfigure(RaftGroup target) {
        RaftGroupId id = target.getGroupId();
        try {
            var division = server.getDivision(id);
            if (!division.getInfo().isLeader()) {
                return false;
            }
            retryDrops(id);
            java.util.List<RaftPeer> before = java.util.List.copyOf(division.getRaftConf().getCurrentPeers());
            java.util.Set<String> current = ShardClient.members(before);
            java.util.Set<String> wanted = ShardClient.members(target.getPeers());
            if (!division.getRaftConf().getPreviousPeers().isEmpty()) { // a change under way
                return false;
            }
            if (current.equals(wanted)) {
                return equalPriorities(division, before);
            }
            // to this leader, through the current group (the target's peers may not include it, or be empty yet)
            try (RaftClient admin = transport.client(division.getGroup(), 10_000).setLeaderId(division.getId())
                    .setRetryPolicy(RetryPolicies.retryUpToMaximumCountWithFixedSleep(2,
                            TimeDuration.valueOf(500, TimeUnit.MILLISECONDS)))
                    .build()) { // bounded: the next agent tick tries again
                java.util.List<RaftPeer> step = nextMembership(before, target.getPeers());
                if (step.stream().noneMatch(p -> p.getId().equals(division.getId()))) {
                    // A Ratis 3.2.0 leader that commits its own removal closes itself from its own state thread, and
                    // here it never finished closing: removing its group then hung (seen moving a one-replica shard;
                    // ratis-notes.md lists a leader step-down deadlock fixed in 3.2.1, RATIS-2345). So it hands the
                    // leadership to a member that stays, which makes the change with this backend a follower (then
                    // told to drop its copy).
                    RaftPeer heir = step.stream().filter(p -> before.stream().anyMatch(b -> b.getId().equals(p.getId())))
                            .findFirst().orElse(null);
                    if (heir == null) {
                        return false;
                    }
                    RaftClientReply handed = admin.admin().transferLeadership(heir.getId(), 10_000);
                    LOG.info("backend {} hands the leadership of shard group {} to {} before leaving it: {}", nodeId,
                            id, heir.getId(), handed.isSuccess() ? "done" : handed.getException());
                    return handed.isSuccess();
                }
                RaftClientReply reply = admin.admin().setConfiguration(step);
                LOG.info("backend {} changed the members of shard group {} from {} to {}{}: {}", nodeId, id, current,
                        ShardClient.members(step), step.size() == wanted.size() ? "" : " (on the way to " + wanted + ")",
                        reply.isSuccess() ? "done" : reply.getException());
                if (reply.isSuccess()) { // committed: the dropped replicas' copies are no longer needed
                    stuckSince.remove(id);
                    java.util.Set<String> wantedIds = new java.util.HashSet<>();
                    step.forEach(p -> wantedIds.add(p.getId().toString()));
                    tellToDrop(id, before.stream().filter(p -> !wantedIds.contains(p.getId().toString())).toList());
                } else {
                    unstick(id, reply.getException());
                }
                return reply.isSuccess();
            }
        } catch (IOException e) {
            LOG.warn("backend {} could not change the members of {} yet: {}", nodeId, id, e.getMessage());
            unstick(id, e);
            return false;
        }
    }

    /**
     * Groups made by older releases gave their first replica Raft priority 1. A candidate then waits out an election
     * timeout, in the pre-vote and again in the vote, for a higher-priority member that does not answer: a partitioned
     * preferred leader stalled its shard ~2 s longer than a killed one. Every member now has the same priority and
     * {@link #handBack} spreads the leaderships; this sets an older group's members to equal priorities, once.
     */
    private boolean equalPriorities(RaftServer.Division division, java.util.List<RaftPeer> before) {
        if (before.stream().allMatch(p -> p.getPriority() == 0)) {
            return false;
        }
        java.util.List<RaftPeer> equal = before.stream().map(p -> RaftPeer.newBuilder(p).setPriority(0).build())
                .toList();
        try (RaftClient admin = transport.client(division.getGroup(), 10_000).setLeaderId(division.getId())
                .setRetryPolicy(RetryPolicies.noRetry()).build()) {
            RaftClientReply reply = admin.admin().setConfiguration(equal);
            LOG.info("backend {} gave the members of shard group {} equal Raft priorities: {}", nodeId,
                    division.getGroup().getGroupId(), reply.isSuccess() ? "done" : reply.getException());
            return reply.isSuccess();
        } catch (IOException e) {
            LOG.warn("backend {} could not give the members of {} equal priorities yet: {}", nodeId,
                    division.getGroup().getGroupId(), e.getMessage());
            return false;
        }
    }

    /** A shard's preferred replica as this leader has seen it: answering steadily since, next attempt not before. */
    private static final class HandBackState {
        long steadySince;
        long notBeforeNanos;
        long backoffNanos = HAND_BACK_FIRST_BACKOFF_NANOS;

        HandBackState(long now) {
            steadySince = now;
        }
    }

    private final java.util.Map<RaftGroupId, HandBackState> handBacks = new ConcurrentHashMap<>();
    /** How long the preferred replica must have answered and kept up before the leadership goes back to it. */
    static final long HAND_BACK_STEADY_NANOS = TimeUnit.SECONDS.toNanos(3);
    /** A follower answering within this (the election timeout's order) and this close to the log counts as steady. */
    static final long HAND_BACK_HEARD_MILLIS = 500;
    static final long HAND_BACK_MAX_LAG = 1_000;
    /** Writes wait while a transfer runs: bounded like Ratis' own yield to a higher-priority member. */
    static final long HAND_BACK_TIMEOUT_MILLIS = 500;
    static final long HAND_BACK_FIRST_BACKOFF_NANOS = TimeUnit.SECONDS.toNanos(5);
    static final long HAND_BACK_MAX_BACKOFF_NANOS = TimeUnit.MINUTES.toNanos(5);

    /**
     * As the leader of a shard whose preferred replica (the catalog's first) is another member, and whose members are
     * {@code target}'s (the catalog's: no change to make first), hands the leadership back to it
     * once it has answered this leader within {@link #HAND_BACK_HEARD_MILLIS} and stayed within
     * {@link #HAND_BACK_MAX_LAG} entries of the log for {@link #HAND_BACK_STEADY_NANOS}: this spreads the primaries
     * over the backends after a failover (what Raft priorities did before). The transfer (Ratis' TransferLeadership:
     * the leader holds new writes, waits for the preferred replica to have its whole log, and asks it to start an
     * election at once) is bounded by {@link #HAND_BACK_TIMEOUT_MILLIS}; a failed one is tried again after 5 s,
     * doubling up to 5 minutes. Blocking: call from an agent thread.
     *
     * @return whether the leadership was handed back
     */
    public boolean handBack(RaftGroup target, String preferred) {
        RaftGroupId id = target.getGroupId();
        RaftServer.Division division;
        try {
            division = server.getDivision(id);
        } catch (IOException e) {
            handBacks.remove(id);
            return false;
        }
        var info = division.getInfo();
        var conf = division.getRaftConf();
        if (preferred.equals(nodeId) || !info.isLeader() || !info.isLeaderReady()
                || !conf.getPreviousPeers().isEmpty() // a membership change under way: it goes first
                || !ShardClient.members(conf.getCurrentPeers()).equals(ShardClient.members(target.getPeers()))) {
            handBacks.remove(id);
            return false;
        }
        RaftPeerId heir = RaftPeerId.valueOf(preferred);
        long now = System.nanoTime();
        HandBackState state = handBacks.computeIfAbsent(id, g -> new HandBackState(now));
        if (!steady(division, heir)) {
            state.steadySince = now;
            return false;
        }
        if (now - state.steadySince < HAND_BACK_STEADY_NANOS || now < state.notBeforeNanos) {
            return false;
        }
        try (RaftClient admin = transport.client(division.getGroup(), 5_000).setLeaderId(division.getId())
                .setRetryPolicy(RetryPolicies.noRetry()).build()) {
            RaftClientReply reply = admin.admin().transferLeadership(heir, HAND_BACK_TIMEOUT_MILLIS);
            if (reply.isSuccess()) {
                handBacks.remove(id);
                LOG.info("backend {} handed the leadership of shard group {} back to its preferred replica {}", nodeId,
                        id, preferred);
                return true;
            }
            backOff(state, now, id, preferred, String.valueOf(reply.getException()));
        } catch (IOException e) {
            backOff(state, now, id, preferred, e.getMessage());
        }
        return false;
    }

    private void backOff(HandBackState state, long now, RaftGroupId id, String preferred, String why) {
        state.notBeforeNanos = now + state.backoffNanos;
        LOG.info("backend {} could not hand shard group {} back to {} (next try in {} s): {}", nodeId, id, preferred,
                TimeUnit.NANOSECONDS.toSeconds(state.backoffNanos), why);
        state.backoffNanos = Math.min(HAND_BACK_MAX_BACKOFF_NANOS, state.backoffNanos * 2);
    }

    /** Whether this leader heard from {@code peer} lately and its log is close to the leader's. */
    private static boolean steady(RaftServer.Division division, RaftPeerId peer) {
        var role = division.getInfo().getRoleInfoProto();
        if (!role.hasLeaderInfo()) {
            return false;
        }
        boolean heard = role.getLeaderInfo().getFollowerInfoList().stream().anyMatch(f ->
                RaftPeerId.valueOf(f.getId().getId()).equals(peer)
                        && f.getLastRpcElapsedTimeMs() <= HAND_BACK_HEARD_MILLIS);
        if (!heard) {
            return false;
        }
        long commit = division.getRaftLog().getLastCommittedIndex();
        return division.getCommitInfos().stream().anyMatch(c -> RaftPeerId.valueOf(c.getServer().getId()).equals(peer)
                && commit - c.getCommitIndex() <= HAND_BACK_MAX_LAG);
    }

    /**
     * Ratis (3.2) can leave a leader's membership change staged for good: when a first attempt fails because the
     * newcomer was not running yet (NOPROGRESS), a later attempt may wait for the newcomer's snapshot attempt forever,
     * and every further attempt is refused as "already in progress" while the configuration itself is stable. Seen
     * under a CPU hog in ShardedBackendsIT. A new leader term starts with no staged change, so a leader that has been
     * refused that way for {@link #STUCK_STEP_DOWN_NANOS} steps down (it may well be elected again, afresh).
     */
    private void unstick(RaftGroupId id, Throwable failure) {
        boolean inProgress = false;
        for (Throwable t = failure; t != null && !inProgress; t = t.getCause()) {
            inProgress = t instanceof org.apache.ratis.protocol.exceptions.ReconfigurationInProgressException;
        }
        if (!inProgress) {
            stuckSince.remove(id);
            return;
        }
        long now = System.nanoTime();
        long since = stuckSince.computeIfAbsent(id, g -> now);
        if (now - since < STUCK_STEP_DOWN_NANOS) {
            return;
        }
        stuckSince.remove(id);
        try {
            var division = server.getDivision(id);
            if (!division.getInfo().isLeader() || !division.getRaftConf().getPreviousPeers().isEmpty()) {
                return; // a real change under way (joint consensus), or no longer ours to fix
            }
            LOG.warn("backend {}: the membership change of shard group {} has been refused as 'in progress' for {} s"
                    + " with a stable configuration: stepping down so a new leader term starts it afresh", nodeId, id,
                    TimeUnit.NANOSECONDS.toSeconds(now - since));
            stepDown(division);
        } catch (IOException e) {
            LOG.warn("backend {} could not step down from shard group {}: {}", nodeId, id, e.getMessage());
        }
    }

    /** Hands the leadership of a shard this backend leads to any other replica. */
    private void stepDown(RaftServer.Division division) throws IOException {
        try (RaftClient admin = transport.client(division.getGroup(), 5_000)
                .setRetryPolicy(RetryPolicies.noRetry()).build()) {
            admin.admin().transferLeadership(null, RaftPeerId.valueOf(nodeId), 5_000);
        }
    }

    private final java.util.Map<RaftGroupId, Long> skewStepDowns = new ConcurrentHashMap<>();
    /** A skewed backend steps down from a shard at most this often (its stamps are corrected meanwhile). */
    static final long SKEW_STEP_DOWN_EVERY_NANOS = TimeUnit.SECONDS.toNanos(60);

    /**
     * While this machine's clock is further from the reference than the bound, steps down from every shard it leads,
     * each at most once a minute: the time it stamps is already held to the reference ({@link LeaderClock}), so this
     * only prefers a replica whose clock is sound, and if every clock disagrees with the reference (the reference is
     * the one that is off) leadership does not flap. Called by the backend's agent on each tick.
     *
     * @return the shards it stepped down from
     */
    public int stepDownIfSkewed() {
        if (!clock.skewed()) {
            return 0;
        }
        int steppedDown = 0;
        long now = System.nanoTime();
        for (RaftGroupId id : hostedGroups()) {
            Long last = skewStepDowns.get(id);
            if (!isLeader(id) || (last != null && now - last < SKEW_STEP_DOWN_EVERY_NANOS)) {
                continue;
            }
            skewStepDowns.put(id, now);
            try {
                LOG.warn("backend {}: its clock is {} ms off the reference (bound {} ms): stepping down from shard"
                        + " group {}", nodeId, clock.offsetMillis(), clock.maxSkewMillis(), id);
                stepDown(server.getDivision(id));
                steppedDown++;
            } catch (IOException e) {
                LOG.warn("backend {} could not step down from shard group {}: {}", nodeId, id, e.getMessage());
            }
        }
        return steppedDown;
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
