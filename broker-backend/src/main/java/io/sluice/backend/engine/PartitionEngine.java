package io.sluice.backend.engine;

import io.sluice.backend.storage.ShardStore;
import io.sluice.partition.DeliveredMessage;
import io.sluice.partition.MoveTask;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionConfig;
import io.sluice.partition.PartitionId;
import io.sluice.partition.PartitionOutcome;
import io.sluice.partition.PartitionResponse;
import io.sluice.partition.PayloadCodec;
import io.sluice.partition.StoredMessage;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A partition's {@link PartitionQueueState} bound to its {@link ShardStore}: applies a command, writes its
 * mutations in one batch with the log index, and joins leased messages with their stored bodies. This is the
 * piece the Raft state machine will call from {@code applyTransaction}; it holds no threads and no locks, so
 * the caller applies commands of one shard one at a time.
 */
public final class PartitionEngine {
    private final ShardStore store;
    private final PartitionQueueState state;

    private PartitionEngine(ShardStore store, PartitionQueueState state) {
        this.store = store;
        this.state = state;
    }

    /** A new, empty partition whose state is not written yet: apply its {@code Configure} next. */
    public static PartitionEngine newPartition(ShardStore store, PartitionId id, PartitionConfig config) {
        return new PartitionEngine(store, new PartitionQueueState(id, config, store::scan));
    }

    /** Creates a new partition: its first command is the configuration. */
    public static PartitionEngine create(ShardStore store, PartitionId id, PartitionConfig config, long leaderTimeMillis,
                                         long logIndex) {
        PartitionEngine engine = new PartitionEngine(store, new PartitionQueueState(id, config, store::scan));
        engine.apply(new PartitionCommand.Configure(config), leaderTimeMillis, logIndex);
        return engine;
    }

    /**
     * A partition as stored: its configuration, whether it was retired (its queue deleted) and how many of its
     * messages wait in the cold tail (a retired partition's are still to be handed off), and the leader time of the
     * last command applied to it ({@code lastNowMillis}: its engine time, which never goes back).
     */
    public record Stored(PartitionId id, PartitionConfig config, boolean retired, long coldMessages,
                         long lastNowMillis) {
    }

    /**
     * Every partition the store holds, read from their config and meta records only (cheap: no index is rebuilt):
     * what a shard's leader reconciles with the catalog, including partitions idle since a restart.
     */
    public static List<Stored> storedPartitions(ShardStore store) {
        List<Stored> out = new ArrayList<>();
        for (byte[] prefix : store.prefixes(PartitionKeys.PREFIX_LENGTH)) {
            ByteBuffer b = ByteBuffer.wrap(prefix);
            long queueId = b.getLong();
            int index = b.getInt();
            if (queueId <= 0 || index < 0) {
                continue; // shard-level keys (the applied index)
            }
            stored(store, new PartitionId(queueId, index)).ifPresent(out::add);
        }
        return out;
    }

    /** One partition as stored, from its config and meta records, if the store has it. */
    public static Optional<Stored> stored(ShardStore store, PartitionId id) {
        PartitionKeys keys = new PartitionKeys(id);
        byte[] configBytes = store.get(keys.config());
        byte[] metaBytes = store.get(keys.meta());
        if (configBytes == null || metaBytes == null) {
            return Optional.empty();
        }
        RecordCodec.Meta meta = RecordCodec.decodeMeta(metaBytes);
        return Optional.of(new Stored(id, PayloadCodec.decodeConfig(configBytes), meta.retired(),
                meta.coldCount() + meta.deferredCount(), meta.lastNowMillis()));
    }

    /**
     * Rebuilds a partition's in-memory index from the store: reads its config, meta, the states of its indexed
     * messages (not bodies, not the cold tail's: {@link ColdTail}), deduplication entries, receive attempts, FIFO
     * group marks and move tasks. Empty when the store has no such partition.
     */
    public static Optional<PartitionEngine> open(ShardStore store, PartitionId id) {
        PartitionKeys keys = new PartitionKeys(id);
        byte[] configBytes = store.get(keys.config());
        byte[] metaBytes = store.get(keys.meta());
        if (configBytes == null || metaBytes == null) {
            return Optional.empty();
        }
        PartitionQueueState state = new PartitionQueueState(id, PayloadCodec.decodeConfig(configBytes), store::scan);
        List<RecordCodec.DecodedState> states = new ArrayList<>();
        store.scan(keys.typePrefix(PartitionKeys.STATE), keys.typeEnd(PartitionKeys.STATE),
                (k, v) -> states.add(RecordCodec.decodeState(PartitionKeys.seqOf(k), v)));
        List<DedupWindow.Entry> dedup = new ArrayList<>();
        store.scan(keys.typePrefix(PartitionKeys.DEDUP), keys.typeEnd(PartitionKeys.DEDUP),
                (k, v) -> dedup.add(RecordCodec.decodeDedup(PartitionKeys.suffixOf(k), v)));
        List<ReceiveAttempts.Attempt> attempts = new ArrayList<>();
        store.scan(keys.typePrefix(PartitionKeys.ATTEMPT), keys.typeEnd(PartitionKeys.ATTEMPT),
                (k, v) -> attempts.add(RecordCodec.decodeAttempt(PartitionKeys.suffixOf(k), v)));
        List<GroupMarks.Mark> marks = new ArrayList<>();
        store.scan(keys.typePrefix(PartitionKeys.GROUP_MARK), keys.typeEnd(PartitionKeys.GROUP_MARK),
                (k, v) -> marks.add(RecordCodec.decodeMark(PartitionKeys.suffixOf(k), v)));
        List<MoveTask> tasks = new ArrayList<>();
        store.scan(keys.typePrefix(PartitionKeys.MOVE_TASK), keys.typeEnd(PartitionKeys.MOVE_TASK),
                (k, v) -> tasks.add(MoveTask.decode(v)));
        RecordCodec.Meta meta = RecordCodec.decodeMeta(metaBytes);
        if (!meta.orderedMembers() && meta.coldCount() > 0 && state.config().fifo()) {
            rewriteSeqOrderedMembers(store, keys);
        }
        state.recover(meta, states, dedup, attempts, marks);
        state.moveTasks.recover(tasks);
        return Optional.of(new PartitionEngine(store, state));
    }

    /**
     * A FIFO partition stored by a node from before cold members were keyed in producer order: each one's key is
     * rewritten ({@link PartitionKeys#coldMember}; same order, as those queues had no reorder window), in batches, at
     * the applied index the store has. Every replica does the same at its first open by a newer node, and a batch that
     * a crash loses is done again at the next (the meta record says it is done once a command has been applied).
     */
    private static void rewriteSeqOrderedMembers(ShardStore store, PartitionKeys keys) {
        List<byte[]> legacy = new ArrayList<>();
        store.scan(keys.typePrefix(PartitionKeys.COLD_MEMBER), keys.typeEnd(PartitionKeys.COLD_MEMBER), (k, v) -> {
            if (PartitionKeys.isSeqOrderedMember(k)) {
                legacy.add(k);
            }
        });
        List<Mutation> batch = new ArrayList<>();
        for (byte[] k : legacy) {
            long seq = PartitionKeys.memberSeqOf(k);
            byte[] stateBytes = store.get(keys.cold(seq));
            batch.add(new Mutation.Delete(k));
            if (stateBytes != null) {
                MessageEntry e = RecordCodec.decodeState(seq, stateBytes).entry();
                batch.add(new Mutation.Put(keys.coldMember(PartitionKeys.memberGroupOf(k),
                        e.orderMillis, e.producerId, seq), new byte[0]));
            }
            if (batch.size() >= 20_000) {
                store.write(batch, store.appliedIndex());
                batch.clear();
            }
        }
        if (!batch.isEmpty()) {
            store.write(batch, store.appliedIndex());
        }
    }

    public PartitionQueueState state() {
        return state;
    }

    /**
     * Applies a command and stores its mutations atomically with {@code logIndex}.
     *
     * @return the response, the effects, and for a receive the leased messages with their bodies
     */
    public PartitionOutcome apply(PartitionCommand command, long leaderTimeMillis, long logIndex) {
        ApplyResult result = state.apply(command, leaderTimeMillis);
        store.write(result.mutations(), logIndex);
        state.written();
        List<DeliveredMessage> delivered = List.of();
        if (result.response() instanceof PartitionResponse.Received received && !received.deliveries().isEmpty()) {
            delivered = new ArrayList<>(received.deliveries().size());
            for (PartitionResponse.Delivery d : received.deliveries()) {
                delivered.add(new DeliveredMessage(d, readMessage(d.seq())));
            }
        }
        return new PartitionOutcome(result.response(), result.effects(), delivered);
    }

    /**
     * Applies a command without writing: its mutations are appended to {@code mutations}, to be written with the
     * other commands of the same log entry in one batch. A receive's outcome carries its leases only, no bodies:
     * they are read once the entry is written ({@link ShardPartitions#withBodies}).
     */
    public PartitionOutcome applyBuffered(PartitionCommand command, long leaderTimeMillis, List<Mutation> mutations) {
        ApplyResult result = state.apply(command, leaderTimeMillis);
        mutations.addAll(result.mutations());
        return new PartitionOutcome(result.response(), result.effects(), List.of());
    }

    /** The entry whose commands were applied with {@link #applyBuffered} is in the store. */
    public void written() {
        state.written();
    }

    /** The stored body and attributes of a message (for deliveries and dead-letter copies). */
    public StoredMessage readMessage(long seq) {
        byte[] bytes = store.get(state.keys().body(seq));
        if (bytes == null) {
            throw new IllegalStateException("partition " + state.id() + " indexes seq " + seq + " but has no body");
        }
        return PayloadCodec.decodeMessage(bytes);
    }

}
