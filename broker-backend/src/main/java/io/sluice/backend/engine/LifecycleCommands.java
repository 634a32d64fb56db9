package io.sluice.backend.engine;

import io.sluice.common.SqsError;
import io.sluice.common.SqsLimits;
import io.sluice.partition.DeadLetterReason;
import io.sluice.partition.Effect;
import io.sluice.partition.PartitionCommand.AcknowledgeDeadLetters;
import io.sluice.partition.PartitionResponse.Count;
import io.sluice.partition.PartitionResponse.Rejected;
import io.sluice.partition.PartitionResponse;
import io.sluice.partition.PayloadCodec;
import java.util.List;

/**
 * A partition's lifecycle commands, part of {@link PartitionQueueState}: purge, the sweep's expiry (retention, stale
 * dedup, attempt and mark records, hand-offs whose dead-letter queue is gone), dead-letter hand-offs and their
 * acknowledgement, and retirement when the queue is deleted.
 */
final class LifecycleCommands {
    private final PartitionQueueState s;

    LifecycleCommands(PartitionQueueState s) {
        this.s = s;
    }

    PartitionResponse purge(long now) {
        if (s.lastPurgeMillis >= 0 && now - s.lastPurgeMillis < SqsLimits.PURGE_INTERVAL_MILLIS) {
            return new Rejected(SqsError.PURGE_QUEUE_IN_PROGRESS.failure());
        }
        int purged = PartitionQueueState.saturated(s.size());
        // pending hand-offs were counted as dead-lettered
        s.totals.purged += purged - s.index.deadLetterPending().size();
        s.index.clear();
        s.cold.clear();
        for (byte type : new byte[] {PartitionKeys.BODY, PartitionKeys.STATE}) {
            s.mutations.add(new Mutation.DeleteRange(s.keys.typePrefix(type), s.keys.typeEnd(type)));
        }
        for (byte type : new byte[] {PartitionKeys.COLD, PartitionKeys.COLD_MEMBER, PartitionKeys.COLD_HEAD}) {
            s.cold.deleteRange(s.keys.typePrefix(type), s.keys.typeEnd(type), s.mutations);
        }
        s.deferred.clear(s.mutations);
        s.lastPurgeMillis = now;
        return new Count(purged);
    }

    PartitionResponse expire(int limit, long now) {
        int expired = 0;
        int pagedIn = 0; // FIFO: the oldest cold message may come late in its group; at most limit read to reach it
        if (!s.retired) {
            while (expired < limit) { // in retention order over the index and the cold and deferred tails together
                MessageEntry oldest = s.index.oldestByRetention();
                boolean fromDeferred = oldest == null ? !s.deferred.isEmpty() : s.deferred.oldestExpiresBefore(oldest);
                if (fromDeferred && !s.cold.isEmpty()) {
                    fromDeferred = !s.cold.headExpiresBefore(s.deferred.oldestRetentionMillis(),
                            s.deferred.oldestSeq());
                }
                if (fromDeferred) {
                    if (!s.deferred.oldestExpired(now, s.config.retentionSeconds() * 1000L)
                            || expiryHandsOff() && !mayHandOff(0)) {
                        break;
                    }
                    RecordCodec.DecodedState d = s.deferred.takeOldestByRetention(now, s.mutations);
                    if (d != null) {
                        s.tiers.indexFromCold(List.of(d)); // expired (or handed off) from the index next
                    }
                    continue;
                }
                if (oldest == null ? !s.cold.isEmpty() : s.cold.headExpiresBefore(oldest)) {
                    if (!s.cold.oldestExpired(now, s.config.retentionSeconds() * 1000L)) {
                        break;
                    }
                    // standard: the next page in retention order; FIFO: the oldest cold message alone, since the
                    // rest of its group's page may be far from expiring while other groups' heads are due (a page
                    // per group would bring up to limit x page messages into memory in one sweep, and keep them)
                    if (s.config.fifo() && pagedIn++ >= limit) {
                        break;
                    }
                    s.tiers.pageIn(s.config.fifo() ? 1 : Math.max(1, Math.min(s.page, limit - expired)));
                    continue;
                }
                if (oldest == null || !isExpired(oldest, now) || expiryHandsOff() && !mayHandOff(0)) {
                    break;
                }
                expireOne(oldest);
                expired++;
            }
        } else if (!s.cold.isEmpty() || !s.deferred.isEmpty()) {
            // a deleted queue's cold and deferred messages are handed off a page per sweep (all at once could be
            // millions)
            int room = Math.max(0, s.maxPendingHandOffs - s.index.deadLetterPending().size());
            int max = Math.min(Math.min(limit, s.page), room);
            for (RecordCodec.DecodedState d : !s.cold.isEmpty() ? s.cold.take(max, s.mutations)
                    : s.deferred.takeAny(max, now, s.mutations)) {
                s.index.add(d.entry(), null);
                deadLetter(d.entry(), DeadLetterReason.SOURCE_QUEUE_DELETED);
                expired++;
            }
        }
        MessageEntry stuck;
        while (expired < limit && (stuck = s.index.oldestPending()) != null && isHandOffExpired(stuck, now)) {
            s.index.remove(stuck); // its dead-letter queue has been gone for a retention period: dropped
            s.deleteMessageKeys(stuck.seq);
            s.totals.expired++;
            expired++;
        }
        s.dedup.forgetExpired(now, key -> s.mutations.add(new Mutation.Delete(s.keys.dedup(key))));
        s.handOffKeys.forgetExpired(now, s.mutations);
        s.attempts.forgetExpired(now, attemptId -> s.mutations.add(new Mutation.Delete(s.keys.attempt(attemptId))));
        s.ordering.marks.forgetExpired(now, groupId -> s.mutations.add(new Mutation.Delete(s.keys.groupMark(groupId))));
        return new Count(expired);
    }

    /**
     * A hand-off still pending one retention period after it was made cannot be delivered to its dead-letter queue
     * (gone, or refusing it): it is dropped like an expired message, so it cannot stay on disk for ever.
     */
    private boolean isHandOffExpired(MessageEntry pending, long now) {
        return now - pending.visibleAtMillis >= s.config.retentionSeconds() * 1000L;
    }

    /** Whether an {@code Expire} command would change anything now (a message past retention, an old window entry). */
    public boolean needsSweep(long now) {
        MessageEntry oldest = s.index.oldestByRetention();
        MessageEntry pending = s.index.oldestPending();
        boolean mayExpire = !s.retired && (!expiryHandsOff() || mayHandOff(0)); // at the bound: once hand-offs drain
        return (mayExpire && oldest != null && isExpired(oldest, now))
                || (mayExpire && s.cold.oldestExpired(now, s.config.retentionSeconds() * 1000L))
                || (mayExpire && s.deferred.oldestExpired(now, s.config.retentionSeconds() * 1000L))
                // a deleted queue's cold and deferred messages still to hand off
                || (s.retired && (!s.cold.isEmpty() || !s.deferred.isEmpty()) && mayHandOff(0))
                || (pending != null && isHandOffExpired(pending, now))
                || s.dedup.hasExpired(now) || s.handOffKeys.hasExpired(now) || s.attempts.hasExpired(now)
                || s.ordering.marks.hasExpired(now)
                || mayPageOut(now);
    }

    /**
     * Standard: the index holds more than its limit and a deadline passed since the last command (a lease lapsed, a
     * delay ran out), so it may hold more visible messages than it keeps: a command pages them out. An idle partition
     * whose consumers stopped deleting (crash-looping) gets that command from the sweep.
     */
    private boolean mayPageOut(long now) {
        long next = s.index.nextDeadlineMillis();
        return !s.config.fifo() && !s.retired && s.index.size() > s.hotLimit + s.page && next > 0 && next <= now;
    }

    boolean isExpired(MessageEntry e, long now) {
        return now - e.retentionBaseMillis >= s.config.retentionSeconds() * 1000L;
    }

    /** Whether a message past retention is handed off to the dead-letter queue rather than dropped. */
    boolean expiryHandsOff() {
        return s.config.deadLetterOnExpiry() && s.config.hasDeadLetterQueue();
    }

    /**
     * Whether one more dead-letter hand-off may be made, given {@code planned} more that the current command is about
     * to make: fewer than {@link PartitionQueueState#maxPendingHandOffs} pending.
     */
    boolean mayHandOff(int planned) {
        return s.index.deadLetterPending().size() + planned < s.maxPendingHandOffs;
    }

    void expireOne(MessageEntry e) {
        if (expiryHandsOff()) {
            deadLetter(e, DeadLetterReason.RETENTION_EXPIRED);
        } else {
            s.index.remove(e);
            s.deleteMessageKeys(e.seq);
            s.totals.expired++;
        }
    }

    void deadLetter(MessageEntry e, DeadLetterReason reason) {
        s.index.markDeadLetter(e, reason);
        s.totals.deadLettered(reason);
        s.putState(e);
        s.effects.add(deadLetterEffect(e));
    }

    Effect.DeadLetter deadLetterEffect(MessageEntry e) {
        return new Effect.DeadLetter(s.id, e.seq, e.deadLetterReason, e.receiveCount, e.firstReceiveMillis);
    }

    PartitionResponse acknowledgeDeadLetters(AcknowledgeDeadLetters command) {
        int removed = 0;
        for (long seq : command.seqs()) {
            MessageEntry e = s.index.deadLetterPending().get(seq);
            if (e != null) {
                s.index.remove(e);
                s.deleteMessageKeys(seq);
                removed++;
            }
        }
        return new Count(removed);
    }

    PartitionResponse retire(boolean handOff) {
        s.retired = true;
        if (handOff && s.config.hasDeadLetterQueue()) {
            // the indexed messages are handed off now, the cold ones a page per sweep (Expire) after, in seq order
            // (FIFO groups no longer matter: nothing is received from a deleted queue)
            for (byte type : new byte[] {PartitionKeys.COLD_MEMBER, PartitionKeys.COLD_HEAD}) {
                s.cold.deleteRange(s.keys.typePrefix(type), s.keys.typeEnd(type), s.mutations);
            }
            int handedOff = PartitionQueueState.saturated(s.cold.count() + s.deferred.count());
            for (MessageEntry e : s.index.entriesInSeqOrder()) {
                if (!e.isDeadLetterPending()) {
                    deadLetter(e, DeadLetterReason.SOURCE_QUEUE_DELETED);
                    handedOff++;
                }
            }
            return new Count(handedOff);
        }
        int dropped = PartitionQueueState.saturated(s.size());
        s.index.clear();
        s.cold.clear();
        s.deferred.clear(s.mutations);
        s.handOffKeys.clear();
        s.moveTasks.clear();
        s.cold.deleteRange(s.keys.rangeStart(), s.keys.rangeEnd(), s.mutations);
        s.mutations.add(new Mutation.Put(s.keys.config(), PayloadCodec.encodeConfig(s.config)));
        return new Count(dropped);
    }
}
