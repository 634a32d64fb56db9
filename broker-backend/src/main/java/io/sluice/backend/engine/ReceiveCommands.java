package io.sluice.backend.engine;

import io.sluice.common.ReceiptHandle;
import io.sluice.common.SqsError;
import io.sluice.common.SqsLimits;
import io.sluice.common.validation.RedeliveryBackoff;
import io.sluice.partition.DeadLetterReason;
import io.sluice.partition.PartitionCommand.Receive;
import io.sluice.partition.PartitionResponse.Delivery;
import io.sluice.partition.PartitionResponse.Received;
import io.sluice.partition.PartitionResponse.Rejected;
import io.sluice.partition.PartitionResponse;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The receive path of {@link PartitionQueueState}: choosing visible messages (FIFO: from ready groups, a group at a
 * time), expiring or dead-lettering what must not be delivered, leasing, and FIFO receive-attempt replays. Part of
 * the state machine: it changes the state's index and records mutations through it.
 */
final class ReceiveCommands {
    private final PartitionQueueState s;

    ReceiveCommands(PartitionQueueState s) {
        this.s = s;
    }

    PartitionResponse receive(Receive command, long now) {
        int max = Math.max(0, Math.min(command.maxMessages(), SqsLimits.MAX_RECEIVE_MESSAGES));
        int visibilitySeconds = command.visibilityTimeoutSeconds() >= 0
                ? Math.min(command.visibilityTimeoutSeconds(), SqsLimits.MAX_VISIBILITY_TIMEOUT_SECONDS)
                : s.config.visibilityTimeoutSeconds();
        String attemptId = s.config.fifo() ? command.receiveRequestAttemptId() : null;
        if (attemptId != null) {
            List<Delivery> replayed = replayAttempt(attemptId, visibilitySeconds, now);
            if (replayed != null) {
                return new Received(replayed);
            }
        }
        int room = s.config.maxInflight() - s.index.inflightCount();
        if (room <= 0) {
            return s.config.fifo() ? new Received(List.of()) : new Rejected(SqsError.OVER_LIMIT.withMessage(
                    "The maximum number of in flight messages is reached."));
        }
        int capacity = Math.min(max, room);

        Choice choice = new Choice(capacity, true);
        choose(choice, now);
        for (MessageEntry e : choice.expired) {
            s.lifecycle.expireOne(e);
        }
        for (MessageEntry e : choice.exhausted) {
            s.lifecycle.deadLetter(e, DeadLetterReason.MAX_RECEIVES_EXCEEDED);
        }
        List<Delivery> deliveries = lease(choice.chosen, now, visibilitySeconds, true, true);
        if (attemptId != null && !deliveries.isEmpty()) {
            rememberAttempt(attemptId, choice.chosen, now);
        }
        return new Received(deliveries);
    }

    /**
     * Picks up to {@code capacity} visible messages in delivery order (FIFO: a ready group's visible run, a group at a
     * time), sorting out those past retention ({@code expired}) and, for a consumer's receive, those whose receive
     * would exceed the redrive policy's maxReceiveCount ({@code exhausted}). One that would need a dead-letter hand-off
     * while the partition holds {@link PartitionQueueState#maxPendingHandOffs} already is left where it is
     * ({@code held}): neither delivered nor handed off until hand-offs drain (FIFO: nor is the rest of its group).
     */
    private void choose(Choice c, long now) {
        if (s.config.fifo()) {
            // ready groups oldest head first: the index's merged with the groups cold entirely whose head is visible
            // (paged in when reached)
            long last = 0;
            FifoColdGroups.Head coldHead = null;
            boolean coldDone = false;
            int[] passBudget = {PartitionQueueState.MAX_COLD_HEADS_PASSED};
            while (!c.done()) {
                Map.Entry<Long, FifoGroup> hot = s.index.readyAfter(last);
                if (!coldDone && (coldHead == null || coldHead.seq() <= last)) {
                    coldHead = s.tiers.nextVisibleColdHead(last, now, passBudget, new long[] {-1});
                    coldDone = coldHead == null;
                }
                FifoGroup g;
                if (coldHead != null && (hot == null || coldHead.seq() < hot.getKey())) {
                    last = coldHead.seq();
                    g = s.tiers.pageInGroup(coldHead.groupId(), coldHead.seq(), c.capacity - c.chosen.size());
                    coldHead = null;
                } else if (hot != null) {
                    last = hot.getKey();
                    g = hot.getValue();
                } else {
                    break;
                }
                if (g != null) {
                    chooseFromGroup(g, c, now);
                }
            }
        } else {
            // in delivery order over the index and the cold and deferred tails together: the messages on disk that
            // come before the next indexed one are paged in first, so where a message waits never changes which one
            // is chosen
            MessageEntry last = null;
            while (!c.done()) {
                MessageEntry next = s.index.nextVisibleAfter(last);
                if (s.tiers.pageInBefore(next, now)) {
                    continue;
                }
                if (next == null) {
                    break;
                }
                classifyCandidate(next, now, c);
                last = next;
            }
        }
    }

    /**
     * Messages past retention or past maxReceiveCount that one receive deals with (or, hand-offs being at their bound,
     * leaves where they are) at most: what it meets beyond that is left to the next receive or sweep, so a backlog that
     * expired all at once (retention lowered) is never brought into memory in one command. The same count on every
     * replica and for any placement (it counts in delivery order).
     */
    static final int MAX_SET_ASIDE = 1000;

    /** What one choice picked and set aside. */
    private static final class Choice {
        final int capacity;
        final List<MessageEntry> chosen;
        final List<MessageEntry> expired = new ArrayList<>();
        /** Null for a move task's lease: it counts no receive, so nothing is exhausted by it. */
        final List<MessageEntry> exhausted;
        /** Messages left where they are: they need a hand-off and hand-offs are at their bound. */
        int held;

        Choice(int capacity, boolean countsReceive) {
            this.capacity = capacity;
            this.chosen = new ArrayList<>(capacity);
            this.exhausted = countsReceive ? new ArrayList<>() : null;
        }

        /** Complete: {@code capacity} chosen, or {@link #MAX_SET_ASIDE} set aside on the way. */
        boolean done() {
            return chosen.size() >= capacity || capped();
        }

        /** Whether the choice stopped at {@link #MAX_SET_ASIDE}. */
        boolean capped() {
            return expired.size() + (exhausted == null ? 0 : exhausted.size()) + held >= MAX_SET_ASIDE;
        }

        /** Hand-offs this choice makes when it is carried out. */
        int handOffs(boolean expiryHandsOff) {
            return (exhausted == null ? 0 : exhausted.size()) + (expiryHandsOff ? expired.size() : 0);
        }
    }

    /**
     * A FIFO group's visible run from its head, up to {@code capacity} in all; when the run reaches the end of the
     * group's messages in memory and it has cold ones, they are paged in (as many as there is room for) and the run
     * goes on, so where a message waits never changes what is chosen.
     */
    private void chooseFromGroup(FifoGroup g, Choice c, long now) {
        int seen = 0;
        while (true) {
            int skip = seen;
            for (MessageEntry e : g.messages) {
                if (skip > 0) {
                    skip--;
                    continue;
                }
                if (c.done() || e.visibleAtMillis > now) {
                    return;
                }
                if (!classifyCandidate(e, now, c)) {
                    return; // held: nothing after it in its group may go before it
                }
                seen++;
            }
            if (!g.hasCold || c.done()) {
                return;
            }
            int before = g.messages.size();
            s.tiers.pageInGroup(g.id, -1, c.capacity - c.chosen.size());
            if (g.messages.size() == before) {
                return;
            }
        }
    }

    /**
     * Leases up to {@code max} visible messages to a message move task until {@code now + leaseSeconds}: in delivery
     * order, without counting a receive (a moved message starts afresh at its destination) and outside the in-flight
     * limit. Messages past retention are expired on the way, as a receive would.
     */
    MoveLease leaseForMove(int max, int leaseSeconds, long now) {
        Choice choice = new Choice(max, false);
        choose(choice, now);
        for (MessageEntry e : choice.expired) {
            s.lifecycle.expireOne(e);
        }
        return new MoveLease(lease(choice.chosen, now, leaseSeconds, false, false), choice.capped());
    }

    /**
     * A move task's batch, and whether the choice stopped at {@link #MAX_SET_ASIDE} (an empty batch then does not mean
     * the partition has nothing left to move).
     */
    record MoveLease(List<Delivery> batch, boolean capped) {
    }

    /**
     * The message {@code seq} if a move task's lease ending at {@code deadline} still holds it: not deleted, expired or
     * handed off since, and not received by a consumer after that lease ran out (which moves its deadline).
     */
    MessageEntry heldByMove(long seq, long deadline) {
        MessageEntry e = s.index.get(seq);
        return e != null && !e.isDeadLetterPending() && e.visibleAtMillis == deadline ? e : null;
    }

    /** Extends a move task's lease (ending at {@code deadline}) on the messages it still holds; answers them. */
    List<Delivery> renewMoveLease(List<Long> seqs, long deadline, int leaseSeconds, long now) {
        List<MessageEntry> held = new ArrayList<>(seqs.size());
        for (long seq : seqs) {
            MessageEntry e = heldByMove(seq, deadline);
            if (e != null) {
                held.add(e);
            }
        }
        return lease(held, now, leaseSeconds, false, false);
    }

    /** Ends a move task's lease on a message it did not move: visible again now. */
    void releaseMoveLease(long seq, long deadline, long now) {
        MessageEntry e = heldByMove(seq, deadline);
        if (e != null && e.visibleAtMillis > now) {
            s.index.update(e, m -> {
                m.visibleAtMillis = now;
                m.backoffFromMillis = 0;
            });
            s.putState(e);
        }
    }

    /**
     * Removes a message a move task copied to its destination (counted as deleted here), if the task's lease still
     * holds it; one a consumer took after the lease ran out stays with that consumer (it was copied: at least once).
     */
    void removeMoved(long seq, long deadline) {
        MessageEntry e = heldByMove(seq, deadline);
        if (e != null) {
            s.index.remove(e);
            s.deleteMessageKeys(seq);
            s.totals.deleted++;
        }
    }

    /**
     * Leases messages until {@code now + visibilitySeconds}. A new receive counts ({@code countReceive}); a replayed
     * receive attempt keeps the count and handle and only restarts the visibility timeout. A consumer's lease
     * ({@code consumer}, not a move task's) that lapses waits out the queue's redelivery backoff, if it has one,
     * before the message is visible again.
     */
    private List<Delivery> lease(List<MessageEntry> entries, long now, int visibilitySeconds, boolean countReceive,
                                 boolean consumer) {
        long deadline = now + visibilitySeconds * 1000L;
        List<Delivery> deliveries = new ArrayList<>(entries.size());
        for (MessageEntry e : entries) {
            s.index.update(e, m -> {
                if (countReceive) {
                    m.receiveCount++;
                    if (m.firstReceiveMillis == 0) {
                        m.firstReceiveMillis = now;
                    }
                }
                m.receivedAtMillis = now;
                long backoff = consumer ? redeliveryBackoffMillis(m) : 0;
                m.visibleAtMillis = deadline + backoff;
                m.backoffFromMillis = backoff > 0 ? deadline : 0;
            });
            s.putState(e);
            if (countReceive) {
                s.totals.received++;
            }
            deliveries.add(delivery(e));
        }
        if (consumer && s.config.reorderWindowMillis() > 0) {
            // a group's mark moves once per receive, to the latest in producer order of what it took
            Map<String, MessageEntry> latestOfGroup = new LinkedHashMap<>();
            for (MessageEntry e : entries) {
                if (e.fifoGroupId != null) {
                    latestOfGroup.merge(e.fifoGroupId, e,
                            (a, b) -> MessageEntry.BY_PRODUCER_ORDER.compare(a, b) >= 0 ? a : b);
                }
            }
            latestOfGroup.values().forEach(e -> s.ordering.delivered(e, now));
        }
        return deliveries;
    }

    /**
     * Sorts a visible message into the choice.
     *
     * @return false when it is held: it would need a dead-letter hand-off and the partition holds as many pending as it
     *         may ({@link LifecycleCommands#mayHandOff})
     */
    private boolean classifyCandidate(MessageEntry e, long now, Choice c) {
        boolean expired = s.lifecycle.isExpired(e, now);
        boolean exhausted = !expired && c.exhausted != null && s.config.hasDeadLetterQueue()
                && e.receiveCount + 1 > s.config.maxReceiveCount();
        boolean expiryHandsOff = s.lifecycle.expiryHandsOff();
        if ((exhausted || expired && expiryHandsOff) && !s.lifecycle.mayHandOff(c.handOffs(expiryHandsOff))) {
            c.held++;
            return false;
        }
        if (expired) {
            c.expired.add(e);
        } else if (exhausted) {
            c.exhausted.add(e);
        } else {
            c.chosen.add(e);
        }
        return true;
    }

    private Delivery delivery(MessageEntry e) {
        return new Delivery(e.seq, new ReceiptHandle(s.id.queueId(), s.id.index(), e.seq, e.receiveCount), e.receiveCount,
                e.firstReceiveMillis);
    }

    /** Returns the attempt's deliveries with restarted visibility, or null when it cannot be replayed. */
    private List<Delivery> replayAttempt(String attemptId, int visibilitySeconds, long now) {
        ReceiveAttempts.Attempt attempt = s.attempts.find(attemptId, now);
        if (attempt == null) {
            return null;
        }
        long[] leases = attempt.leases();
        List<MessageEntry> entries = new ArrayList<>();
        for (int i = 0; i < leases.length; i += 3) {
            MessageEntry e = s.index.get(leases[i]);
            if (e == null || e.isDeadLetterPending() || e.receiveCount != leases[i + 1]
                    || e.visibleAtMillis != leases[i + 2] || s.lifecycle.isExpired(e, now)) {
                return null;
            }
            entries.add(e);
        }
        List<Delivery> deliveries = lease(entries, now, visibilitySeconds, false, true);
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
        s.attempts.remember(attempt);
        s.mutations.add(new Mutation.Put(s.keys.attempt(attemptId), RecordCodec.encodeAttempt(attempt)));
    }

    /**
     * How long a consumer's lease on {@code e} (just counted as its {@code receiveCount}-th receive), once lapsed,
     * keeps it invisible on top: the queue's {@code SluiceRedeliveryBackoff}, jittered by a number derived from the
     * partition, the message and its receive count, so every replica computes the same. None when the queue has no
     * backoff, or when the next receive would hand the message to the dead-letter queue (no point waiting for that).
     */
    long redeliveryBackoffMillis(MessageEntry e) {
        RedeliveryBackoff backoff = s.config.redeliveryBackoff();
        if (backoff == null || (s.config.hasDeadLetterQueue() && e.receiveCount >= s.config.maxReceiveCount())) {
            return 0;
        }
        return backoff.delayMillis(e.receiveCount, jitterUnit(e.seq, e.receiveCount));
    }

    /** A number in [0, 1) from the partition, a message and its receive count (a 64-bit mix, the same everywhere). */
    private double jitterUnit(long seq, int receiveCount) {
        long h = s.id.queueId() * 0x9E3779B97F4A7C15L + s.id.index();
        h = (h ^ seq) * 0xBF58476D1CE4E5B9L;
        h = (h ^ receiveCount) * 0x94D049BB133111EBL;
        h ^= h >>> 31;
        h *= 0xFF51AFD7ED558CCDL;
        h ^= h >>> 33;
        return (h >>> 11) * 0x1.0p-53;
    }
}
