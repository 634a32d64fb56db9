package io.sluice.backend.engine;

import io.sluice.backend.storage.ShardStore;
import io.sluice.backend.storage.StorageException;
import io.sluice.common.SqsError;
import io.sluice.partition.CommandCodec;
import io.sluice.partition.DeliveredMessage;
import io.sluice.partition.Effect;
import io.sluice.partition.MoveTask;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionId;
import io.sluice.partition.PartitionOutcome;
import io.sluice.partition.PartitionResponse;
import io.sluice.partition.PeekedMessage;
import io.sluice.partition.QueueCounts;
import io.sluice.partition.StoredMessage;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The partitions of one shard's store and the one place that applies commands to them, answers reads about them,
 * collects their metrics and picks those a sweep would change. It is a shard's {@code ShardCore}'s, under a Raft log
 * (a replicated shard) or a local log ({@code sluice dev}'s one-replica shard): they differ only in where an entry
 * comes from (a Raft log, or a queue drained by one thread) and how it is made durable (Raft, or a WAL force).
 *
 * <ul>
 *   <li>An entry is a batch of {@code (partition, command)} pairs applied at one time: every command's mutations
 *       and the entry's index are written in <em>one</em> WriteBatch.</li>
 *   <li>A partition is opened from the store on first use; a {@code Configure} creates one the store does not hold;
 *       any other command for an unknown partition answers QueueDoesNotExist.</li>
 *   <li>Domain errors are answers. A command that throws anyway (a bug) is answered InternalError, the rest of the
 *       entry's commands for its partition are refused as well, and that partition is reloaded from the store after
 *       the entry (its in-memory state may be half-changed). A {@link StorageException} is not caught here: memory
 *       may then be ahead of the disk, so the caller discards this instance and stops (fail-stop).</li>
 * </ul>
 *
 * <p>Not thread-safe: the owner serialises every call (the state machine's monitor, the local shard's thread).
 */
public final class ShardPartitions {
    private static final Logger LOG = LoggerFactory.getLogger(ShardPartitions.class);
    /** Partitions {@link #stats} loads from the store per call at most. */
    public static final int MAX_OPENED_PER_STATS = 16;

    private final ShardStore store;
    private final String name;
    private final Map<PartitionId, PartitionEngine> engines = new HashMap<>();
    private boolean allStoredOpen;
    /** A test's stand-in for a bug in the engine: throws for the commands it chooses. */
    private volatile Consumer<CommandCodec.Addressed> applyFault = a -> { };

    /** The entries applied, by id: an entry the log holds twice is applied once. */
    private final EntryIds entryIds;

    /** @param name how log lines name this shard */
    public ShardPartitions(ShardStore store, String name) {
        this.store = store;
        this.name = name;
        this.entryIds = EntryIds.load(store);
    }

    /**
     * As {@link #apply(List, long, long, boolean)}, for an entry with an id: one applied before under the same id (a
     * Raft call its log holds twice) changes nothing but the id table, and each of its commands is answered
     * InternalError, as an outcome unknown (the first application's answer is not kept).
     */
    public List<PartitionOutcome> apply(CommandCodec.Batch batch, long timeMillis, long index, boolean sync) {
        List<Mutation> ids = new ArrayList<>(1);
        if (entryIds.admit(batch.writer(), batch.entry(), index, timeMillis, ids)) {
            return apply(batch.commands(), timeMillis, index, sync, ids);
        }
        LOG.warn("shard {}: entry {} is entry {} of writer {} again (or too old to tell): not applied twice; its {}"
                + " commands are answered InternalError", name, index, batch.entry(),
                Long.toHexString(batch.writer()), batch.commands().size());
        store.write(ids, index, sync);
        List<PartitionOutcome> outcomes = new ArrayList<>(batch.commands().size());
        for (int i = 0; i < batch.commands().size(); i++) {
            outcomes.add(new PartitionOutcome(new PartitionResponse.Rejected(SqsError.INTERNAL_FAILURE.withMessage(
                    "This request reached its shard twice; its first outcome is not known here. Retry.")),
                    List.of(), List.of()));
        }
        return outcomes;
    }

    /**
     * Applies an entry: each command at {@code timeMillis}, all their mutations and {@code index} in one write.
     * Receive outcomes carry their leases, not the bodies ({@link #withBodies}).
     *
     * @param sync false only for a store with {@link ShardStore.Durability#SYNC_WAL} whose caller forces the WAL
     *             before releasing any outcome (group commit)
     * @return one outcome per command, in order
     * @throws StorageException the store failed: the caller must stop
     */
    public List<PartitionOutcome> apply(List<CommandCodec.Addressed> batch, long timeMillis, long index, boolean sync) {
        List<Mutation> ids = new ArrayList<>(1);
        entryIds.admit(0, 0, index, timeMillis, ids); // no id; the table's pruning still runs at its entries
        return apply(batch, timeMillis, index, sync, ids);
    }

    private List<PartitionOutcome> apply(List<CommandCodec.Addressed> batch, long timeMillis, long index,
                                         boolean sync, List<Mutation> mutations) {
        List<PartitionOutcome> outcomes = new ArrayList<>(batch.size());
        Set<PartitionId> broken = new HashSet<>();
        for (CommandCodec.Addressed a : batch) {
            outcomes.add(applyOne(a, timeMillis, mutations, broken, index));
        }
        store.write(mutations, index, sync);
        for (CommandCodec.Addressed a : batch) {
            PartitionEngine engine = engines.get(a.partition());
            if (engine != null) {
                engine.written();
            }
        }
        broken.forEach(engines::remove); // reloaded from the store when next addressed
        for (CommandCodec.Addressed a : batch) {
            PartitionEngine engine = engines.get(a.partition());
            if (engine != null && engine.state().finished()) {
                engines.remove(a.partition()); // its records are gone too: nothing of it is left anywhere
            }
        }
        return outcomes;
    }

    private PartitionOutcome applyOne(CommandCodec.Addressed a, long timeMillis, List<Mutation> mutations,
                                      Set<PartitionId> broken, long index) {
        if (broken.contains(a.partition())) {
            return failed();
        }
        int before = mutations.size();
        try {
            applyFault.accept(a);
            PartitionEngine engine = engine(a.partition(), a.command());
            return engine == null
                    ? new PartitionOutcome(new PartitionResponse.Rejected(SqsError.QUEUE_DOES_NOT_EXIST.failure()),
                            List.of(), List.of())
                    : engine.applyBuffered(a.command(), timeMillis, mutations);
        } catch (StorageException e) {
            throw e;
        } catch (RuntimeException e) {
            LOG.error("shard {}: entry {}: {} on partition {} could not be applied; answered InternalError",
                    name, index, a.command().getClass().getSimpleName(), a.partition(), e);
            mutations.subList(before, mutations.size()).clear();
            broken.add(a.partition());
            return failed();
        }
    }

    private static PartitionOutcome failed() {
        return new PartitionOutcome(new PartitionResponse.Rejected(SqsError.INTERNAL_FAILURE.failure()),
                List.of(), List.of());
    }

    /** The effects of the outcomes, in order. */
    public static List<Effect> effectsOf(List<PartitionOutcome> outcomes) {
        List<Effect> effects = new ArrayList<>();
        outcomes.forEach(o -> effects.addAll(o.effects()));
        return effects;
    }

    /**
     * A receive's outcome with the bodies of its leased messages, read from this store once its entry was written
     * (other outcomes unchanged). A message deleted or expired since is left out.
     */
    public PartitionOutcome withBodies(PartitionId id, PartitionOutcome outcome) {
        if (!(outcome.response() instanceof PartitionResponse.Received received) || received.deliveries().isEmpty()) {
            return outcome;
        }
        List<DeliveredMessage> delivered = new ArrayList<>(received.deliveries().size());
        for (PartitionResponse.Delivery d : received.deliveries()) {
            StoredMessage m = readMessage(id, d.seq());
            if (m != null) {
                delivered.add(new DeliveredMessage(d, m));
            }
        }
        return new PartitionOutcome(outcome.response(), outcome.effects(), delivered);
    }

    /** The partition's engine, opened from the store or created by its first {@code Configure}; null if neither. */
    private PartitionEngine engine(PartitionId id, PartitionCommand command) {
        PartitionEngine engine = engines.get(id);
        if (engine == null) {
            engine = PartitionEngine.open(store, id).orElse(null);
            if (engine == null && command instanceof PartitionCommand.Configure c) {
                engine = PartitionEngine.newPartition(store, id, c.config());
            }
            if (engine != null) {
                engines.put(id, engine);
            }
        }
        return engine;
    }

    /** Opens a partition the store holds (at start-up); false if it holds none. */
    public boolean open(PartitionId id) {
        return engine(id, null) != null;
    }

    /**
     * The partition's engine for a read: opened, or read from the store; a retired partition read from the store is
     * not kept (reads of a deleted queue must not bring its partitions back into memory for good).
     */
    private PartitionEngine reader(PartitionId id) {
        PartitionEngine engine = engines.get(id);
        if (engine == null) {
            engine = PartitionEngine.open(store, id).orElse(null);
            if (engine != null && !engine.state().retired()) {
                engines.put(id, engine);
            }
        }
        return engine;
    }


    public QueueCounts counts(PartitionId id, long nowMillis) {
        PartitionEngine engine = reader(id);
        // no state yet (just created, or a partition being added): nothing sent or received, not "unknown"
        return engine == null ? new QueueCounts(0, 0, 0, 0, -1, -1, -1, 0, 0) : engine.state().countsAt(nowMillis);
    }

    /** The first deadline of an open partition after {@code t}, or -1. */
    public long nextDeadlineAfter(PartitionId id, long t) {
        PartitionEngine engine = engines.get(id);
        return engine == null ? -1 : engine.state().nextDeadlineAfter(t);
    }

    /** The next deadline of every open partition that has one. */
    public Map<PartitionId, Long> nextDeadlines() {
        Map<PartitionId, Long> out = new HashMap<>();
        engines.forEach((id, engine) -> {
            long next = engine.state().retired() ? -1 : engine.state().nextDeadlineMillis();
            if (next > 0) {
                out.put(id, next);
            }
        });
        return out;
    }

    /** Visible messages at {@code nowMillis}, counting deadlines passed since the last command. */
    public int visibleAt(PartitionId id, long nowMillis) {
        PartitionEngine engine = reader(id);
        return engine == null ? 0 : engine.state().visibleCountAt(nowMillis);
    }

    /** When the partition's next delayed or in-flight message becomes visible (-1: none). */
    public long nextDeadlineMillis(PartitionId id) {
        PartitionEngine engine = reader(id);
        return engine == null ? -1 : engine.state().nextDeadlineMillis();
    }

    /** The catalog version the partition was configured from, or -1 if the store has no such (live) partition. */
    public long configVersion(PartitionId id) {
        PartitionEngine engine = reader(id);
        return engine == null || engine.state().retired() ? -1 : engine.state().config().version();
    }

    /** One stored partition's config and retired flag (its config and meta records only), if the store has it. */
    public Optional<PartitionEngine.Stored> storedPartition(PartitionId id) {
        return PartitionEngine.stored(store, id);
    }

    /**
     * Hand-offs a partition lists at most when asked for its pending ones: the oldest, which a driver moves next (it
     * asks again once they are moved), not all a partition may hold.
     */
    static final int PENDING_LISTED_PER_PARTITION = 1000;

    /** Dead-letter hand-offs not yet acknowledged, of every partition opened here: each one's oldest, in seq order. */
    public List<Effect.DeadLetter> pendingDeadLetters() {
        List<Effect.DeadLetter> pending = new ArrayList<>();
        engines.values().forEach(e -> pending.addAll(e.state().pendingDeadLetters(PENDING_LISTED_PER_PARTITION)));
        return pending;
    }

    /** A partition's message move tasks, newest first (none if the store has no such partition). */
    public List<MoveTask> moveTasks(PartitionId id) {
        PartitionEngine engine = reader(id);
        return engine == null ? List.of() : engine.state().moveTasks();
    }

    /** The move tasks with work to do, of every partition opened here. */
    public List<MoveTask.Located> moveTasksToDrive() {
        List<MoveTask.Located> out = new ArrayList<>();
        engines.forEach((id, e) -> e.state().moveTasksToDrive()
                .forEach(t -> out.add(new MoveTask.Located(id, t))));
        return out;
    }

    /** Up to {@code max} messages visible at {@code nowMillis} with their bodies, leasing nothing (a peek). */
    public List<PeekedMessage> peek(PartitionId id, long nowMillis, int max) {
        PartitionEngine engine = reader(id);
        if (engine == null) {
            return List.of();
        }
        List<PeekedMessage> out = new ArrayList<>();
        for (long[] m : engine.state().peek(nowMillis, max)) {
            StoredMessage stored = readMessage(id, m[0]);
            if (stored != null) {
                out.add(new PeekedMessage(m[0], (int) m[1], stored));
            }
        }
        return out;
    }

    /** A stored message, or null if the partition or the message is gone (deleted, purged or expired since). */
    public StoredMessage readMessage(PartitionId id, long seq) {
        PartitionEngine engine = reader(id);
        if (engine == null) {
            return null;
        }
        try {
            return engine.readMessage(seq);
        } catch (IllegalStateException e) {
            return null;
        }
    }

    /** The partitions opened here that an {@code Expire} sweep would change at {@code nowMillis}. */
    public List<PartitionId> partitionsToSweep(long nowMillis) {
        List<PartitionId> out = new ArrayList<>();
        engines.forEach((id, engine) -> {
            if (engine.state().needsSweep(nowMillis)) {
                out.add(id);
            }
        });
        return out;
    }

    /** Counts and totals of every partition opened here and not retired. */
    public List<PartitionStats> stats(long nowMillis) {
        List<PartitionStats> out = new ArrayList<>();
        engines.forEach((id, engine) -> {
            if (!engine.state().retired()) {
                out.add(new PartitionStats(id, engine.state().countsAt(nowMillis), engine.state().totals(),
                        engine.state().arrivalSkew()));
            }
        });
        return out;
    }

    /**
     * Counts and totals of one partition, or null if the store has none or it is retired. A partition not opened
     * since start is loaded (a scan of its states) only if {@code mayOpen}.
     */
    public PartitionStats stats(PartitionId id, long nowMillis, boolean mayOpen) {
        PartitionEngine engine = engines.get(id);
        if (engine == null && mayOpen) {
            engine = reader(id);
        }
        return engine == null || engine.state().retired() ? null
                : new PartitionStats(id, engine.state().countsAt(nowMillis), engine.state().totals(),
                        engine.state().arrivalSkew());
    }

    public boolean isOpen(PartitionId id) {
        return engines.containsKey(id);
    }

    /** Every partition the store holds (opened or not), with its config and retired flag. */
    public List<PartitionEngine.Stored> storedPartitions() {
        return PartitionEngine.storedPartitions(store);
    }

    /** True once every stored partition was opened ({@code markAllStoredOpen}): later ones open by their command. */
    public boolean allStoredOpen() {
        return allStoredOpen;
    }

    public void markAllStoredOpen() {
        allStoredOpen = true;
    }

    /** A partition's canonical description (for tests and status), or null if the store has none. */
    public String describe(PartitionId id) {
        PartitionEngine engine = reader(id);
        return engine == null ? null : engine.state().describe();
    }

    /** Tests only: makes the engine throw for the commands {@code fault} throws for. */
    public void applyFault(Consumer<CommandCodec.Addressed> fault) {
        this.applyFault = fault;
    }
}
