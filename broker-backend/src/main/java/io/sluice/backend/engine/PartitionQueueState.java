package io.sluice.backend.engine;

import io.sluice.common.SqsError;
import io.sluice.partition.Effect;
import io.sluice.partition.MoveTask;
import io.sluice.partition.PartitionCommand.AcknowledgeDeadLetters;
import io.sluice.partition.PartitionCommand.ChangeVisibility;
import io.sluice.partition.PartitionCommand.Configure;
import io.sluice.partition.PartitionCommand.Delete;
import io.sluice.partition.PartitionCommand.Expire;
import io.sluice.partition.PartitionCommand.Purge;
import io.sluice.partition.PartitionCommand.Receive;
import io.sluice.partition.PartitionCommand.Retire;
import io.sluice.partition.PartitionCommand.Send;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionConfig;
import io.sluice.partition.PartitionId;
import io.sluice.partition.PartitionResponse.Done;
import io.sluice.partition.PartitionResponse.Rejected;
import io.sluice.partition.PartitionResponse;
import io.sluice.partition.PayloadCodec;
import io.sluice.partition.QueueCounts;
import java.util.ArrayList;
import java.util.List;

/**
 * The state of one queue partition, as a pure function of its command log:
 * {@link #apply(PartitionCommand, long)} returns the response, the storage mutations (one atomic batch) and
 * the effects. No threads, no I/O, no clock: time is the leader's, passed in with each command, and is clamped
 * to never go back, so replaying the same log on any replica gives the same state.
 *
 * <p>Rules implemented (see docs/architecture.md for the reasoning):
 * visibility and delay deadlines; receive counts and first-receive time; dead-letter hand-off on the receive
 * that would exceed {@code maxReceiveCount}; stale receipt handles; the 12-hour in-flight cap; retention;
 * purge once per 60 s; FIFO group order and blocking, 5-minute deduplication and receive attempts, producer order
 * inside a reorder window; the in-flight limit.
 *
 * <p>This class holds the partition's state and applies a command to it: it dispatches to the command's class
 * ({@link SendCommands}, {@link ReceiveCommands}, {@link ReceiptHandleCommands}, {@link LifecycleCommands},
 * {@link MoveTasks}), which change the state through its package-private fields, and it answers the read queries
 * (counts, peek, deadlines). Where messages live (memory, cold and deferred tails on disk) is {@link MessageTiers}'s;
 * FIFO producer order is {@link ProducerOrdering}'s. Those parts are one state machine: they are not thread-safe and
 * exist only inside one {@code PartitionQueueState}.
 */
public final class PartitionQueueState {
    /**
     * How many messages a partition's in-memory index holds before new sends wait in its cold tail, on disk only.
     * The same on every replica: where a message lives is part of the replicated state.
     */
    static final int DEFAULT_HOT_LIMIT = 4096;
    /** Cold messages paged back into the index at a time. */
    static final int PAGE = 1024;
    /**
     * How many dead-letter hand-offs a partition holds pending (in memory, until its dead-letter queue has the copies)
     * before it stops making more: a message that would need one then stays where it is, neither delivered nor handed
     * off, until hand-offs drain. The same on every replica.
     */
    static final int DEFAULT_MAX_PENDING_HAND_OFFS = 4096;

    final PartitionId id;
    final PartitionKeys keys;
    PartitionConfig config;
    long nextSeq = 1;
    long lastPurgeMillis = -1;
    boolean retired;
    final MessageIndex index = new MessageIndex();
    final ColdTail cold;
    /** FIFO: the cold messages by group and the heads of groups that are cold entirely. */
    final FifoColdGroups coldGroups;
    /** Standard: delayed sends, copies and paged-out messages on disk only, by delivery order. */
    final DeferredTail deferred;
    /** See {@link #DEFAULT_HOT_LIMIT} and {@link #PAGE}; tests lower them to page often, a few at a time. */
    int hotLimit = DEFAULT_HOT_LIMIT;
    int page = PAGE;
    /**
     * The most messages a FIFO partition holds in its index: a send past it is refused with a throttling error. A
     * backlog pages to disk long before (at {@link #hotLimit}); the index grows past that only with messages in flight
     * and sends that order before their group's last message in memory (a reorder window's stragglers), so this is a
     * guard against a partition's memory outgrowing its bound, never a crash. About 250 bytes of heap each.
     */
    static final int DEFAULT_MAX_INDEXED = 200_000;
    /** See {@link #DEFAULT_MAX_INDEXED}; tests lower it. */
    int maxIndexed = DEFAULT_MAX_INDEXED;
    /**
     * FIFO: the first seq sent after the queue's delay last changed. A cold message sent before it and never received
     * is visible at its send plus the current delay (or its release by the reorder window, if later): the delay is
     * retroactive, and a message on disk takes it when it is read, not when the delay changes.
     */
    long delayChangedSeq;
    /**
     * How many cold FIFO groups whose head is not visible yet one walk passes over at most (a receive's, a wake-up's):
     * the groups past them are reached once earlier heads become visible. The same on every replica.
     */
    static final int MAX_COLD_HEADS_PASSED = 1000;
    /** See {@link #DEFAULT_MAX_PENDING_HAND_OFFS}; tests lower it. */
    int maxPendingHandOffs = DEFAULT_MAX_PENDING_HAND_OFFS;
    final PartitionTotals.Counter totals = new PartitionTotals.Counter();
    final ExpiringRegistry<DedupWindow.Entry> dedup = DedupWindow.create();
    /** Copies' hand-off keys, on disk only (a poison flood makes one a message). */
    final HandOffKeys handOffKeys;
    final ExpiringRegistry<ReceiveAttempts.Attempt> attempts = ReceiveAttempts.create();

    final MessageTiers tiers = new MessageTiers(this);
    final ProducerOrdering ordering = new ProducerOrdering(this);
    final LifecycleCommands lifecycle = new LifecycleCommands(this);
    private final SendCommands send = new SendCommands(this);
    private final ReceiveCommands receives = new ReceiveCommands(this);
    private final ReceiptHandleCommands handles = new ReceiptHandleCommands(this);
    final MoveTasks moveTasks = new MoveTasks(this, receives);

    /** Per-apply scratch: what the current command stores and triggers. */
    List<Mutation> mutations;
    List<Effect> effects;

    /** @param coldReader reads the partition's cold range from the store (see {@link ColdTail}) */
    public PartitionQueueState(PartitionId id, PartitionConfig config, ColdTail.Reader coldReader) {
        this.id = id;
        this.keys = new PartitionKeys(id);
        this.config = config;
        this.cold = new ColdTail(keys, coldReader);
        this.coldGroups = new FifoColdGroups(keys, cold);
        this.deferred = new DeferredTail(keys, cold);
        this.handOffKeys = new HandOffKeys(keys, cold);
    }

    public PartitionId id() {
        return id;
    }

    public PartitionKeys keys() {
        return keys;
    }

    public PartitionConfig config() {
        return config;
    }

    public boolean retired() {
        return retired;
    }

    /**
     * Whether the partition's queue is deleted and nothing of it is left to hand off: the last command deleted its
     * records, and its engine may go.
     */
    public boolean finished() {
        return retired && size() == 0 && index.deadLetterPending().isEmpty();
    }

    /**
     * Applies one command at the leader's time. Never throws for bad input: domain errors are in the response.
     */
    public ApplyResult apply(PartitionCommand command, long leaderTimeMillis) {
        mutations = new ArrayList<>();
        effects = new ArrayList<>();
        long now = Math.max(leaderTimeMillis, index.nowMillis());
        long coldWake = tiers.coldWake(); // as of the last command: a cold group's head visible since then wakes polls too
        int becameVisible = index.advanceTo(now) + deferred.advanceTo(now, mutations);
        boolean mayWake = becameVisible > 0 || coldWake > 0 && coldWake <= now;
        long deadlineBefore = nextDeadlineMillis();
        PartitionResponse response;
        if (retired && !(command instanceof AcknowledgeDeadLetters) && !(command instanceof Expire)) {
            response = new Rejected(SqsError.QUEUE_DOES_NOT_EXIST.failure());
        } else {
            response = dispatch(command, now);
            mayWake |= !(command instanceof Receive) && !(command instanceof PartitionCommand.LeaseMoveBatch);
        }
        tiers.settleColdGroups();
        tiers.pageOut();
        mutations.add(new Mutation.Put(keys.meta(), RecordCodec.encodeMeta(meta())));
        if (finished()) {
            // a deleted queue's partition with nothing left to hand off: its records go, config and meta too, so
            // create/delete churn leaves nothing behind (a later command finds no such partition, as it should)
            mutations.add(new Mutation.DeleteRange(keys.rangeStart(), keys.rangeEnd()));
        }
        if (mayWake && tiers.hasDeliverable()) {
            effects.add(new Effect.MessagesAvailable(id, visibleCount()));
        }
        long deadlineAfter = nextDeadlineMillis();
        if (deadlineAfter > 0 && (deadlineBefore <= 0 || deadlineAfter < deadlineBefore)) {
            effects.add(new Effect.VisibleAt(id, deadlineAfter));
        }
        ApplyResult result = new ApplyResult(response, mutations, effects);
        mutations = null;
        effects = null;
        return result;
    }

    private PartitionResponse dispatch(PartitionCommand command, long now) {
        if (command instanceof Configure c) {
            return configure(c.config(), now);
        } else if (command instanceof Send s) {
            return send.send(s, now);
        } else if (command instanceof Receive r) {
            return receives.receive(r, now);
        } else if (command instanceof Delete d) {
            return handles.delete(d, now);
        } else if (command instanceof ChangeVisibility c) {
            return handles.changeVisibility(c, now);
        } else if (command instanceof Purge) {
            return lifecycle.purge(now);
        } else if (command instanceof Expire e) {
            return lifecycle.expire(e.limit(), now);
        } else if (command instanceof AcknowledgeDeadLetters a) {
            return lifecycle.acknowledgeDeadLetters(a);
        } else if (command instanceof Retire r) {
            return lifecycle.retire(r.handOff());
        } else if (command instanceof PartitionCommand.StartMoveTask st) {
            return moveTasks.start(st, now);
        } else if (command instanceof PartitionCommand.CancelMoveTask ct) {
            return moveTasks.cancel(ct);
        } else if (command instanceof PartitionCommand.LeaseMoveBatch l) {
            return moveTasks.lease(l, now);
        } else if (command instanceof PartitionCommand.FinishMoveBatch f) {
            return moveTasks.finish(f, now);
        }
        throw new IllegalArgumentException("unknown command " + command.getClass());
    }

    /** Visible messages, the cold tail's (all of them visible since their send) and the deferred tail's included. */
    int visibleCount() {
        return saturated(index.visibleCount() + cold.count() + deferred.dueCount());
    }

    /** Messages stored, the cold and deferred tails' included. */
    long size() {
        return index.size() + cold.count() + deferred.count();
    }

    static int saturated(long n) {
        return (int) Math.min(Integer.MAX_VALUE, n);
    }

    // ---- Configure ------------------------------------------------------------------------------------------

    private PartitionResponse configure(PartitionConfig next, long now) {
        if (next.version() != 0 && next.version() < config.version()) {
            return new Done(); // an older catalog version than the one applied: a racing write that lost
        }
        if (next.fifo() != config.fifo() && size() > 0) {
            return new Rejected(SqsError.INVALID_ATTRIBUTE_VALUE.withMessage(
                    "Invalid value for the parameter FifoQueue. Reason: Modifying queue type is not supported."));
        }
        PartitionConfig previous = config;
        config = next;
        mutations.add(new Mutation.Put(keys.config(), PayloadCodec.encodeConfig(next)));
        if (next.fifo() && next.delaySeconds() != previous.delaySeconds()) {
            // the messages on disk take the new delay when they are read (coldVisibleAt): nothing is paged in
            delayChangedSeq = nextSeq;
            tiers.forgetColdWalk();
        }
        if (previous.hasDeadLetterQueue() && !next.hasDeadLetterQueue()) {
            // the redrive policy was removed: hand-offs not yet copied have nowhere to go; they return to the queue
            for (MessageEntry e : List.copyOf(index.deadLetterPending().values())) {
                String groupId = e.fifoGroupId;
                boolean coldGroup = groupId != null && index.group(groupId) == null && coldGroups.has(groupId);
                if (coldGroup) { // it comes before the group's cold messages: the group is in memory again
                    coldGroups.removeHead(coldGroups.first(groupId), mutations);
                }
                index.returnFromDeadLetter(e, now);
                if (coldGroup) {
                    index.group(groupId).hasCold = true;
                }
                putState(e);
            }
        }
        if (next.fifo() && next.delaySeconds() != previous.delaySeconds()) {
            // FIFO queue delay is retroactive for messages never received.
            for (MessageEntry e : index.entriesInSeqOrder()) {
                if (!e.isDeadLetterPending() && e.receiveCount == 0 && e.receivedAtMillis == 0) {
                    index.update(e, m -> m.visibleAtMillis = Math.max(m.retentionBaseMillis + next.delaySeconds() * 1000L,
                            m.releaseMillis));
                    putState(e);
                }
            }
        }
        return new Done();
    }

    // ---- storage helpers ------------------------------------------------------------------------------------

    void putState(MessageEntry e) {
        mutations.add(new Mutation.Put(keys.state(e.seq), RecordCodec.encodeState(e)));
    }

    void deleteMessageKeys(long seq) {
        mutations.add(new Mutation.Delete(keys.body(seq)));
        mutations.add(new Mutation.Delete(keys.state(seq)));
    }

    private RecordCodec.Meta meta() {
        return new RecordCodec.Meta(nextSeq, index.nowMillis(), lastPurgeMillis, retired, totals.snapshot(),
                cold.count(), cold.from(), cold.oldestMillis(), deferred.count(), delayChangedSeq, true);
    }

    // ---- recovery and read-only queries ---------------------------------------------------------------------

    /** Restores durable state read from storage. Called once, on a fresh instance, before any apply. */
    void recover(RecordCodec.Meta meta, List<RecordCodec.DecodedState> states, List<DedupWindow.Entry> dedupEntries,
                 List<ReceiveAttempts.Attempt> attemptRecords, List<GroupMarks.Mark> groupMarks) {
        nextSeq = meta.nextSeq();
        totals.restore(meta.totals());
        lastPurgeMillis = meta.lastPurgeMillis();
        retired = meta.retired();
        index.resetClock(meta.lastNowMillis());
        cold.recover(meta.coldCount(), meta.coldFrom(), meta.coldOldestMillis());
        delayChangedSeq = meta.delayChangedSeq();
        deferred.recover(meta.deferredCount());
        handOffKeys.refresh();
        for (RecordCodec.DecodedState s : states) { // in seq order: FIFO groups are mostly appended to
            index.add(s.entry(), config.fifo() ? s.groupId() : null);
        }
        if (config.fifo() && !cold.isEmpty()) {
            for (FifoGroup g : index.groups()) { // a seek per group in memory, not a read of the backlog
                g.hasCold = coldGroups.has(g.id);
            }
        }
        dedup.recover(dedupEntries);
        attempts.recover(attemptRecords);
        ordering.marks.recover(groupMarks);
    }

    /** Whether an {@code Expire} command would change anything now (a message past retention, an old window entry). */
    public boolean needsSweep(long now) {
        return lifecycle.needsSweep(now);
    }

    /** Messages waiting on disk only: the cold tail's and the deferred tail's. */
    public long coldCount() {
        return cold.count() + deferred.count();
    }

    /** The entry applied last is in the store (see {@link ColdTail#written()}). */
    void written() {
        cold.written();
    }

    /** The arrival skew histogram (FIFO, producer-timed sends), or null when none was observed. */
    public ArrivalSkew.Snapshot arrivalSkew() {
        return ordering.skew.snapshot();
    }

    /** Totals since the partition was created, as of the last applied command. */
    public PartitionTotals totals() {
        return totals.snapshot();
    }

    /** Counts as of the last applied command. */
    public QueueCounts counts() {
        return new QueueCounts(visibleCount(), index.inflightCount(),
                saturated(index.delayedCount() + deferred.notDueCount()),
                index.deadLetterPending().size(), oldestRetentionBaseMillis(), oldestHandOffMillis(),
                ordering.skew.p99Millis(index.nowMillis()));
    }

    /** The send time (retention base) of the oldest live message, cold or indexed, or -1. */
    private long oldestRetentionBaseMillis() {
        MessageEntry oldest = index.oldestByRetention();
        long hot = oldest == null ? -1 : oldest.retentionBaseMillis;
        return earliest(earliest(hot, cold.oldestMillis()), deferred.oldestRetentionMillis());
    }

    /**
     * Counts at {@code nowMillis} (at or after the last command), read-only: an idle partition's messages whose
     * visibility timeout or delay ran out since its last command count as visible, as they are. What
     * GetQueueAttributes answers and the queue metrics export.
     */
    public QueueCounts countsAt(long nowMillis) {
        int[] c = index.countsAt(nowMillis);
        long deferredDue = deferred.dueAt(Math.max(nowMillis, index.nowMillis()));
        return new QueueCounts(saturated(c[0] + cold.count() + deferredDue), c[1],
                saturated(c[2] + deferred.count() - deferredDue), index.deadLetterPending().size(),
                oldestRetentionBaseMillis(), oldestHandOffMillis(),
                ordering.skew.p99Millis(Math.max(nowMillis, index.nowMillis())),
                totals.sent, totals.received);
    }

    /** When the oldest pending hand-off was made, or -1. */
    private long oldestHandOffMillis() {
        MessageEntry pending = index.oldestPending();
        return pending == null ? -1 : pending.visibleAtMillis; // a pending hand-off's "visible at" is its time
    }

    /**
     * The seq and receive count of up to {@code max} messages visible at {@code nowMillis}, in delivery order, from
     * the index and the cold range (whose messages are visible since their send); changes nothing.
     */
    public List<long[]> peek(long nowMillis, int max) {
        List<MessageEntry> visible = new ArrayList<>(index.peekVisible(nowMillis, max));
        for (RecordCodec.DecodedState d : cold.peek(max)) {
            visible.add(d.entry());
        }
        for (RecordCodec.DecodedState d : deferred.peekDue(Math.max(nowMillis, index.nowMillis()), max)) {
            visible.add(d.entry());
        }
        visible.sort(MessageEntry.BY_VISIBLE_AT);
        List<long[]> out = new ArrayList<>();
        for (MessageEntry e : visible.subList(0, Math.min(max, visible.size()))) {
            out.add(new long[] {e.seq, e.receiveCount});
        }
        return out;
    }

    /** How many messages are visible at {@code nowMillis} (at or after the last command), read-only. */
    public int visibleCountAt(long nowMillis) {
        return saturated(index.visibleAt(nowMillis) + cold.count()
                + deferred.dueAt(Math.max(nowMillis, index.nowMillis())));
    }

    /** The first time after {@code t} a delayed or in-flight message becomes visible, or -1. */
    public long nextDeadlineAfter(long t) {
        long coldWake = tiers.coldWake();
        return earliest(earliest(index.nextDeadlineAfter(t), deferred.nextDeadlineAfter(Math.max(t, index.nowMillis()))),
                coldWake > t ? coldWake : -1);
    }

    /** The next time a delayed or in-flight message becomes visible, or -1: when to re-check parked polls. */
    public long nextDeadlineMillis() {
        return earliest(earliest(index.nextDeadlineMillis(), deferred.nextDeadlineAfter(index.nowMillis())),
                tiers.coldWake());
    }

    /** The earlier of two times, -1 meaning none. */
    private static long earliest(long a, long b) {
        return a < 0 ? b : b < 0 ? a : Math.min(a, b);
    }

    /** Hand-offs not yet acknowledged, oldest first: a new primary re-executes these. */
    public List<Effect.DeadLetter> pendingDeadLetters() {
        return pendingDeadLetters(Integer.MAX_VALUE);
    }

    /** The {@code max} oldest hand-offs not yet acknowledged, in seq order. */
    public List<Effect.DeadLetter> pendingDeadLetters(int max) {
        List<Effect.DeadLetter> out = new ArrayList<>(Math.min(max, index.deadLetterPending().size()));
        for (MessageEntry e : index.deadLetterPending().values()) {
            if (out.size() >= max) {
                break;
            }
            out.add(lifecycle.deadLetterEffect(e));
        }
        return out;
    }

    /** The partition's message move tasks, newest first. */
    public List<MoveTask> moveTasks() {
        return moveTasks.list();
    }

    /** Move tasks a driver has work on (running, or with a batch to finish). */
    public List<MoveTask> moveTasksToDrive() {
        return retired ? List.of() : moveTasks.toDrive();
    }

    /** A canonical description of the whole state; equal strings mean equal states. For tests and debugging. */
    public String describe() {
        return "partition=" + id + " config=" + config + " nextSeq=" + nextSeq + " lastPurge=" + lastPurgeMillis
                + " retired=" + retired + " totals=" + totals.snapshot() + " " + cold.describe() + " "
                + deferred.describe() + " " + handOffKeys.describe() + "\n" + index.describe()
                + "dedup=" + dedup.snapshot(e -> e)
                + "\nattempts=" + attempts.snapshot(ReceiveAttempts.Attempt::describe)
                + "\nmarks=" + ordering.marks.snapshot(GroupMarks.Mark::describe)
                + "\nmoveTasks=" + moveTasks.describe() + "\n";
    }
}
