package io.sluice.backend.engine;

import io.sluice.common.MessageAttributeValue;
import io.sluice.common.MessageDigests;
import io.sluice.common.ProducerOrder;
import io.sluice.common.SqsError;
import io.sluice.common.SqsLimits;
import io.sluice.common.validation.RedeliveryBackoff;
import io.sluice.partition.DeadLetterReason;
import io.sluice.partition.Effect;
import io.sluice.partition.MoveTask;
import io.sluice.partition.NewMessage;
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
import io.sluice.partition.PartitionResponse.Count;
import io.sluice.partition.PartitionResponse.Done;
import io.sluice.partition.PartitionResponse.Rejected;
import io.sluice.partition.PartitionResponse.Sent;
import io.sluice.partition.PartitionResponse.SentMessage;
import io.sluice.partition.PartitionResponse;
import io.sluice.partition.PayloadCodec;
import io.sluice.partition.QueueCounts;
import io.sluice.partition.StoredMessage;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * The state of one queue partition, as a pure function of its command log:
 * {@link #apply(PartitionCommand, long)} returns the response, the storage mutations (one atomic batch) and
 * the effects. No threads, no I/O, no clock: time is the leader's, passed in with each command, and is clamped
 * to never go back, so replaying the same log on any replica gives the same state.
 *
 * <p>Rules implemented here (see docs/architecture.md for the reasoning):
 * visibility and delay deadlines; receive counts and first-receive time; dead-letter hand-off on the receive
 * that would exceed {@code maxReceiveCount}; stale receipt handles; the 12-hour in-flight cap; retention;
 * purge once per 60 s; FIFO group order and blocking, 5-minute deduplication and receive attempts, producer order
 * inside a reorder window; the in-flight limit.
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
    private long lastPurgeMillis = -1;
    private boolean retired;
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
    private long delayChangedSeq;
    /**
     * How many cold FIFO groups whose head is not visible yet one walk passes over at most (a receive's, a wake-up's):
     * the groups past them are reached once earlier heads become visible. The same on every replica.
     */
    static final int MAX_COLD_HEADS_PASSED = 1000;
    /**
     * How many of those a look for wake-ups passes over at most (after every command that changed the cold range,
     * so kept small: a poll parked past them waits for its next deadline or arrival).
     */
    static final int MAX_COLD_HEADS_WAKE = 64;
    /** The last {@link #coldWalk} from the first cold head, while the cold range and the time allow reusing it. */
    private ColdWalk coldWalk;
    /** See {@link #DEFAULT_MAX_PENDING_HAND_OFFS}; tests lower it. */
    int maxPendingHandOffs = DEFAULT_MAX_PENDING_HAND_OFFS;
    final PartitionTotals.Counter totals = new PartitionTotals.Counter();
    private final ExpiringRegistry<DedupWindow.Entry> dedup = DedupWindow.create();
    /** Copies' hand-off keys, on disk only (a poison flood makes one a message). */
    private final HandOffKeys handOffKeys;
    final ExpiringRegistry<ReceiveAttempts.Attempt> attempts = ReceiveAttempts.create();
    /** FIFO with a reorder window: each group's latest producer order delivered (see {@link GroupMarks}). */
    private final ExpiringRegistry<GroupMarks.Mark> marks = GroupMarks.create();
    /** FIFO: how late producer-timed messages arrive (in memory, per replica). */
    private final ArrivalSkew skew = new ArrivalSkew();

    private final ReceiveCommands receives = new ReceiveCommands(this);
    private final ReceiptHandleCommands handles = new ReceiptHandleCommands(this);
    final MoveTasks moveTasks = new MoveTasks(this, receives);

    /** Per-apply scratch: what the current command stores and triggers. */
    List<Mutation> mutations;
    private List<Effect> effects;

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
        long coldWake = coldWake(); // as of the last command: a cold group's head visible since then wakes polls too
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
        settleColdGroups();
        pageOut();
        mutations.add(new Mutation.Put(keys.meta(), RecordCodec.encodeMeta(meta())));
        if (finished()) {
            // a deleted queue's partition with nothing left to hand off: its records go, config and meta too, so
            // create/delete churn leaves nothing behind (a later command finds no such partition, as it should)
            mutations.add(new Mutation.DeleteRange(keys.rangeStart(), keys.rangeEnd()));
        }
        if (mayWake && hasDeliverable()) {
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
            return send(s, now);
        } else if (command instanceof Receive r) {
            return receives.receive(r, now);
        } else if (command instanceof Delete d) {
            return handles.delete(d, now);
        } else if (command instanceof ChangeVisibility c) {
            return handles.changeVisibility(c, now);
        } else if (command instanceof Purge) {
            return purge(now);
        } else if (command instanceof Expire e) {
            return expire(e.limit(), now);
        } else if (command instanceof AcknowledgeDeadLetters a) {
            return acknowledgeDeadLetters(a);
        } else if (command instanceof Retire r) {
            return retire(r.handOff());
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

    private boolean hasDeliverable() {
        // a group whose messages are all cold is ready when its head is visible: nothing of it is in flight
        return config.fifo() ? index.hasReadyGroup() || coldWalk().visible() : visibleCount() > 0;
    }

    /**
     * FIFO: whether a cold group's head is visible now, or else the earliest time one of those walked over becomes
     * visible (-1: none); from the first cold head, at most {@link #MAX_COLD_HEADS_WAKE} passed.
     */
    private record ColdWalk(long coldVersion, long now, boolean visible, long wakeMillis) {
        boolean validAt(long version, long at) {
            return coldVersion == version && (visible || wakeMillis < 0 || at < wakeMillis) && at >= now;
        }
    }

    private ColdWalk coldWalk() {
        long now = index.nowMillis();
        if (cold.isEmpty() || !config.fifo()) {
            return new ColdWalk(cold.version(), now, false, -1);
        }
        if (coldWalk == null || !coldWalk.validAt(cold.version(), now)) {
            long[] wake = {-1};
            boolean visible = nextVisibleColdHead(0, now, new int[] {MAX_COLD_HEADS_WAKE}, wake) != null;
            coldWalk = new ColdWalk(cold.version(), now, visible, visible ? -1 : wake[0]);
        }
        return coldWalk;
    }

    /**
     * FIFO: the first cold group after head seq {@code after} whose head is visible at {@code now}, passing over those
     * whose head is not while {@code passBudget[0]} lasts (each passed one spends one; {@code wake[0]} gets the
     * earliest time one of them becomes visible); null when there is none within the budget.
     */
    FifoColdGroups.Head nextVisibleColdHead(long after, long now, int[] passBudget, long[] wake) {
        FifoColdGroups.Head head;
        while ((head = coldGroups.headAfter(after)) != null) {
            MessageEntry e = coldState(head.seq());
            long visibleAt = e == null ? now : coldVisibleAt(e); // no state on record: paged in to be sorted out
            if (visibleAt <= now) {
                return head;
            }
            wake[0] = wake[0] < 0 ? visibleAt : Math.min(wake[0], visibleAt);
            if (--passBudget[0] < 0) {
                return null;
            }
            after = head.seq();
        }
        return null;
    }

    /** A cold message's state as the entry being applied leaves it, or null. */
    private MessageEntry coldState(long seq) {
        byte[] state = cold.get(keys.cold(seq));
        return state == null ? null : RecordCodec.decodeState(seq, state).entry();
    }

    /**
     * When a cold message is visible. Cold messages have never been received here; on a FIFO queue whose delay
     * changed since one was sent, the delay is retroactive (as for the messages in memory, see {@link #configure}): its
     * send plus the current delay, or its release by the reorder window if later.
     */
    long coldVisibleAt(MessageEntry e) {
        if (config.fifo() && e.seq < delayChangedSeq && e.receiveCount == 0 && e.receivedAtMillis == 0) {
            return Math.max(e.retentionBaseMillis + config.delaySeconds() * 1000L, e.releaseMillis);
        }
        return e.visibleAtMillis;
    }

    /** Visible messages, the cold tail's (all of them visible since their send) and the deferred tail's included. */
    int visibleCount() {
        return saturated(index.visibleCount() + cold.count() + deferred.dueCount());
    }

    /** Messages stored, the cold and deferred tails' included. */
    long size() {
        return index.size() + cold.count() + deferred.count();
    }

    /**
     * Standard: when the next message in delivery order before the indexed {@code next} (null: none indexed is
     * visible) waits on disk, in the cold or the deferred tail, pages in a page of that tail's.
     *
     * @return whether it paged in (the caller looks again)
     */
    boolean pageInBefore(MessageEntry next, long now) {
        boolean fromCold = !cold.isEmpty() && (next == null || cold.headBefore(next));
        boolean fromDeferred = deferred.hasDueHead(now)
                && (next == null || deferred.headBefore(next.visibleAtMillis, next.seq));
        if (fromCold && fromDeferred) {
            fromCold = cold.headBefore(deferred.headVisibleAt(), deferred.headSeq());
            fromDeferred = !fromCold;
        }
        if (fromCold) {
            pageIn();
        } else if (fromDeferred) {
            indexFromCold(deferred.takeDue(page, now, mutations));
        }
        return fromCold || fromDeferred;
    }

    /**
     * Standard: when more than {@link #hotLimit} plus a {@link #page} of the index's messages are visible, the latest in
     * delivery order go to the deferred tail until {@link #hotLimit} are (those a receive reaches last). Messages in
     * flight, delayed or pending a hand-off stay: their deadlines and receipt handles are the index's business.
     */
    private void pageOut() {
        if (config.fifo() || retired || index.visibleCount() <= hotLimit + page) {
            return;
        }
        while (index.visibleCount() > hotLimit) {
            MessageEntry e = index.lastVisible();
            index.remove(e);
            mutations.add(new Mutation.Delete(keys.state(e.seq)));
            deferred.add(e, index.nowMillis(), mutations);
        }
    }

    /**
     * The message {@code seq} in the index, brought in from the deferred tail when it waits there and was leased here
     * before (a receipt handle names it); null when neither has it.
     */
    MessageEntry indexed(long seq) {
        MessageEntry e = index.get(seq);
        if (e == null && !deferred.isEmpty()) {
            RecordCodec.DecodedState d = deferred.takeLeased(seq, index.nowMillis(), mutations);
            if (d != null) {
                indexFromCold(List.of(d));
                e = d.entry();
            }
        }
        return e;
    }

    private static int saturated(long n) {
        return (int) Math.min(Integer.MAX_VALUE, n);
    }

    /**
     * Reads the next page of the cold tail back into the index, oldest first: when a receive, a move or the expiry
     * reaches a cold message in its order (delivery order, retention order). FIFO: the oldest cold message's group's
     * next page, so that the group's messages in memory stay ahead of its cold ones.
     */
    void pageIn() {
        pageIn(page);
    }

    /** {@link #pageIn()}, at most {@code max} messages. */
    private void pageIn(int max) {
        RecordCodec.DecodedState oldest = config.fifo() ? cold.oldest() : null;
        if (oldest != null && oldest.groupId() != null) {
            // the oldest cold message's group's first cold ones (in producer order, it may come later in its group)
            long before = cold.count();
            String groupId = oldest.groupId();
            pageInGroup(groupId, index.group(groupId) == null ? coldGroups.first(groupId) : -1, max);
            if (cold.count() < before) {
                return;
            } // else its group record is missing (never written so): take that one message below, so expiry goes on
            max = 1;
        }
        indexFromCold(cold.take(max, mutations));
    }

    /** Cold messages taken out of the cold range go into the index (FIFO: into their groups, in order). */
    private void indexFromCold(List<RecordCodec.DecodedState> taken) {
        for (RecordCodec.DecodedState d : taken) {
            d.entry().visibleAtMillis = coldVisibleAt(d.entry());
            index.add(d.entry(), config.fifo() ? d.groupId() : null);
            putState(d.entry());
        }
    }

    /**
     * FIFO: moves up to {@code max} of a group's first cold messages (in its order) into the index, behind its
     * messages there (a group cold entirely comes into memory and its head record goes).
     *
     * @param headSeq the group's head record's seq when it is cold entirely (-1 when it has messages in memory; its
     *                cold ones start after the last of those)
     * @return the group, or null when it has nothing in memory after all
     */
    FifoGroup pageInGroup(String groupId, long headSeq, int max) {
        FifoGroup inMemory = index.group(groupId);
        byte[] from;
        if (inMemory != null) {
            from = PartitionKeys.after(coldGroups.memberKey(groupId, inMemory.messages.peekLast()));
        } else {
            MessageEntry head = headSeq < 0 ? null : coldState(headSeq);
            from = head == null ? keys.coldMembersStart(groupId) : coldGroups.memberKey(groupId, head);
        }
        List<byte[]> members = coldGroups.members(groupId, from, max + 1);
        List<byte[]> taking = members.subList(0, Math.min(max, members.size()));
        if (inMemory == null && headSeq >= 0) {
            coldGroups.removeHead(headSeq, mutations); // also a head record left without messages: it goes
        }
        List<Long> seqs = new ArrayList<>(taking.size());
        for (byte[] member : taking) {
            coldGroups.removeMember(member, mutations);
            seqs.add(PartitionKeys.memberSeqOf(member));
        }
        indexFromCold(cold.take(seqs, mutations));
        FifoGroup g = index.group(groupId);
        boolean more = members.size() > taking.size();
        if (g != null) {
            g.hasCold = more;
        } else if (more) {
            coldGroups.putHead(PartitionKeys.memberSeqOf(members.get(taking.size())), groupId, mutations);
        }
        return g;
    }

    /**
     * FIFO: a group that still has cold messages but none in memory any more (deleted, expired, handed off) is cold
     * entirely from now on: its oldest cold message becomes its head record. Called after every command.
     */
    private void settleColdGroups() {
        for (FifoGroup g : index.drainEmptiedWithCold()) {
            if (index.group(g.id) == null) { // else it came back in the same command, which set its hasCold
                long head = coldGroups.first(g.id);
                if (head >= 0) {
                    coldGroups.putHead(head, g.id, mutations);
                }
            }
        }
    }

    /**
     * FIFO: keeps a new message on disk only, at its place among its group's cold messages (producer order), when the
     * group has some or the index is full; unless it orders before the group's last message in memory (a reorder
     * window's straggler), which keeps the group's messages in memory ahead of its cold ones. A message that orders
     * before a cold group's head becomes its head.
     */
    private boolean sendToColdGroup(String groupId, MessageEntry e) {
        FifoGroup g = index.group(groupId);
        long head = -1;
        if (g != null) {
            if (!g.hasCold && index.size() < hotLimit
                    || MessageEntry.BY_PRODUCER_ORDER.compare(g.messages.peekLast(), e) > 0) {
                return false;
            }
        } else {
            head = coldGroups.first(groupId);
            if (head < 0 && index.size() < hotLimit) {
                return false;
            }
        }
        e.fifoGroupId = groupId;
        cold.add(e, mutations);
        coldGroups.addMember(groupId, e, mutations);
        if (g != null) {
            g.hasCold = true;
        } else if (head < 0) {
            coldGroups.putHead(e.seq, groupId, mutations); // a group cold entirely
        } else {
            MessageEntry headState = coldState(head);
            if (headState != null && MessageEntry.BY_PRODUCER_ORDER.compare(e, headState) < 0) {
                coldGroups.removeHead(head, mutations); // it goes before the group's head: the new head
                coldGroups.putHead(e.seq, groupId, mutations);
            }
        }
        return true;
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
            coldWalk = null;
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

    // ---- Send -----------------------------------------------------------------------------------------------

    private PartitionResponse send(Send command, long now) {
        if (config.fifo()) {
            for (NewMessage m : command.messages()) {
                if (m.groupId() == null) {
                    return new Rejected(SqsError.MISSING_PARAMETER.withMessage(
                            "The request must contain the parameter MessageGroupId."));
                }
                if (m.deduplicationId() == null && !config.contentBasedDeduplication() && m.provenance() == null) {
                    return new Rejected(SqsError.INVALID_PARAMETER_VALUE.withMessage("The queue should either have"
                            + " ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly"));
                }
            }
        }
        int limit = config.maxBacklog();
        if (limit > 0 && size() - index.deadLetterPending().size() + newMessages(command, now) > limit
                && command.messages().stream().anyMatch(m -> !isDeadLetterHandOff(m))) {
            return new Rejected(SqsError.REQUEST_THROTTLED.withMessage("The queue's backlog limit (SluiceMaxBacklog,"
                    + " " + limit + " messages per partition) is reached; retry later."));
        }
        if (config.fifo() && index.size() + newMessages(command, now) > maxIndexed) {
            // refused before the partition's memory passes its bound, never a crash that every replica would repeat
            return new Rejected(SqsError.REQUEST_THROTTLED.withMessage("The partition holds " + index.size()
                    + " messages in memory, its most for a FIFO queue; retry later."));
        }
        List<SentMessage> sent = new ArrayList<>(command.messages().size());
        for (NewMessage m : command.messages()) {
            sent.add(sendOne(m, now));
        }
        return new Sent(sent);
    }

    /**
     * A dead-letter queue's copy of an exhausted message: never refused by the backlog limit (the source has
     * already given it up). A redrive's copy is an ordinary send as far as the limit goes: the task fails and the
     * message stays where it was.
     */
    private static boolean isDeadLetterHandOff(NewMessage m) {
        return m.provenance() != null && m.provenance().deadLetterSourceArn() != null;
    }

    /** Messages of a send that would be stored (FIFO duplicates inside the window are answered, not stored). */
    private int newMessages(Send command, long now) {
        int n = 0;
        for (NewMessage m : command.messages()) {
            String key = dedupKey(m);
            n += key != null && findDuplicate(key, now) != null ? 0 : 1;
        }
        return n;
    }

    /**
     * The deduplication key of a FIFO send, or of a dead-letter hand-off's copy (any queue type: one copy per
     * hand-off however many movers execute it); null for other sends and moves.
     */
    private String dedupKey(NewMessage m) {
        if (m.provenance() != null) {
            // '\0' never starts a FIFO key (valid deduplication and group ids are printable ASCII)
            return m.provenance().handOffKey() == null ? null : "\0handoff\n" + m.provenance().handOffKey();
        }
        if (!config.fifo()) {
            return null;
        }
        String dedupId = m.deduplicationId() != null ? m.deduplicationId() : MessageDigests.contentDeduplicationId(m.body());
        // Valid ids are printable ASCII, so '\n' cannot collide with either part.
        return config.deduplicationPerGroup() ? m.groupId() + "\n" + dedupId : dedupId;
    }

    /** The live window entry of a deduplication key: FIFO ids in memory, copies' hand-off keys on disk. */
    private DedupWindow.Entry findDuplicate(String key, long now) {
        DedupWindow.Entry e = dedup.find(key, now); // hand-off keys too, when remembered before HandOffKeys existed
        return e != null || key.charAt(0) != '\0' ? e : handOffKeys.find(key, now);
    }

    private SentMessage sendOne(NewMessage m, long now) {
        String dedupKey = dedupKey(m);
        if (dedupKey != null) {
            DedupWindow.Entry original = findDuplicate(dedupKey, now);
            if (original != null) {
                return new SentMessage(original.messageId(), original.seq(), original.sequenceNumber(), true);
            }
        }
        String dedupId = null;
        if (config.fifo() && m.provenance() == null) {
            dedupId = m.deduplicationId() != null ? m.deduplicationId() : MessageDigests.contentDeduplicationId(m.body());
        } else if (config.fifo()) {
            dedupId = m.deduplicationId();
        }
        long seq = nextSeq++;
        totals.sent++;
        String sequenceNumber = config.fifo() ? String.format(Locale.ROOT, "%020d", seq) : null; // every replica alike
        MessageEntry e = new MessageEntry(seq);
        NewMessage.Provenance p = m.provenance();
        long sentTimestamp = now;
        long delayMillis;
        if (p != null) {
            sentTimestamp = p.sentTimestampMillis();
            e.receiveCount = p.receiveCount();
            e.firstReceiveMillis = p.firstReceiveTimestampMillis();
            // Standard queues keep counting retention from the original send; FIFO queues restart it.
            e.retentionBaseMillis = config.fifo() ? now : sentTimestamp;
            delayMillis = 0;
        } else {
            e.retentionBaseMillis = now;
            int delaySeconds = config.fifo() || m.delaySeconds() < 0 ? config.delaySeconds() : m.delaySeconds();
            delayMillis = delaySeconds * 1000L;
        }
        e.visibleAtMillis = now + delayMillis;
        Map<String, MessageAttributeValue> attributes = m.attributes();
        if (config.fifo()) {
            e.orderMillis = now;
            if (p == null && placeInProducerOrder(m, e, now)) {
                attributes = new TreeMap<>(attributes);
                attributes.put(ProducerOrder.LATE, new MessageAttributeValue("String", "true", null));
            }
        }
        if (!config.fifo() && p == null && delayMillis == 0 && (!cold.isEmpty() || index.size() >= hotLimit)) {
            cold.add(e, mutations); // behind the cold messages sent before it: send order is kept
        } else if (!config.fifo() && index.size() >= hotLimit) {
            deferred.add(e, now, mutations); // delayed, or a copy with its own retention: by delivery order
        } else if (config.fifo() && sendToColdGroup(m.groupId(), e)) {
            // on disk only, behind its group's cold messages
        } else {
            index.add(e, config.fifo() ? m.groupId() : null);
            putState(e);
        }
        StoredMessage stored = new StoredMessage(m.messageId(), m.body(), attributes, m.systemAttributes(),
                sentTimestamp, m.groupId(), dedupId, sequenceNumber, m.senderId(),
                p == null ? null : p.deadLetterSourceArn(), p == null ? null : p.deadLetterReason());
        mutations.add(new Mutation.Put(keys.body(seq), PayloadCodec.encodeMessage(stored)));
        if (dedupKey != null) {
            DedupWindow.Entry entry = new DedupWindow.Entry(dedupKey, m.messageId(), seq, sequenceNumber,
                    now + SqsLimits.DEDUPLICATION_WINDOW_MILLIS);
            if (m.provenance() != null) {
                handOffKeys.remember(entry, mutations);
            } else {
                dedup.remember(entry);
                mutations.add(new Mutation.Put(keys.dedup(dedupKey), RecordCodec.encodeDedup(entry)));
            }
        }
        return new SentMessage(m.messageId(), seq, sequenceNumber, false);
    }

    // ---- Producer order (FIFO reorder window) -----------------------------------------------------------------

    /**
     * Places a FIFO send in its group's producer order and sets when it may be delivered (its {@code visibleAt} is the
     * queue delay's on entry). Records the arrival skew of producer-timed messages on every FIFO queue. With a reorder
     * window, the message is ordered by its producer time (never after its arrival: a producer clock ahead of the
     * partition's counts as the arrival) and producer id, and is deliverable once the partition's time passes that
     * order time plus the window, or its delay, whichever is later; without a producer time it is ordered by its
     * arrival and waits the window from then. A message ordered before its group's mark (something after it in
     * producer order was delivered) is late: it is not held back.
     *
     * @return whether the message is late
     */
    private boolean placeInProducerOrder(NewMessage m, MessageEntry e, long now) {
        long producerTime = producerTime(m);
        if (producerTime >= 0) {
            skew.record(now - producerTime, now);
        }
        int window = config.reorderWindowMillis();
        if (window == 0) {
            return false;
        }
        if (producerTime >= 0) {
            e.orderMillis = Math.min(producerTime, now);
            MessageAttributeValue id = m.attributes().get(ProducerOrder.PRODUCER_ID);
            e.producerId = id == null || id.stringValue() == null ? null : id.stringValue();
        }
        GroupMarks.Mark mark = marks.find(m.groupId(), now);
        if (mark != null ? mark.isAfter(e) : inFlightAfter(m.groupId(), e)) {
            totals.late++;
            return true;
        }
        e.releaseMillis = e.orderMillis + window;
        e.visibleAtMillis = Math.max(e.visibleAtMillis, e.releaseMillis);
        return false;
    }

    /**
     * Whether a message of the group after {@code e} in producer order is in flight: delivered, so {@code e} is late,
     * though the group's mark has expired (a lease longer than the mark is kept). Scans the group only then.
     */
    private boolean inFlightAfter(String groupId, MessageEntry e) {
        FifoGroup g = index.group(groupId);
        if (g == null || g.inflight == 0) {
            return false;
        }
        for (MessageEntry other : g.messages) {
            if (other.status(index.nowMillis()) == MessageEntry.Status.INFLIGHT
                    && MessageEntry.BY_PRODUCER_ORDER.compare(other, e) > 0) {
                return true;
            }
        }
        return false;
    }

    /** A message's {@code Sluice.ProducerTime}, or -1 when it has none (or not a non-negative whole number). */
    private static long producerTime(NewMessage m) {
        MessageAttributeValue v = m.attributes().get(ProducerOrder.PRODUCER_TIME);
        return v == null || !v.dataType().startsWith("Number") ? -1 : ProducerOrder.parseProducerTime(v.stringValue());
    }

    /** A consumer received {@code e}: with a reorder window, its group's mark moves up to it. */
    void delivered(MessageEntry e, long now) {
        if (config.reorderWindowMillis() == 0 || e.fifoGroupId == null) {
            return;
        }
        GroupMarks.Mark mark = marks.find(e.fifoGroupId, now);
        GroupMarks.Mark next = mark == null || !mark.isAfter(e) // e is at or after the mark: the mark moves up
                ? new GroupMarks.Mark(e.fifoGroupId, e.orderMillis, e.producerId, now + GroupMarks.REMEMBER_MILLIS)
                : new GroupMarks.Mark(e.fifoGroupId, mark.orderMillis(), mark.producerId(),
                        now + GroupMarks.REMEMBER_MILLIS);
        marks.remember(next);
        mutations.add(new Mutation.Put(keys.groupMark(e.fifoGroupId), RecordCodec.encodeMark(next)));
    }

    // ---- Purge, Expire, dead letters, Retire ---------------------------------------------------------------

    private PartitionResponse purge(long now) {
        if (lastPurgeMillis >= 0 && now - lastPurgeMillis < SqsLimits.PURGE_INTERVAL_MILLIS) {
            return new Rejected(SqsError.PURGE_QUEUE_IN_PROGRESS.failure());
        }
        int purged = saturated(size());
        totals.purged += purged - index.deadLetterPending().size(); // pending hand-offs were counted as dead-lettered
        index.clear();
        cold.clear();
        mutations.add(new Mutation.DeleteRange(keys.typePrefix(PartitionKeys.BODY), keys.typeEnd(PartitionKeys.BODY)));
        mutations.add(new Mutation.DeleteRange(keys.typePrefix(PartitionKeys.STATE), keys.typeEnd(PartitionKeys.STATE)));
        for (byte type : new byte[] {PartitionKeys.COLD, PartitionKeys.COLD_MEMBER, PartitionKeys.COLD_HEAD}) {
            cold.deleteRange(keys.typePrefix(type), keys.typeEnd(type), mutations);
        }
        deferred.clear(mutations);
        lastPurgeMillis = now;
        return new Count(purged);
    }

    private PartitionResponse expire(int limit, long now) {
        int expired = 0;
        int pagedIn = 0; // FIFO: the oldest cold message may come late in its group; at most limit read to reach it
        if (!retired) {
            while (expired < limit) { // in retention order over the index and the cold and deferred tails together
                MessageEntry oldest = index.oldestByRetention();
                boolean fromDeferred = oldest == null ? !deferred.isEmpty() : deferred.oldestExpiresBefore(oldest);
                if (fromDeferred && !cold.isEmpty()) {
                    fromDeferred = !cold.headExpiresBefore(deferred.oldestRetentionMillis(), deferred.oldestSeq());
                }
                if (fromDeferred) {
                    if (!deferred.oldestExpired(now, config.retentionSeconds() * 1000L)
                            || expiryHandsOff() && !mayHandOff(0)) {
                        break;
                    }
                    RecordCodec.DecodedState d = deferred.takeOldestByRetention(now, mutations);
                    if (d != null) {
                        indexFromCold(List.of(d)); // expired (or handed off) from the index next
                    }
                    continue;
                }
                if (oldest == null ? !cold.isEmpty() : cold.headExpiresBefore(oldest)) {
                    if (!cold.oldestExpired(now, config.retentionSeconds() * 1000L)) {
                        break;
                    }
                    // standard: the next page in retention order; FIFO: the oldest cold message alone, since the
                    // rest of its group's page may be far from expiring while other groups' heads are due (a page
                    // per group would bring up to limit x page messages into memory in one sweep, and keep them)
                    if (config.fifo() && pagedIn++ >= limit) {
                        break;
                    }
                    pageIn(config.fifo() ? 1 : Math.max(1, Math.min(page, limit - expired)));
                    continue;
                }
                if (oldest == null || !isExpired(oldest, now) || expiryHandsOff() && !mayHandOff(0)) {
                    break;
                }
                expireOne(oldest);
                expired++;
            }
        } else if (!cold.isEmpty() || !deferred.isEmpty()) {
            // a deleted queue's cold and deferred messages are handed off a page per sweep (all at once could be
            // millions)
            int room = Math.max(0, maxPendingHandOffs - index.deadLetterPending().size());
            int max = Math.min(Math.min(limit, page), room);
            for (RecordCodec.DecodedState d : !cold.isEmpty() ? cold.take(max, mutations)
                    : deferred.takeAny(max, now, mutations)) {
                index.add(d.entry(), null);
                deadLetter(d.entry(), DeadLetterReason.SOURCE_QUEUE_DELETED);
                expired++;
            }
        }
        MessageEntry stuck;
        while (expired < limit && (stuck = index.oldestPending()) != null && isHandOffExpired(stuck, now)) {
            index.remove(stuck); // its dead-letter queue has been gone for a retention period: dropped
            deleteMessageKeys(stuck.seq);
            totals.expired++;
            expired++;
        }
        dedup.forgetExpired(now, key -> mutations.add(new Mutation.Delete(keys.dedup(key))));
        handOffKeys.forgetExpired(now, mutations);
        attempts.forgetExpired(now, attemptId -> mutations.add(new Mutation.Delete(keys.attempt(attemptId))));
        marks.forgetExpired(now, groupId -> mutations.add(new Mutation.Delete(keys.groupMark(groupId))));
        return new Count(expired);
    }

    /**
     * A hand-off still pending one retention period after it was made cannot be delivered to its dead-letter queue
     * (gone, or refusing it): it is dropped like an expired message, so it cannot stay on disk for ever.
     */
    private boolean isHandOffExpired(MessageEntry pending, long now) {
        return now - pending.visibleAtMillis >= config.retentionSeconds() * 1000L;
    }

    /** Whether an {@code Expire} command would change anything now (a message past retention, an old window entry). */
    public boolean needsSweep(long now) {
        MessageEntry oldest = index.oldestByRetention();
        MessageEntry pending = index.oldestPending();
        boolean mayExpire = !retired && (!expiryHandsOff() || mayHandOff(0)); // at the bound: once hand-offs drain
        return (mayExpire && oldest != null && isExpired(oldest, now))
                || (mayExpire && cold.oldestExpired(now, config.retentionSeconds() * 1000L))
                || (mayExpire && deferred.oldestExpired(now, config.retentionSeconds() * 1000L))
                // a deleted queue's cold and deferred messages still to hand off
                || (retired && (!cold.isEmpty() || !deferred.isEmpty()) && mayHandOff(0))
                || (pending != null && isHandOffExpired(pending, now))
                || dedup.hasExpired(now) || handOffKeys.hasExpired(now) || attempts.hasExpired(now)
                || marks.hasExpired(now)
                || mayPageOut(now);
    }

    /**
     * Standard: the index holds more than its limit and a deadline passed since the last command (a lease lapsed, a
     * delay ran out), so it may hold more visible messages than it keeps: a command pages them out. An idle partition
     * whose consumers stopped deleting (crash-looping) gets that command from the sweep.
     */
    private boolean mayPageOut(long now) {
        long next = index.nextDeadlineMillis();
        return !config.fifo() && !retired && index.size() > hotLimit + page && next > 0 && next <= now;
    }

    /**
     * How long a consumer's lease on {@code e} (just counted as its {@code receiveCount}-th receive), once lapsed,
     * keeps it invisible on top: the queue's {@code SluiceRedeliveryBackoff}, jittered by a number derived from the
     * partition, the message and its receive count, so every replica computes the same. None when the queue has no
     * backoff, or when the next receive would hand the message to the dead-letter queue (no point waiting for that).
     */
    long redeliveryBackoffMillis(MessageEntry e) {
        RedeliveryBackoff backoff = config.redeliveryBackoff();
        if (backoff == null || (config.hasDeadLetterQueue() && e.receiveCount >= config.maxReceiveCount())) {
            return 0;
        }
        return backoff.delayMillis(e.receiveCount, jitterUnit(e.seq, e.receiveCount));
    }

    /** A number in [0, 1) from the partition, a message and its receive count (a 64-bit mix, the same everywhere). */
    private double jitterUnit(long seq, int receiveCount) {
        long h = id.queueId() * 0x9E3779B97F4A7C15L + id.index();
        h = (h ^ seq) * 0xBF58476D1CE4E5B9L;
        h = (h ^ receiveCount) * 0x94D049BB133111EBL;
        h ^= h >>> 31;
        h *= 0xFF51AFD7ED558CCDL;
        h ^= h >>> 33;
        return (h >>> 11) * 0x1.0p-53;
    }

    boolean isExpired(MessageEntry e, long now) {
        return now - e.retentionBaseMillis >= config.retentionSeconds() * 1000L;
    }

    /** Whether a message past retention is handed off to the dead-letter queue rather than dropped. */
    boolean expiryHandsOff() {
        return config.deadLetterOnExpiry() && config.hasDeadLetterQueue();
    }

    /**
     * Whether one more dead-letter hand-off may be made, given {@code planned} more that the current command is about
     * to make: fewer than {@link #maxPendingHandOffs} pending.
     */
    boolean mayHandOff(int planned) {
        return index.deadLetterPending().size() + planned < maxPendingHandOffs;
    }

    void expireOne(MessageEntry e) {
        if (expiryHandsOff()) {
            deadLetter(e, DeadLetterReason.RETENTION_EXPIRED);
        } else {
            index.remove(e);
            deleteMessageKeys(e.seq);
            totals.expired++;
        }
    }

    void deadLetter(MessageEntry e, DeadLetterReason reason) {
        index.markDeadLetter(e, reason);
        totals.deadLettered(reason);
        putState(e);
        effects.add(deadLetterEffect(e));
    }

    private Effect.DeadLetter deadLetterEffect(MessageEntry e) {
        return new Effect.DeadLetter(id, e.seq, e.deadLetterReason, e.receiveCount, e.firstReceiveMillis);
    }

    private PartitionResponse acknowledgeDeadLetters(AcknowledgeDeadLetters command) {
        int removed = 0;
        for (long seq : command.seqs()) {
            MessageEntry e = index.deadLetterPending().get(seq);
            if (e != null) {
                index.remove(e);
                deleteMessageKeys(seq);
                removed++;
            }
        }
        return new Count(removed);
    }

    private PartitionResponse retire(boolean handOff) {
        retired = true;
        if (handOff && config.hasDeadLetterQueue()) {
            // the indexed messages are handed off now, the cold ones a page per sweep (Expire) after, in seq order
            // (FIFO groups no longer matter: nothing is received from a deleted queue)
            for (byte type : new byte[] {PartitionKeys.COLD_MEMBER, PartitionKeys.COLD_HEAD}) {
                cold.deleteRange(keys.typePrefix(type), keys.typeEnd(type), mutations);
            }
            int handedOff = saturated(cold.count() + deferred.count());
            for (MessageEntry e : index.entriesInSeqOrder()) {
                if (!e.isDeadLetterPending()) {
                    deadLetter(e, DeadLetterReason.SOURCE_QUEUE_DELETED);
                    handedOff++;
                }
            }
            return new Count(handedOff);
        }
        int dropped = saturated(size());
        index.clear();
        cold.clear();
        deferred.clear(mutations);
        handOffKeys.clear();
        moveTasks.clear();
        cold.deleteRange(keys.rangeStart(), keys.rangeEnd(), mutations);
        mutations.add(new Mutation.Put(keys.config(), PayloadCodec.encodeConfig(config)));
        return new Count(dropped);
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
        marks.recover(groupMarks);
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
        return skew.snapshot();
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
                skew.p99Millis(index.nowMillis()));
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
                oldestRetentionBaseMillis(), oldestHandOffMillis(), skew.p99Millis(Math.max(nowMillis, index.nowMillis())),
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
        long coldWake = coldWake();
        return earliest(earliest(index.nextDeadlineAfter(t), deferred.nextDeadlineAfter(Math.max(t, index.nowMillis()))),
                coldWake > t ? coldWake : -1);
    }

    /** The next time a delayed or in-flight message becomes visible, or -1: when to re-check parked polls. */
    public long nextDeadlineMillis() {
        return earliest(earliest(index.nextDeadlineMillis(), deferred.nextDeadlineAfter(index.nowMillis())), coldWake());
    }

    /** FIFO: when a cold group's head becomes visible next (as far as {@link #coldWalk} looks), or -1. */
    private long coldWake() {
        return config.fifo() && !cold.isEmpty() ? coldWalk().wakeMillis() : -1;
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
            out.add(deadLetterEffect(e));
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
                + "\nmarks=" + marks.snapshot(GroupMarks.Mark::describe)
                + "\nmoveTasks=" + moveTasks.describe() + "\n";
    }
}
