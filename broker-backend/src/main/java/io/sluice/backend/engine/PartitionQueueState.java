package io.sluice.backend.engine;

import io.sluice.backend.engine.MessageEntry.Status;
import io.sluice.backend.engine.PartitionCommand.AcknowledgeDeadLetters;
import io.sluice.backend.engine.PartitionCommand.ChangeVisibility;
import io.sluice.backend.engine.PartitionCommand.Configure;
import io.sluice.backend.engine.PartitionCommand.Delete;
import io.sluice.backend.engine.PartitionCommand.Expire;
import io.sluice.backend.engine.PartitionCommand.Purge;
import io.sluice.backend.engine.PartitionCommand.Receive;
import io.sluice.backend.engine.PartitionCommand.Retire;
import io.sluice.backend.engine.PartitionCommand.Send;
import io.sluice.backend.engine.PartitionCommand.VisibilityChange;
import io.sluice.backend.engine.PartitionResponse.Count;
import io.sluice.backend.engine.PartitionResponse.Delivery;
import io.sluice.backend.engine.PartitionResponse.Done;
import io.sluice.backend.engine.PartitionResponse.EntryOutcomes;
import io.sluice.backend.engine.PartitionResponse.Received;
import io.sluice.backend.engine.PartitionResponse.Rejected;
import io.sluice.backend.engine.PartitionResponse.Sent;
import io.sluice.backend.engine.PartitionResponse.SentMessage;
import io.sluice.common.MessageDigests;
import io.sluice.common.ReceiptHandle;
import io.sluice.common.SqsError;
import io.sluice.common.SqsFailure;
import io.sluice.common.SqsLimits;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The state of one queue partition, as a pure function of its command log:
 * {@link #apply(PartitionCommand, long)} returns the response, the storage mutations (one atomic batch) and
 * the effects. No threads, no I/O, no clock: time is the leader's, passed in with each command, and is clamped
 * to never go back, so replaying the same log on any replica gives the same state.
 *
 * <p>Rules implemented here (see docs/architecture.md for the reasoning):
 * visibility and delay deadlines; receive counts and first-receive time; dead-letter hand-off on the receive
 * that would exceed {@code maxReceiveCount}; stale receipt handles; the 12-hour in-flight cap; retention;
 * purge once per 60 s; FIFO group order and blocking, 5-minute deduplication and receive attempts; the
 * in-flight limit.
 */
public final class PartitionQueueState {
    private final PartitionId id;
    private final PartitionKeys keys;
    private PartitionConfig config;
    private long nextSeq = 1;
    private long lastPurgeMillis = -1;
    private boolean retired;
    private final MessageIndex index = new MessageIndex();
    private final ExpiringRegistry<DedupWindow.Entry> dedup = DedupWindow.create();
    private final ExpiringRegistry<ReceiveAttempts.Attempt> attempts = ReceiveAttempts.create();

    /** Per-apply scratch: what the current command stores and triggers. */
    private List<Mutation> mutations;
    private List<Effect> effects;

    public PartitionQueueState(PartitionId id, PartitionConfig config) {
        this.id = id;
        this.keys = new PartitionKeys(id);
        this.config = config;
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
     * Applies one command at the leader's time. Never throws for bad input: domain errors are in the response.
     */
    public ApplyResult apply(PartitionCommand command, long leaderTimeMillis) {
        mutations = new ArrayList<>();
        effects = new ArrayList<>();
        long now = Math.max(leaderTimeMillis, index.nowMillis());
        int becameVisible = index.advanceTo(now);
        boolean mayWake = becameVisible > 0;
        PartitionResponse response;
        if (retired && !(command instanceof AcknowledgeDeadLetters) && !(command instanceof Expire)) {
            response = new Rejected(SqsError.QUEUE_DOES_NOT_EXIST.failure());
        } else {
            response = dispatch(command, now);
            mayWake |= !(command instanceof Receive);
        }
        mutations.add(new Mutation.Put(keys.meta(), RecordCodec.encodeMeta(meta())));
        if (mayWake && hasDeliverable()) {
            effects.add(new Effect.MessagesAvailable(id, index.visibleCount()));
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
            return receive(r, now);
        } else if (command instanceof Delete d) {
            return delete(d, now);
        } else if (command instanceof ChangeVisibility c) {
            return changeVisibility(c, now);
        } else if (command instanceof Purge) {
            return purge(now);
        } else if (command instanceof Expire e) {
            return expire(e.limit(), now);
        } else if (command instanceof AcknowledgeDeadLetters a) {
            return acknowledgeDeadLetters(a);
        } else if (command instanceof Retire r) {
            return retire(r.handOff());
        }
        throw new IllegalArgumentException("unknown command " + command.getClass());
    }

    private boolean hasDeliverable() {
        return config.fifo() ? index.hasReadyGroup() : index.visibleCount() > 0;
    }

    // ---- Configure ------------------------------------------------------------------------------------------

    private PartitionResponse configure(PartitionConfig next, long now) {
        if (next.fifo() != config.fifo() && index.size() > 0) {
            return new Rejected(SqsError.INVALID_ATTRIBUTE_VALUE.withMessage(
                    "Invalid value for the parameter FifoQueue. Reason: Modifying queue type is not supported."));
        }
        PartitionConfig previous = config;
        config = next;
        mutations.add(new Mutation.Put(keys.config(), RecordCodec.encodeConfig(next)));
        if (next.fifo() && next.delaySeconds() != previous.delaySeconds()) {
            // FIFO queue delay is retroactive for messages never received.
            for (MessageEntry e : index.entriesInSeqOrder()) {
                if (!e.isDeadLetterPending() && e.receiveCount == 0 && e.receivedAtMillis == 0) {
                    index.update(e, m -> m.visibleAtMillis = m.retentionBaseMillis + next.delaySeconds() * 1000L);
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
        List<SentMessage> sent = new ArrayList<>(command.messages().size());
        for (NewMessage m : command.messages()) {
            sent.add(sendOne(m, now));
        }
        return new Sent(sent);
    }

    private SentMessage sendOne(NewMessage m, long now) {
        String dedupKey = null;
        String dedupId = null;
        if (config.fifo() && m.provenance() == null) {
            dedupId = m.deduplicationId() != null ? m.deduplicationId() : MessageDigests.contentDeduplicationId(m.body());
            // Valid ids are printable ASCII, so '\n' cannot collide with either part.
            dedupKey = config.deduplicationPerGroup() ? m.groupId() + "\n" + dedupId : dedupId;
            DedupWindow.Entry original = dedup.find(dedupKey, now);
            if (original != null) {
                return new SentMessage(original.messageId(), original.seq(), original.sequenceNumber(), true);
            }
        } else if (config.fifo()) {
            dedupId = m.deduplicationId();
        }
        long seq = nextSeq++;
        String sequenceNumber = config.fifo() ? String.format("%020d", seq) : null;
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
        index.add(e, config.fifo() ? m.groupId() : null);
        StoredMessage stored = new StoredMessage(m.messageId(), m.body(), m.attributes(), m.systemAttributes(),
                sentTimestamp, m.groupId(), dedupId, sequenceNumber, m.senderId(),
                p == null ? null : p.deadLetterSourceArn());
        mutations.add(new Mutation.Put(keys.body(seq), RecordCodec.encodeMessage(stored)));
        putState(e);
        if (dedupKey != null) {
            DedupWindow.Entry entry = new DedupWindow.Entry(dedupKey, m.messageId(), seq, sequenceNumber,
                    now + SqsLimits.DEDUPLICATION_WINDOW_MILLIS);
            dedup.remember(entry);
            mutations.add(new Mutation.Put(keys.dedup(dedupKey), RecordCodec.encodeDedup(entry)));
        }
        return new SentMessage(m.messageId(), seq, sequenceNumber, false);
    }

    // ---- Receive --------------------------------------------------------------------------------------------

    private PartitionResponse receive(Receive command, long now) {
        int max = Math.max(0, Math.min(command.maxMessages(), SqsLimits.MAX_RECEIVE_MESSAGES));
        int visibilitySeconds = command.visibilityTimeoutSeconds() >= 0
                ? Math.min(command.visibilityTimeoutSeconds(), SqsLimits.MAX_VISIBILITY_TIMEOUT_SECONDS)
                : config.visibilityTimeoutSeconds();
        String attemptId = config.fifo() ? command.receiveRequestAttemptId() : null;
        if (attemptId != null) {
            List<Delivery> replayed = replayAttempt(attemptId, visibilitySeconds, now);
            if (replayed != null) {
                return new Received(replayed);
            }
        }
        int room = config.maxInflight() - index.inflightCount();
        if (room <= 0) {
            return config.fifo() ? new Received(List.of()) : new Rejected(SqsError.OVER_LIMIT.withMessage(
                    "The maximum number of in flight messages is reached."));
        }
        int capacity = Math.min(max, room);

        List<MessageEntry> chosen = new ArrayList<>(capacity);
        List<MessageEntry> expired = new ArrayList<>();
        List<MessageEntry> exhausted = new ArrayList<>();
        if (config.fifo()) {
            Set<FifoGroup> visited = new HashSet<>();
            for (FifoGroup g : index.readyGroups()) {
                if (chosen.size() >= capacity) {
                    break;
                }
                if (!visited.add(g)) {
                    continue;
                }
                for (MessageEntry e : g.messages) {
                    if (chosen.size() >= capacity || e.visibleAtMillis > now) {
                        break;
                    }
                    classifyCandidate(e, now, chosen, expired, exhausted);
                }
            }
        } else {
            for (MessageEntry e : index.visibleInOrder()) {
                if (chosen.size() >= capacity) {
                    break;
                }
                classifyCandidate(e, now, chosen, expired, exhausted);
            }
        }
        for (MessageEntry e : expired) {
            expireOne(e);
        }
        for (MessageEntry e : exhausted) {
            deadLetter(e, DeadLetterReason.MAX_RECEIVES_EXCEEDED);
        }
        List<Delivery> deliveries = lease(chosen, now, visibilitySeconds, true);
        if (attemptId != null && !deliveries.isEmpty()) {
            rememberAttempt(attemptId, chosen, now);
        }
        return new Received(deliveries);
    }

    /**
     * Leases messages until {@code now + visibilitySeconds}. A new receive counts ({@code countReceive}); a replayed
     * receive attempt keeps the count and handle and only restarts the visibility timeout.
     */
    private List<Delivery> lease(List<MessageEntry> entries, long now, int visibilitySeconds, boolean countReceive) {
        long deadline = now + visibilitySeconds * 1000L;
        List<Delivery> deliveries = new ArrayList<>(entries.size());
        for (MessageEntry e : entries) {
            index.update(e, m -> {
                if (countReceive) {
                    m.receiveCount++;
                    if (m.firstReceiveMillis == 0) {
                        m.firstReceiveMillis = now;
                    }
                }
                m.receivedAtMillis = now;
                m.visibleAtMillis = deadline;
            });
            putState(e);
            deliveries.add(delivery(e));
        }
        return deliveries;
    }

    private void classifyCandidate(MessageEntry e, long now, List<MessageEntry> chosen, List<MessageEntry> expired,
                                   List<MessageEntry> exhausted) {
        if (isExpired(e, now)) {
            expired.add(e);
        } else if (config.hasDeadLetterQueue() && e.receiveCount + 1 > config.maxReceiveCount()) {
            exhausted.add(e);
        } else {
            chosen.add(e);
        }
    }

    private Delivery delivery(MessageEntry e) {
        return new Delivery(e.seq, new ReceiptHandle(id.queueId(), id.index(), e.seq, e.receiveCount), e.receiveCount,
                e.firstReceiveMillis);
    }

    /** Returns the attempt's deliveries with restarted visibility, or null when it cannot be replayed. */
    private List<Delivery> replayAttempt(String attemptId, int visibilitySeconds, long now) {
        ReceiveAttempts.Attempt attempt = attempts.find(attemptId, now);
        if (attempt == null) {
            return null;
        }
        long[] leases = attempt.leases();
        List<MessageEntry> entries = new ArrayList<>();
        for (int i = 0; i < leases.length; i += 3) {
            MessageEntry e = index.get(leases[i]);
            if (e == null || e.isDeadLetterPending() || e.receiveCount != leases[i + 1]
                    || e.visibleAtMillis != leases[i + 2] || isExpired(e, now)) {
                return null;
            }
            entries.add(e);
        }
        List<Delivery> deliveries = lease(entries, now, visibilitySeconds, false);
        rememberAttempt(attemptId, entries, now);
        return deliveries;
    }

    private void rememberAttempt(String attemptId, List<MessageEntry> leased, long now) {
        long[] leases = new long[leased.size() * 3];
        for (int i = 0; i < leased.size(); i++) {
            MessageEntry e = leased.get(i);
            leases[3 * i] = e.seq;
            leases[3 * i + 1] = e.receiveCount;
            leases[3 * i + 2] = e.visibleAtMillis;
        }
        ReceiveAttempts.Attempt attempt = new ReceiveAttempts.Attempt(attemptId,
                now + SqsLimits.RECEIVE_ATTEMPT_WINDOW_MILLIS, leases);
        attempts.remember(attempt);
        mutations.add(new Mutation.Put(keys.attempt(attemptId), RecordCodec.encodeAttempt(attempt)));
    }

    // ---- Delete and ChangeVisibility ------------------------------------------------------------------------

    private PartitionResponse delete(Delete command, long now) {
        List<SqsFailure> failures = new ArrayList<>(command.handles().size());
        for (ReceiptHandle h : command.handles()) {
            failures.add(deleteOne(h, now));
        }
        return new EntryOutcomes(failures);
    }

    private SqsFailure deleteOne(ReceiptHandle h, long now) {
        if (!isOurs(h)) {
            return invalidHandle(h);
        }
        MessageEntry e = index.get(h.seq());
        if (e == null || e.isDeadLetterPending()) {
            return null; // already deleted, or on its way to the dead-letter queue: deleting again succeeds
        }
        if (h.receiveCount() > e.receiveCount) {
            return invalidHandle(h);
        }
        if (isExpired(e, now)) {
            expireOne(e); // past retention it is gone, swept or not: deleting it succeeds
            return null;
        }
        if (config.fifo() && !(e.status(now) == Status.INFLIGHT && e.receiveCount == h.receiveCount())) {
            return SqsError.INVALID_PARAMETER_VALUE.withMessage("Value " + h.encode()
                    + " for parameter ReceiptHandle is invalid. Reason: The receipt handle has expired.");
        }
        // Standard queues: a stale handle still deletes (SQS behaviour).
        index.remove(e);
        deleteMessageKeys(e.seq);
        return null;
    }

    private PartitionResponse changeVisibility(ChangeVisibility command, long now) {
        List<SqsFailure> failures = new ArrayList<>(command.changes().size());
        for (VisibilityChange c : command.changes()) {
            failures.add(changeVisibilityOne(c, now));
        }
        return new EntryOutcomes(failures);
    }

    private SqsFailure changeVisibilityOne(VisibilityChange change, long now) {
        ReceiptHandle h = change.handle();
        if (!isOurs(h)) {
            return invalidHandle(h);
        }
        MessageEntry e = index.get(h.seq());
        if (e != null && h.receiveCount() > e.receiveCount) {
            return invalidHandle(h);
        }
        if (e != null && !e.isDeadLetterPending() && isExpired(e, now)) {
            expireOne(e); // past retention: it is gone, whether or not the sweep got to it yet
            e = null;
        }
        if (e == null || e.isDeadLetterPending() || e.receiveCount != h.receiveCount()) {
            // Deleted, expired, handed off, or received again since this handle was issued.
            return SqsError.INVALID_PARAMETER_VALUE.withMessage("Value " + h.encode() + " for parameter ReceiptHandle"
                    + " is invalid. Reason: Message does not exist or is not available for visibility timeout change.");
        }
        if (config.fifo() && e.status(now) != Status.INFLIGHT) {
            return SqsError.INVALID_PARAMETER_VALUE.withMessage("Value " + h.encode()
                    + " for parameter ReceiptHandle is invalid. Reason: The receipt handle has expired.");
        }
        int seconds = change.visibilityTimeoutSeconds();
        if (seconds < 0 || seconds > SqsLimits.MAX_VISIBILITY_TIMEOUT_SECONDS) {
            return SqsError.INVALID_PARAMETER_VALUE.withMessage("Value " + seconds
                    + " for parameter VisibilityTimeout is invalid. Reason: Must be between 0 and 43200.");
        }
        if (now - e.receivedAtMillis + seconds * 1000L > SqsLimits.MAX_INFLIGHT_MILLIS) {
            return SqsError.INVALID_PARAMETER_VALUE.withMessage("Value " + seconds + " for parameter"
                    + " VisibilityTimeout is invalid. Reason: Total VisibilityTimeout for the message is beyond the"
                    + " limit [43200 seconds]");
        }
        index.update(e, m -> m.visibleAtMillis = now + seconds * 1000L);
        putState(e);
        return null;
    }

    private boolean isOurs(ReceiptHandle h) {
        return h.queueId() == id.queueId() && h.partition() == id.index() && h.seq() > 0 && h.seq() < nextSeq
                && h.receiveCount() > 0;
    }

    private static SqsFailure invalidHandle(ReceiptHandle h) {
        return SqsError.RECEIPT_HANDLE_IS_INVALID.withMessage(
                "The input receipt handle \"" + h.encode() + "\" is not a valid receipt handle.");
    }

    // ---- Purge, Expire, dead letters, Retire ---------------------------------------------------------------

    private PartitionResponse purge(long now) {
        if (lastPurgeMillis >= 0 && now - lastPurgeMillis < SqsLimits.PURGE_INTERVAL_MILLIS) {
            return new Rejected(SqsError.PURGE_QUEUE_IN_PROGRESS.failure());
        }
        int purged = index.size();
        index.clear();
        mutations.add(new Mutation.DeleteRange(keys.typePrefix(PartitionKeys.BODY), keys.typeEnd(PartitionKeys.BODY)));
        mutations.add(new Mutation.DeleteRange(keys.typePrefix(PartitionKeys.STATE), keys.typeEnd(PartitionKeys.STATE)));
        lastPurgeMillis = now;
        return new Count(purged);
    }

    private PartitionResponse expire(int limit, long now) {
        int expired = 0;
        if (!retired) {
            MessageEntry oldest;
            while (expired < limit && (oldest = index.oldestByRetention()) != null && isExpired(oldest, now)) {
                expireOne(oldest);
                expired++;
            }
        }
        dedup.forgetExpired(now, key -> mutations.add(new Mutation.Delete(keys.dedup(key))));
        attempts.forgetExpired(now, attemptId -> mutations.add(new Mutation.Delete(keys.attempt(attemptId))));
        return new Count(expired);
    }

    private boolean isExpired(MessageEntry e, long now) {
        return now - e.retentionBaseMillis >= config.retentionSeconds() * 1000L;
    }

    private void expireOne(MessageEntry e) {
        if (config.deadLetterOnExpiry() && config.hasDeadLetterQueue()) {
            deadLetter(e, DeadLetterReason.RETENTION_EXPIRED);
        } else {
            index.remove(e);
            deleteMessageKeys(e.seq);
        }
    }

    private void deadLetter(MessageEntry e, DeadLetterReason reason) {
        index.markDeadLetter(e, reason);
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
            int handedOff = 0;
            for (MessageEntry e : index.entriesInSeqOrder()) {
                if (!e.isDeadLetterPending()) {
                    deadLetter(e, DeadLetterReason.SOURCE_QUEUE_DELETED);
                    handedOff++;
                }
            }
            return new Count(handedOff);
        }
        int dropped = index.size();
        index.clear();
        mutations.add(new Mutation.DeleteRange(keys.rangeStart(), keys.rangeEnd()));
        mutations.add(new Mutation.Put(keys.config(), RecordCodec.encodeConfig(config)));
        return new Count(dropped);
    }

    // ---- storage helpers ------------------------------------------------------------------------------------

    private void putState(MessageEntry e) {
        mutations.add(new Mutation.Put(keys.state(e.seq), RecordCodec.encodeState(e)));
    }

    private void deleteMessageKeys(long seq) {
        mutations.add(new Mutation.Delete(keys.body(seq)));
        mutations.add(new Mutation.Delete(keys.state(seq)));
    }

    private RecordCodec.Meta meta() {
        return new RecordCodec.Meta(nextSeq, index.nowMillis(), lastPurgeMillis, retired);
    }

    // ---- recovery and read-only queries ---------------------------------------------------------------------

    /** Restores durable state read from storage. Called once, on a fresh instance, before any apply. */
    void recover(RecordCodec.Meta meta, List<RecordCodec.DecodedState> states, List<DedupWindow.Entry> dedupEntries,
                 List<ReceiveAttempts.Attempt> attemptRecords) {
        nextSeq = meta.nextSeq();
        lastPurgeMillis = meta.lastPurgeMillis();
        retired = meta.retired();
        index.resetClock(meta.lastNowMillis());
        for (RecordCodec.DecodedState s : states) { // in seq order, so FIFO groups keep send order
            index.add(s.entry(), config.fifo() ? s.groupId() : null);
        }
        dedup.recover(dedupEntries);
        attempts.recover(attemptRecords);
    }

    /** Counts as of the last applied command. */
    public QueueCounts counts() {
        MessageEntry oldest = index.oldestByRetention();
        return new QueueCounts(index.visibleCount(), index.inflightCount(), index.delayedCount(),
                index.deadLetterPending().size(), oldest == null ? -1 : oldest.retentionBaseMillis);
    }

    /** How many messages are visible at {@code nowMillis} (at or after the last command), read-only. */
    public int visibleCountAt(long nowMillis) {
        return index.visibleAt(nowMillis);
    }

    /** The next time a delayed or in-flight message becomes visible, or -1: when to re-check parked polls. */
    public long nextDeadlineMillis() {
        return index.nextDeadlineMillis();
    }

    /** Hand-offs not yet acknowledged, oldest first: a new primary re-executes these. */
    public List<Effect.DeadLetter> pendingDeadLetters() {
        List<Effect.DeadLetter> out = new ArrayList<>();
        index.deadLetterPending().values().forEach(e -> out.add(deadLetterEffect(e)));
        return out;
    }

    /** A canonical description of the whole state; equal strings mean equal states. For tests and debugging. */
    public String describe() {
        return "partition=" + id + " config=" + config + " nextSeq=" + nextSeq + " lastPurge=" + lastPurgeMillis
                + " retired=" + retired + "\n" + index.describe() + "dedup=" + dedup.snapshot(e -> e) + "\nattempts="
                + attempts.snapshot(ReceiveAttempts.Attempt::describe) + "\n";
    }
}
