package io.sluice.backend.engine;

import java.util.ArrayList;
import java.util.List;

/**
 * Where a partition's messages live, part of {@link PartitionQueueState}: the index in memory, and on disk only the
 * cold tail (sends behind a backlog; FIFO: by group) and the deferred tail (standard: delayed sends, copies and
 * paged-out messages, by delivery order). Pages messages between them so that memory stays bounded and delivery order
 * holds across the tiers. The same on every replica: where a message lives is replicated state.
 */
final class MessageTiers {
    /**
     * How many cold FIFO groups whose head is not visible yet a look for wake-ups passes over at most (after every
     * command that changed the cold range, so kept small: a poll parked past them waits for its next deadline or
     * arrival); a receive passes over up to {@link PartitionQueueState#MAX_COLD_HEADS_PASSED}.
     */
    static final int MAX_COLD_HEADS_WAKE = 64;

    private final PartitionQueueState s;
    /** The last {@link #coldWalk} from the first cold head, while the cold range and the time allow reusing it. */
    private ColdWalk coldWalk;

    MessageTiers(PartitionQueueState s) {
        this.s = s;
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
        long now = s.index.nowMillis();
        if (s.cold.isEmpty() || !s.config.fifo()) {
            return new ColdWalk(s.cold.version(), now, false, -1);
        }
        if (coldWalk == null || !coldWalk.validAt(s.cold.version(), now)) {
            long[] wake = {-1};
            boolean visible = nextVisibleColdHead(0, now, new int[] {MAX_COLD_HEADS_WAKE}, wake) != null;
            coldWalk = new ColdWalk(s.cold.version(), now, visible, visible ? -1 : wake[0]);
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
        while ((head = s.coldGroups.headAfter(after)) != null) {
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
        byte[] state = s.cold.get(s.keys.cold(seq));
        return state == null ? null : RecordCodec.decodeState(seq, state).entry();
    }

    /**
     * When a cold message is visible. Cold messages have never been received here; on a FIFO queue whose delay
     * changed since one was sent, the delay is retroactive (as for the messages in memory, see
     * {@code PartitionQueueState.configure}): its send plus the current delay, or its release by the reorder window if
     * later.
     */
    long coldVisibleAt(MessageEntry e) {
        if (s.config.fifo() && e.seq < s.delayChangedSeq && e.receiveCount == 0 && e.receivedAtMillis == 0) {
            return Math.max(e.retentionBaseMillis + s.config.delaySeconds() * 1000L, e.releaseMillis);
        }
        return e.visibleAtMillis;
    }

    /**
     * Standard: when the next message in delivery order before the indexed {@code next} (null: none indexed is
     * visible) waits on disk, in the cold or the deferred tail, pages in a page of that tail's.
     *
     * @return whether it paged in (the caller looks again)
     */
    boolean pageInBefore(MessageEntry next, long now) {
        boolean fromCold = !s.cold.isEmpty() && (next == null || s.cold.headBefore(next));
        boolean fromDeferred = s.deferred.hasDueHead(now)
                && (next == null || s.deferred.headBefore(next.visibleAtMillis, next.seq));
        if (fromCold && fromDeferred) {
            fromCold = s.cold.headBefore(s.deferred.headVisibleAt(), s.deferred.headSeq());
            fromDeferred = !fromCold;
        }
        if (fromCold) {
            pageIn();
        } else if (fromDeferred) {
            indexFromCold(s.deferred.takeDue(s.page, now, s.mutations));
        }
        return fromCold || fromDeferred;
    }

    /**
     * Standard: when more than {@link PartitionQueueState#hotLimit} plus a {@link PartitionQueueState#page} of the
     * index's messages are visible, the latest in delivery order go to the deferred tail until
     * {@link PartitionQueueState#hotLimit} are (those a receive reaches last). Messages in
     * flight, delayed or pending a hand-off stay: their deadlines and receipt handles are the index's business.
     */
    void pageOut() {
        if (s.config.fifo() || s.retired || s.index.visibleCount() <= s.hotLimit + s.page) {
            return;
        }
        while (s.index.visibleCount() > s.hotLimit) {
            MessageEntry e = s.index.lastVisible();
            s.index.remove(e);
            s.mutations.add(new Mutation.Delete(s.keys.state(e.seq)));
            s.deferred.add(e, s.index.nowMillis(), s.mutations);
        }
    }

    /**
     * The message {@code seq} in the index, brought in from the deferred tail when it waits there and was leased here
     * before (a receipt handle names it); null when neither has it.
     */
    MessageEntry indexed(long seq) {
        MessageEntry e = s.index.get(seq);
        if (e == null && !s.deferred.isEmpty()) {
            RecordCodec.DecodedState d = s.deferred.takeLeased(seq, s.index.nowMillis(), s.mutations);
            if (d != null) {
                indexFromCold(List.of(d));
                e = d.entry();
            }
        }
        return e;
    }

    /**
     * Reads the next page of the cold tail back into the index, oldest first: when a receive, a move or the expiry
     * reaches a cold message in its order (delivery order, retention order). FIFO: the oldest cold message's group's
     * next page, so that the group's messages in memory stay ahead of its cold ones.
     */
    void pageIn() {
        pageIn(s.page);
    }

    /** {@link #pageIn()}, at most {@code max} messages. */
    void pageIn(int max) {
        RecordCodec.DecodedState oldest = s.config.fifo() ? s.cold.oldest() : null;
        if (oldest != null && oldest.groupId() != null) {
            // the oldest cold message's group's first cold ones (in producer order, it may come later in its group)
            long before = s.cold.count();
            String groupId = oldest.groupId();
            pageInGroup(groupId, s.index.group(groupId) == null ? s.coldGroups.first(groupId) : -1, max);
            if (s.cold.count() < before) {
                return;
            } // else its group record is missing (never written so): take that one message below, so expiry goes on
            max = 1;
        }
        indexFromCold(s.cold.take(max, s.mutations));
    }

    /** Cold messages taken out of the cold range go into the index (FIFO: into their groups, in order). */
    void indexFromCold(List<RecordCodec.DecodedState> taken) {
        for (RecordCodec.DecodedState d : taken) {
            d.entry().visibleAtMillis = coldVisibleAt(d.entry());
            s.index.add(d.entry(), s.config.fifo() ? d.groupId() : null);
            s.putState(d.entry());
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
        FifoGroup inMemory = s.index.group(groupId);
        byte[] from;
        if (inMemory != null) {
            from = PartitionKeys.after(s.coldGroups.memberKey(groupId, inMemory.messages.peekLast()));
        } else {
            MessageEntry head = headSeq < 0 ? null : coldState(headSeq);
            from = head == null ? s.keys.coldMembersStart(groupId) : s.coldGroups.memberKey(groupId, head);
        }
        List<byte[]> members = s.coldGroups.members(groupId, from, max + 1);
        List<byte[]> taking = members.subList(0, Math.min(max, members.size()));
        if (inMemory == null && headSeq >= 0) {
            s.coldGroups.removeHead(headSeq, s.mutations); // also a head record left without messages: it goes
        }
        List<Long> seqs = new ArrayList<>(taking.size());
        for (byte[] member : taking) {
            s.coldGroups.removeMember(member, s.mutations);
            seqs.add(PartitionKeys.memberSeqOf(member));
        }
        indexFromCold(s.cold.take(seqs, s.mutations));
        FifoGroup g = s.index.group(groupId);
        boolean more = members.size() > taking.size();
        if (g != null) {
            g.hasCold = more;
        } else if (more) {
            s.coldGroups.putHead(PartitionKeys.memberSeqOf(members.get(taking.size())), groupId, s.mutations);
        }
        return g;
    }

    /**
     * FIFO: a group that still has cold messages but none in memory any more (deleted, expired, handed off) is cold
     * entirely from now on: its oldest cold message becomes its head record. Called after every command.
     */
    void settleColdGroups() {
        for (FifoGroup g : s.index.drainEmptiedWithCold()) {
            if (s.index.group(g.id) == null) { // else it came back in the same command, which set its hasCold
                long head = s.coldGroups.first(g.id);
                if (head >= 0) {
                    s.coldGroups.putHead(head, g.id, s.mutations);
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
    boolean sendToColdGroup(String groupId, MessageEntry e) {
        FifoGroup g = s.index.group(groupId);
        long head = -1;
        if (g != null) {
            if (!g.hasCold && s.index.size() < s.hotLimit
                    || MessageEntry.BY_PRODUCER_ORDER.compare(g.messages.peekLast(), e) > 0) {
                return false;
            }
        } else {
            head = s.coldGroups.first(groupId);
            if (head < 0 && s.index.size() < s.hotLimit) {
                return false;
            }
        }
        e.fifoGroupId = groupId;
        s.cold.add(e, s.mutations);
        s.coldGroups.addMember(groupId, e, s.mutations);
        if (g != null) {
            g.hasCold = true;
        } else if (head < 0) {
            s.coldGroups.putHead(e.seq, groupId, s.mutations); // a group cold entirely
        } else {
            MessageEntry headState = coldState(head);
            if (headState != null && MessageEntry.BY_PRODUCER_ORDER.compare(e, headState) < 0) {
                s.coldGroups.removeHead(head, s.mutations); // it goes before the group's head: the new head
                s.coldGroups.putHead(e.seq, groupId, s.mutations);
            }
        }
        return true;
    }

    /** FIFO: when a cold group's head becomes visible next (as far as {@link #coldWalk} looks), or -1. */
    long coldWake() {
        return s.config.fifo() && !s.cold.isEmpty() ? coldWalk().wakeMillis() : -1;
    }

    boolean hasDeliverable() {
        // a group whose messages are all cold is ready when its head is visible: nothing of it is in flight
        return s.config.fifo() ? s.index.hasReadyGroup() || coldWalk().visible() : s.visibleCount() > 0;
    }

    /** The FIFO delay changed: cold heads' visibility is read anew. */
    void forgetColdWalk() {
        coldWalk = null;
    }
}
