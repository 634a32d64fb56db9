package io.sluice.backend.engine;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Where a FIFO partition's cold messages are by group: each group's cold messages ({@code f group seq}, in seq
 * order) and, for each group with no message in memory at all, its head ({@code h seq → group}). Their states are in
 * the cold range ({@link ColdTail}); every read and write goes through the tail, so a command sees what earlier
 * commands of its entry wrote.
 *
 * <p>A group's messages in memory come before its cold ones in its order: a send joins the cold ones when its group
 * has any or the index is full, and a page-in moves a group's oldest cold messages into memory. So the groups a
 * receive may take from, oldest head first, are the index's ready groups merged with the cold groups' heads (a cold
 * group has nothing in flight and its head is visible: cold messages are visible since their send).
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

    /**
     * Up to {@code max} of the group's cold seqs from {@code fromSeq} on, oldest first (starting where the caller knows
     * the group's cold messages start skips what earlier commands of the entry paged in).
     */
    List<Long> seqs(String groupId, long fromSeq, int max) {
        List<Long> out = new ArrayList<>();
        if (!cold.isEmpty()) {
            // every cold seq is at or after the cold range's first: deletions below it are not walked again
            cold.read(keys.coldMember(groupId, Math.max(fromSeq, cold.from())), keys.coldMembersEnd(groupId), max,
                    (k, v) -> out.add(PartitionKeys.memberSeqOf(k)));
        }
        return out;
    }

    /** Whether the group has cold messages. */
    boolean has(String groupId) {
        return first(groupId) >= 0;
    }

    /** The group's oldest cold seq, or -1. */
    long first(String groupId) {
        List<Long> s = seqs(groupId, 0, 1);
        return s.isEmpty() ? -1 : s.get(0);
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

    void addMember(String groupId, long seq, List<Mutation> mutations) {
        cold.put(keys.coldMember(groupId, seq), new byte[0], mutations);
    }

    void removeMember(String groupId, long seq, List<Mutation> mutations) {
        cold.delete(keys.coldMember(groupId, seq), mutations);
    }

    /** The group has no message in memory now: its oldest cold one is its head. */
    void putHead(long seq, String groupId, List<Mutation> mutations) {
        cold.put(keys.coldHead(seq), groupId.getBytes(StandardCharsets.UTF_8), mutations);
    }

    void removeHead(long seq, List<Mutation> mutations) {
        cold.delete(keys.coldHead(seq), mutations);
    }
}
