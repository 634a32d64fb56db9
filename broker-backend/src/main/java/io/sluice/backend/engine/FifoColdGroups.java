package io.sluice.backend.engine;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Where a FIFO partition's cold messages are by group: each group's cold messages ({@code f group orderTime
 * producerId seq}, in the group's producer order, {@link MessageEntry#BY_PRODUCER_ORDER}) and, for each group with no
 * message in memory at all, its head ({@code h seq → group}: the group's first cold message in that order). Their
 * states are in the cold range ({@link ColdTail}); every read and write goes through the tail, so a command sees what
 * earlier commands of its entry wrote.
 *
 * <p>A group's messages in memory come before its cold ones in its order: a send joins the cold ones (at its place in
 * producer order) when its group has any or the index is full, unless it orders before the group's last message in
 * memory; a page-in moves a group's first cold messages into memory. So the groups a receive may take from, oldest
 * head first, are the index's ready groups merged with the cold groups whose head is visible (a cold group has nothing
 * in flight; its head's visibility is its state's, see {@link MessageTiers#coldVisibleAt}).
 */
final class FifoColdGroups {
    /** A group whose messages are all cold, by its head's seq. */
    record Head(long seq, String groupId) {
    }

    private final PartitionKeys keys;
    private final ColdTail cold;

    FifoColdGroups(PartitionKeys keys, ColdTail cold) {
        this.keys = keys;
        this.cold = cold;
    }

    /** A cold message's key among its group's. */
    byte[] memberKey(String groupId, MessageEntry e) {
        return keys.coldMember(groupId, e.orderMillis, e.producerId, e.seq);
    }

    /**
     * Up to {@code max} of the group's cold member keys from {@code from} on, in the group's order (starting where the
     * caller knows the group's cold messages start skips what earlier commands paged in: their deletions are not
     * walked again). {@link PartitionKeys#memberSeqOf} gives each one's seq.
     */
    List<byte[]> members(String groupId, byte[] from, int max) {
        List<byte[]> out = new ArrayList<>();
        if (!cold.isEmpty()) {
            cold.read(from, keys.coldMembersEnd(groupId), max, (k, v) -> out.add(k));
        }
        return out;
    }

    /** Whether the group has cold messages. */
    boolean has(String groupId) {
        return first(groupId) >= 0;
    }

    /** The group's first cold seq in its order, or -1 (reads from the start of the group's records). */
    long first(String groupId) {
        List<byte[]> m = members(groupId, keys.coldMembersStart(groupId), 1);
        return m.isEmpty() ? -1 : PartitionKeys.memberSeqOf(m.get(0));
    }

    /** The cold group with the oldest head after {@code seq}, or null. */
    Head headAfter(long seq) {
        Head[] found = new Head[1];
        if (!cold.isEmpty()) {
            cold.read(keys.coldHead(Math.max(seq + 1, cold.from())), keys.typeEnd(PartitionKeys.COLD_HEAD), 1, (k, v) ->
                    found[0] = new Head(PartitionKeys.seqOf(k), new String(v, StandardCharsets.UTF_8)));
        }
        return found[0];
    }

    void addMember(String groupId, MessageEntry e, List<Mutation> mutations) {
        cold.put(memberKey(groupId, e), new byte[0], mutations);
    }

    void removeMember(byte[] memberKey, List<Mutation> mutations) {
        cold.delete(memberKey, mutations);
    }

    /** The group has no message in memory now: its first cold one is its head. */
    void putHead(long seq, String groupId, List<Mutation> mutations) {
        cold.put(keys.coldHead(seq), groupId.getBytes(StandardCharsets.UTF_8), mutations);
    }

    void removeHead(long seq, List<Mutation> mutations) {
        cold.delete(keys.coldHead(seq), mutations);
    }
}
