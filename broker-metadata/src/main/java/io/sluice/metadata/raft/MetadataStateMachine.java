package io.sluice.metadata.raft;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sluice.common.Clock;
import io.sluice.common.Fsync;
import io.sluice.common.raft.LeaderHints;
import io.sluice.common.raft.StateMachineLifecycle;
import io.sluice.metadata.image.ClusterImage;
import io.sluice.metadata.image.MetadataBatch;
import io.sluice.metadata.image.MetadataCommand;
import io.sluice.metadata.image.MetadataDelta;
import io.sluice.metadata.image.MetadataJson;
import io.sluice.metadata.image.MetadataOperations;
import io.sluice.metadata.image.MetadataRecord;
import io.sluice.metadata.image.MetadataResult;
import io.sluice.metadata.image.PartitionLoad;
import io.sluice.metadata.image.ShardReport;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import org.apache.ratis.io.MD5Hash;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftGroupMemberId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.exceptions.StateMachineException;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.raftlog.RaftLog;
import org.apache.ratis.server.storage.FileInfo;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.StateMachineStorage;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.statemachine.impl.SimpleStateMachineStorage;
import org.apache.ratis.statemachine.impl.SingleFileSnapshotInfo;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.util.MD5FileUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The catalog as a Ratis state machine.
 *
 * <ul>
 *   <li>{@link #startTransaction} (leader only) decodes the client's {@link MetadataCommand}, stamps it with the
 *       leader's clock, its live-node view and the replication factor, and decides: {@link MetadataOperations} runs
 *       on the leader's image plus the records of the entries it appended and has not applied yet, and the entry
 *       holds the resulting records and answer ({@link MetadataBatch}). A command that does not decode is refused
 *       here and never reaches the log.</li>
 *   <li>{@link #applyTransaction} (every replica) replays the entry's records, deciding nothing: a release that
 *       changes placement or id choices replays an old log as it was first applied. A batch decided on a view that
 *       another change overtook applies nothing and answers CONFLICT (the client retries). An entry of the older
 *       format (the stamped command itself, written before 2026-12-06) is still run through
 *       {@link MetadataOperations}, as then.</li>
 *   <li>Reads ({@link #query}): {@code image} returns the image; {@code index} returns the image's applied index;
 *       {@code delta <index>} the records applied since that index ({@link MetadataDelta}: the last
 *       {@value #RECENT_RECORDS_KEPT} records are kept in memory, from this replica's start or last snapshot load);
 *       {@code heartbeat <node>} records a backend's
 *       heartbeat (it reaches the leader, which alone tracks liveness) and answers the leader's clock, the
 *       reference backends keep their shard leaders' time near; {@code liveness} the backends the leader holds
 *       alive (one id per line), for the status of a role that is not the leader; {@code health} those and the
 *       latest report of each shard's leader ({@link io.sluice.metadata.image.ShardReport}, sent with heartbeats), as
 *       JSON.</li>
 *   <li>Snapshots are the image as JSON, named by term and index, with an MD5 file.</li>
 * </ul>
 */
class MetadataStateMachine extends BaseStateMachine { // not final: a test delays a decided command on its way to the log
    private static final Logger LOG = LoggerFactory.getLogger(MetadataStateMachine.class);
    static final String QUERY_IMAGE = "image";
    /** The image without access keys: for roles that never verify a signature (backends). */
    static final String QUERY_IMAGE_WITHOUT_SECRETS = "image-without-secrets";
    static final String QUERY_HEARTBEAT = "heartbeat ";
    static final String QUERY_INDEX = "index";
    static final String QUERY_LIVENESS = "liveness";
    static final String QUERY_HEALTH = "health";
    static final String QUERY_DELTA = "delta ";
    static final String QUERY_DELTA_WITHOUT_SECRETS = "delta-without-secrets ";
    /** Records kept for deltas; a role further behind fetches the whole image. */
    static final int RECENT_RECORDS_KEPT = 10_000;

    /** The records one log entry applied. */
    private record Applied(long index, List<MetadataRecord> records) {
    }

    private final SimpleStateMachineStorage storage = new SimpleStateMachineStorage();
    private final Clock clock;
    private final LivenessTracker liveness;
    private final int replicationFactor;
    private final List<Consumer<ClusterImage>> listeners = new CopyOnWriteArrayList<>();
    private volatile Consumer<List<PartitionLoad>> loadReports = loads -> { };
    private volatile ClusterImage image = ClusterImage.EMPTY;
    /** Entries that changed the catalog, oldest first, each after {@link #recentFrom}: what deltas are cut from. */
    private final ArrayDeque<Applied> recent = new ArrayDeque<>();
    /** A delta from any index at or after this one is complete. */
    private long recentFrom;
    private int recentRecords;
    private final int recordsKept;
    /** How the leader decides a command's records: {@link MetadataOperations#execute} (a test may pass another). */
    private final BiFunction<ClusterImage, MetadataCommand.Stamped, MetadataOperations.Outcome> decider;
    /**
     * The leader's view after every batch it appended in this term (its image plus their records, in log order);
     * null until its first append of the term.
     */
    private ClusterImage appended;
    /**
     * The leader's view for its next decision: {@link #appended} plus what it decided and has not appended yet; null
     * when that is nothing more.
     */
    private ClusterImage pending;

    MetadataStateMachine(Clock clock, LivenessTracker liveness, int replicationFactor) {
        this(clock, liveness, replicationFactor, RECENT_RECORDS_KEPT, MetadataOperations::execute);
    }

    MetadataStateMachine(Clock clock, LivenessTracker liveness, int replicationFactor, int recordsKept) {
        this(clock, liveness, replicationFactor, recordsKept, MetadataOperations::execute);
    }

    MetadataStateMachine(Clock clock, LivenessTracker liveness, int replicationFactor, int recordsKept,
                         BiFunction<ClusterImage, MetadataCommand.Stamped, MetadataOperations.Outcome> decider) {
        this.clock = clock;
        this.liveness = liveness;
        this.replicationFactor = replicationFactor;
        this.recordsKept = recordsKept;
        this.decider = decider;
    }

    ClusterImage image() {
        return image;
    }

    void addListener(Consumer<ClusterImage> listener) {
        listeners.add(listener);
    }

    /** Where the partition loads a heartbeat carries go (the leader's auto-split policy). */
    void onLoadReported(Consumer<List<PartitionLoad>> listener) {
        loadReports = listener;
    }

    LivenessTracker liveness() {
        return liveness;
    }

    @Override
    public void initialize(RaftServer server, RaftGroupId groupId, RaftStorage raftStorage) throws IOException {
        super.initialize(server, groupId, raftStorage);
        storage.init(raftStorage);
        load();
        StateMachineLifecycle.started(this);
    }

    @Override
    public void pause() {
        StateMachineLifecycle.paused(this);
    }

    /** After a snapshot from the leader was installed: load it, then apply entries again. */
    @Override
    public void reinitialize() throws IOException {
        load();
        StateMachineLifecycle.resumed(this);
    }

    private void load() throws IOException {
        SingleFileSnapshotInfo snapshot = storage.getLatestSnapshot();
        if (snapshot == null) {
            return;
        }
        Path file = snapshot.getFile().getPath();
        MD5Hash md5 = snapshot.getFile().getFileDigest();
        if (md5 != null) {
            MD5FileUtil.verifySavedMD5(file.toFile(), md5);
        }
        TermIndex last = SimpleStateMachineStorage.getTermIndexFromSnapshotFile(file.toFile());
        ClusterImage loaded = MetadataJson.read(Files.readAllBytes(file), ClusterImage.class);
        synchronized (this) {
            image = loaded.withAppliedIndex(last.getIndex());
            pending = null;
            appended = null;
            updateLastAppliedTermIndex(last);
            recent.clear(); // what came before the snapshot is not known here: deltas start at it
            recentRecords = 0;
            recentFrom = last.getIndex();
        }
        publish(image);
    }

    @Override
    public StateMachineStorage getStateMachineStorage() {
        return storage;
    }

    @Override
    public TransactionContext startTransaction(RaftClientRequest request) throws IOException {
        MetadataCommand command;
        try {
            command = MetadataJson.read(request.getMessage().getContent().toByteArray(), MetadataCommand.class);
        } catch (RuntimeException e) {
            throw new IOException("not a metadata command: " + e.getMessage(), e);
        }
        Decision decision = decide(command);
        return TransactionContext.newBuilder().setStateMachine(this).setClientRequest(request)
                .setStateMachineContext(decision.batch()).setLogData(ByteString.copyFrom(decision.logData())).build();
    }

    /** A leader's decision and the log entry that carries it. */
    record Decision(MetadataBatch batch, byte[] logData) {
    }

    /**
     * The leader's decision on {@code command}: its records and answer, made on the image plus the records of the
     * entries this leader appended and has not applied yet (so that commands decided one after another see each
     * other), chained to the last change of that view. The entry carries the stamped command too, at its top level,
     * where a member of a release before records reads it and runs it as it always did (a rolling upgrade); members
     * of this release apply the records.
     */
    synchronized Decision decide(MetadataCommand command) {
        ClusterImage view = pending != null ? pending : appended != null ? appended : image;
        List<String> live = liveness.alive(view.nodes().keySet());
        MetadataCommand.Stamped stamped = new MetadataCommand.Stamped(command, clock.nowMillis(), live, replicationFactor);
        MetadataOperations.Outcome outcome = decider.apply(view, stamped);
        MetadataBatch batch;
        if (outcome.records().isEmpty()) {
            batch = new MetadataBatch(List.of(), outcome.result(), null, null);
        } else {
            String id = UUID.randomUUID().toString();
            pending = view.replayAll(outcome.records()).withLastChange(id);
            batch = new MetadataBatch(outcome.records(), outcome.result(), view.lastChange(), id);
        }
        ObjectNode entry = MetadataJson.mapper().valueToTree(stamped);
        entry.setAll((ObjectNode) MetadataJson.mapper().valueToTree(batch));
        return new Decision(batch, MetadataJson.write(entry));
    }

    /**
     * Appends a leader's batch only if it follows the last batch appended (log order, under Ratis' append lock): two
     * commands decided concurrently may reach the log in the other order, and a decision made on a view that the log
     * does not end with is refused here (a retryable failure, the leader stays) and decided again by the client's
     * retry. Every batch this leader appends so follows the one before it, and none conflicts when applied.
     */
    @Override
    public TransactionContext preAppendTransaction(TransactionContext trx) throws IOException {
        if (trx.getStateMachineContext() instanceof MetadataBatch batch) {
            appending(batch);
        }
        return trx;
    }

    /** {@link #preAppendTransaction}'s check: {@code batch} is about to be appended to the log. */
    synchronized void appending(MetadataBatch batch) throws StateMachineException {
        if (batch.records().isEmpty()) {
            return;
        }
        if (appended == null) {
            appended = image; // the leader's first append of its term: it is ready, so it applied every entry
        }
        if (!Objects.equals(batch.after(), appended.lastChange())) {
            pending = null; // decided on a view that did not happen: the next decisions start from the log's end
            throw new StateMachineException(OVERTAKEN + ": decided after change " + batch.after()
                    + ", the log ends with change " + appended.lastChange(), false);
        }
        appended = appended.replayAll(batch.records()).withLastChange(batch.id());
    }

    /** How a refused append's failure begins: the client decides again ({@link MetadataClient}). */
    static final String OVERTAKEN = "metadata decision overtaken";

    @Override
    public CompletableFuture<Message> applyTransaction(TransactionContext trx) {
        LogEntryProto entry = trx.getLogEntry();
        TermIndex termIndex = TermIndex.valueOf(entry);
        MetadataResult result;
        synchronized (this) {
            result = apply(termIndex.getIndex(), entry.getStateMachineLogEntry().getLogData().toByteArray());
            updateLastAppliedTermIndex(termIndex);
        }
        publish(image);
        return CompletableFuture.completedFuture(Message.valueOf(ByteString.copyFrom(MetadataJson.write(result))));
    }

    /** Applies log entry {@code index}: a leader's batch of records, or a stamped command of the older format. */
    synchronized MetadataResult apply(long index, byte[] logData) {
        // A log entry we wrote ourselves that does not decode is corruption: let it fail loudly.
        JsonNode entry = MetadataJson.readTree(logData);
        if (entry.has("records")) {
            return apply(index, MetadataJson.convert(entry, MetadataBatch.class));
        }
        MetadataCommand.Stamped stamped = MetadataJson.convert(entry, MetadataCommand.Stamped.class);
        MetadataOperations.Outcome outcome = MetadataOperations.execute(image, stamped);
        return applied(index, outcome.records(), "entry-" + index, outcome.result());
    }

    /** Replays a leader's batch, unless another change overtook the view it was decided on. */
    synchronized MetadataResult apply(long index, MetadataBatch batch) {
        if (!batch.records().isEmpty() && !Objects.equals(batch.after(), image.lastChange())) {
            // never for a batch its leader appended after the one before (preAppendTransaction): a safety net
            image = image.withAppliedIndex(index);
            pending = null; // what this leader decided since builds on a view that did not happen
            appended = null;
            LOG.warn("metadata entry {} was decided after change {}, but the catalog's last change is {}: not applied",
                    index, batch.after(), image.lastChange());
            return MetadataResult.of(MetadataResult.Status.CONFLICT, "decided after change " + batch.after()
                    + ", but the catalog's last change is " + image.lastChange() + ": retry");
        }
        return applied(index, batch.records(), batch.id(), batch.result());
    }

    private MetadataResult applied(long index, List<MetadataRecord> records, String change, MetadataResult result) {
        if (!records.isEmpty()) {
            image = image.replayAll(records).withLastChange(change);
            keepForDeltas(index, records);
        }
        image = image.withAppliedIndex(index);
        if (pending != null && Objects.equals(pending.lastChange(), image.lastChange())) {
            pending = null; // everything this leader decided is applied: the image is its view again
        }
        return result;
    }

    private void keepForDeltas(long index, List<MetadataRecord> records) {
        if (records.isEmpty()) {
            return;
        }
        recent.addLast(new Applied(index, records));
        recentRecords += records.size();
        while (recentRecords > recordsKept && recent.size() > 1) {
            Applied dropped = recent.removeFirst();
            recentRecords -= dropped.records().size();
            recentFrom = dropped.index();
        }
    }

    /** The records applied after {@code fromIndex}, or an unavailable delta when they are no longer all kept. */
    synchronized MetadataDelta delta(long fromIndex) {
        long to = image.appliedIndex();
        if (fromIndex < recentFrom || fromIndex > to) {
            return MetadataDelta.unavailable(fromIndex, to);
        }
        ArrayDeque<Applied> since = new ArrayDeque<>(); // from the newest back: a caught-up copy costs little
        for (Iterator<Applied> it = recent.descendingIterator(); it.hasNext(); ) {
            Applied a = it.next();
            if (a.index() <= fromIndex) {
                break;
            }
            since.addFirst(a);
        }
        List<MetadataRecord> records = new ArrayList<>();
        since.forEach(a -> records.addAll(a.records()));
        return new MetadataDelta(fromIndex, to, records, image.lastChange());
    }

    private void publish(ClusterImage current) {
        listeners.forEach(l -> l.accept(current));
    }

    @Override
    public CompletableFuture<Message> query(Message request) {
        String q = request.getContent().toString(StandardCharsets.UTF_8);
        if (q.equals(QUERY_IMAGE)) {
            return CompletableFuture.completedFuture(Message.valueOf(ByteString.copyFrom(MetadataJson.write(image))));
        }
        if (q.equals(QUERY_IMAGE_WITHOUT_SECRETS)) {
            return CompletableFuture.completedFuture(Message.valueOf(ByteString.copyFrom(
                    MetadataJson.write(image.withoutSecrets()))));
        }
        if (q.equals(QUERY_INDEX)) { // a few bytes: what a cached copy asks before fetching the whole image
            return CompletableFuture.completedFuture(Message.valueOf(Long.toString(image.appliedIndex())));
        }
        if (q.equals(QUERY_LIVENESS)) { // read requests reach the leader: its view, the only one there is
            return CompletableFuture.completedFuture(Message.valueOf(
                    String.join("\n", liveness.alive(image.nodes().keySet()))));
        }
        if (q.equals(QUERY_HEALTH)) { // the same, with the shards' reports (JSON)
            Map<String, Object> health = new LinkedHashMap<>();
            health.put("alive", liveness.alive(image.nodes().keySet()));
            health.put("shards", liveness.shardReports());
            return CompletableFuture.completedFuture(Message.valueOf(ByteString.copyFrom(MetadataJson.write(health))));
        }
        if (q.startsWith(QUERY_DELTA) || q.startsWith(QUERY_DELTA_WITHOUT_SECRETS)) {
            boolean secrets = q.startsWith(QUERY_DELTA);
            long from;
            try {
                from = Long.parseLong(q.substring(secrets ? QUERY_DELTA.length() : QUERY_DELTA_WITHOUT_SECRETS.length()));
            } catch (NumberFormatException e) {
                return CompletableFuture.failedFuture(new IllegalArgumentException("bad delta query"));
            }
            MetadataDelta d = delta(from);
            return CompletableFuture.completedFuture(Message.valueOf(ByteString.copyFrom(
                    MetadataJson.write(secrets ? d : d.withoutSecrets()))));
        }
        if (q.startsWith(QUERY_HEARTBEAT)) {
            // "heartbeat <node>[\n<loads>[\n<shard reports>]]": each later line is one JSON array
            String[] lines = q.substring(QUERY_HEARTBEAT.length()).split("\n", 3);
            String node = lines[0];
            liveness.beat(node);
            if (lines.length > 1 && !lines[1].equals("[]")) { // the loads of the partitions it leads: auto-split
                try {
                    loadReports.accept(List.of(MetadataJson.mapper().readValue(lines[1], PartitionLoad[].class)));
                } catch (IOException | RuntimeException e) {
                    LOG.debug("ignoring a heartbeat's unreadable load report", e);
                }
            }
            if (lines.length > 2) { // the Raft state of the shards it leads: the operator's view
                try {
                    liveness.report(node, List.of(MetadataJson.mapper().readValue(lines[2], ShardReport[].class)));
                } catch (IOException | RuntimeException e) {
                    LOG.debug("ignoring a heartbeat's unreadable shard report", e);
                }
            }
            // the answer is this leader's clock: backends keep the time they stamp within a bound of it
            return CompletableFuture.completedFuture(Message.valueOf("ok " + clock.nowMillis()));
        }
        return CompletableFuture.failedFuture(new IllegalArgumentException("unknown query"));
    }

    @Override
    public void notifyLeaderChanged(RaftGroupMemberId groupMemberId, RaftPeerId newLeaderId) {
        LeaderHints.leaderChanged(groupMemberId.getGroupId(), newLeaderId);
        synchronized (this) {
            pending = null; // a new term: decisions start again from the image, once this leader applied every entry
            appended = null;
        }
        if (groupMemberId.getPeerId().equals(newLeaderId)) {
            liveness.becameLeader();
        }
    }

    @Override
    public long takeSnapshot() throws IOException {
        ClusterImage current;
        TermIndex applied;
        synchronized (this) {
            current = image;
            applied = getLastAppliedTermIndex();
        }
        if (applied == null || applied.getIndex() <= 0) {
            return RaftLog.INVALID_LOG_INDEX;
        }
        File file = storage.getSnapshotFile(applied.getTerm(), applied.getIndex());
        // durable before Ratis purges the log up to it: file content and rename both forced
        Fsync.writeAtomically(file.toPath(), MetadataJson.write(current));
        MD5Hash md5 = MD5FileUtil.computeAndSaveMd5ForFile(file);
        storage.updateLatestSnapshot(new SingleFileSnapshotInfo(new FileInfo(file.toPath(), md5), applied));
        return applied.getIndex();
    }
}
