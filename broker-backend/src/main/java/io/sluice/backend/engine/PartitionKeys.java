package io.sluice.backend.engine;

import io.sluice.partition.PartitionId;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The key layout. Every key of a partition starts with its 12-byte prefix {@code queueId(8) index(4)}
 * (big-endian), so many partitions share one RocksDB instance and a partition's keys are one contiguous range.
 * After the prefix a one-byte record type:
 *
 * <pre>
 *   c                 partition config
 *   m                 partition meta (next seq, last applied time, last purge, retired)
 *   b seq(8)          message body and attributes (immutable, written once)
 *   s seq(8)          message state (visibility, receive count, ...; rewritten on every lease)
 *   q seq(8)          state of a message in the cold tail (on disk only, not in the index; see ColdTail)
 *   d dedupKey        FIFO deduplication entry
 *   a attemptId       FIFO receive-attempt record
 *   o groupId         FIFO reorder window: the group's latest producer order delivered (GroupMarks)
 *   t taskId          message move task (this partition's share)
 *   f len(2) groupId orderMillis(8) producerId seq(8)
 *                     FIFO: a cold message of the group, in the group's producer order (no value; its state is
 *                     under q seq, see FifoColdGroups); the producer id as 3 bytes a char ({@code 01 hi lo}) and a
 *                     {@code 00}, so keys sort as (order time, producer id, seq) do. Stores written before FIFO
 *                     queues with a delay or a reorder window paged have {@code f len(2) groupId seq(8)} (told apart
 *                     by length): a partition's are rewritten when it is first opened by a newer node
 *                     ({@link PartitionEngine#open}).
 *   h seq(8)          FIFO: the head of a group whose messages are all cold (value: the group id)
 *   w visibleAt(8) seq(8)
 *                     standard: state of a deferred message (on disk only, by delivery order; see DeferredTail)
 *   x retentionBase(8) seq(8)
 *                     standard: a deferred message by retention order (value: its visibleAt)
 *   y visibleAt(8)    standard: how many deferred messages become visible then (value: count(4))
 *   z seq(8)          standard: where a deferred message leased here before is (value: its visibleAt)
 *   k handOffKey      a dead-letter or move copy's hand-off key, for the deduplication window (HandOffKeys)
 *   e expiresAt(8) seq(8)
 *                     the hand-off keys by expiry (value: the key)
 * </pre>
 *
 * Bodies ({@code b}) and states ({@code s}) live in separate ranges so that rebuilding the in-memory index at
 * open reads only the small state records, and a lease rewrites a few dozen bytes, not the body. Sequence
 * numbers are big-endian so a range scan visits messages in send order. Queue id 0 holds shard-level keys:
 * the applied log index ({@code i}), the apply digest ({@code h}) and the applied entry ids ({@code r writer(8)},
 * {@link EntryIds}).
 */
public final class PartitionKeys {
    static final byte CONFIG = 'c';
    static final byte META = 'm';
    static final byte BODY = 'b';
    static final byte STATE = 's';
    static final byte COLD = 'q';
    static final byte DEDUP = 'd';
    static final byte ATTEMPT = 'a';
    static final byte MOVE_TASK = 't';
    static final byte GROUP_MARK = 'o';
    static final byte COLD_MEMBER = 'f';
    static final byte COLD_HEAD = 'h';
    static final byte DEFERRED = 'w';
    static final byte DEFERRED_BY_RETENTION = 'x';
    static final byte DEFERRED_DUE = 'y';
    static final byte DEFERRED_SEQ = 'z';
    static final byte HAND_OFF_KEY = 'k';
    static final byte HAND_OFF_EXPIRY = 'e';
    /** Every record type of {@link DeferredTail}. */
    static final byte[] DEFERRED_TYPES = {DEFERRED, DEFERRED_BY_RETENTION, DEFERRED_DUE, DEFERRED_SEQ};

    public static final int PREFIX_LENGTH = 12;

    private final PartitionId partition;
    private final byte[] prefix;

    public PartitionKeys(PartitionId partition) {
        this.partition = partition;
        this.prefix = ByteBuffer.allocate(PREFIX_LENGTH).putLong(partition.queueId()).putInt(partition.index()).array();
    }

    public PartitionId partition() {
        return partition;
    }

    /** First key of this partition's range. */
    public byte[] rangeStart() {
        return prefix.clone();
    }

    /** First key after this partition's range. */
    public byte[] rangeEnd() {
        return ByteBuffer.allocate(PREFIX_LENGTH).putLong(partition.queueId()).putInt(partition.index() + 1).array();
    }

    public byte[] config() {
        return typed(CONFIG, 0).array();
    }

    public byte[] meta() {
        return typed(META, 0).array();
    }

    public byte[] body(long seq) {
        return typed(BODY, 8).putLong(seq).array();
    }

    public byte[] state(long seq) {
        return typed(STATE, 8).putLong(seq).array();
    }

    public byte[] cold(long seq) {
        return typed(COLD, 8).putLong(seq).array();
    }

    public byte[] dedup(String dedupKey) {
        byte[] k = dedupKey.getBytes(StandardCharsets.UTF_8);
        return typed(DEDUP, k.length).put(k).array();
    }

    public byte[] attempt(String attemptId) {
        byte[] k = attemptId.getBytes(StandardCharsets.UTF_8);
        return typed(ATTEMPT, k.length).put(k).array();
    }

    public byte[] groupMark(String groupId) {
        byte[] k = groupId.getBytes(StandardCharsets.UTF_8);
        return typed(GROUP_MARK, k.length).put(k).array();
    }

    public byte[] moveTask(String taskId) {
        byte[] k = taskId.getBytes(StandardCharsets.UTF_8);
        return typed(MOVE_TASK, k.length).put(k).array();
    }

    /** A FIFO group's cold message, in producer order: {@code f len(2) groupId orderMillis producerId seq}. */
    public byte[] coldMember(String groupId, long orderMillis, String producerId, long seq) {
        byte[] g = groupId.getBytes(StandardCharsets.UTF_8);
        String id = producerId == null ? "" : producerId;
        ByteBuffer b = typed(COLD_MEMBER, 2 + g.length + 8 + 3 * id.length() + 1 + 8)
                .putShort((short) g.length).put(g).putLong(orderMillis);
        for (int i = 0; i < id.length(); i++) {
            b.put((byte) 1).putChar(id.charAt(i)); // UTF-16 units, as String.compareTo orders them
        }
        return b.put((byte) 0).putLong(seq).array();
    }

    /** The group prefix of a FIFO group's cold messages: {@code f len(2) groupId}. */
    private byte[] coldMembers(String groupId) {
        byte[] g = groupId.getBytes(StandardCharsets.UTF_8);
        return typed(COLD_MEMBER, 2 + g.length).putShort((short) g.length).put(g).array();
    }

    /** The first key of a FIFO group's cold messages; {@link #coldMembersEnd} is the first key after them. */
    public byte[] coldMembersStart(String groupId) {
        return coldMembers(groupId);
    }

    public byte[] coldMembersEnd(String groupId) {
        byte[] start = coldMembers(groupId);
        byte[] end = Arrays.copyOf(start, start.length + 9); // after every member: order bytes all 0xFF
        Arrays.fill(end, start.length, end.length, (byte) 0xFF);
        return end;
    }

    /** The head of a FIFO group that is cold entirely, by the head's seq. */
    public byte[] coldHead(long seq) {
        return typed(COLD_HEAD, 8).putLong(seq).array();
    }

    /** A deferred message: {@code w visibleAt seq}. */
    public byte[] deferred(long visibleAt, long seq) {
        return typed(DEFERRED, 16).putLong(visibleAt).putLong(seq).array();
    }

    /** A deferred message by retention order: {@code x retentionBase seq}. */
    public byte[] deferredByRetention(long retentionBase, long seq) {
        return typed(DEFERRED_BY_RETENTION, 16).putLong(retentionBase).putLong(seq).array();
    }

    /** How many deferred messages become visible at {@code visibleAt}: {@code y visibleAt}. */
    public byte[] deferredDue(long visibleAt) {
        return typed(DEFERRED_DUE, 8).putLong(visibleAt).array();
    }

    /** Where a deferred message leased here before is: {@code z seq}. */
    public byte[] deferredSeq(long seq) {
        return typed(DEFERRED_SEQ, 8).putLong(seq).array();
    }

    /** A copy's hand-off key remembered for the deduplication window: {@code k key}. */
    public byte[] handOffKey(String handOffKey) {
        byte[] k = handOffKey.getBytes(StandardCharsets.UTF_8);
        return typed(HAND_OFF_KEY, k.length).put(k).array();
    }

    /** A hand-off key by when it expires: {@code e expiresAt seq}. */
    public byte[] handOffExpiry(long expiresAt, long seq) {
        return typed(HAND_OFF_EXPIRY, 16).putLong(expiresAt).putLong(seq).array();
    }

    /** The seq at the end of a {@link #deferred} key. */
    static long deferredSeqOf(byte[] key) {
        return ByteBuffer.wrap(key, key.length - 8, 8).getLong();
    }

    /**
     * Whether a cold member key has the layout of stores written before producer order ({@code f len(2) groupId
     * seq(8)}).
     */
    static boolean isSeqOrderedMember(byte[] key) {
        int groupLength = ByteBuffer.wrap(key, PREFIX_LENGTH + 1, 2).getShort() & 0xFFFF;
        return key.length == PREFIX_LENGTH + 1 + 2 + groupLength + 8;
    }

    /** The group id of a {@link #coldMember} key. */
    static String memberGroupOf(byte[] key) {
        int groupLength = ByteBuffer.wrap(key, PREFIX_LENGTH + 1, 2).getShort() & 0xFFFF;
        return new String(key, PREFIX_LENGTH + 3, groupLength, StandardCharsets.UTF_8);
    }

    /** The seq at the end of a {@link #coldMember} key. */
    static long memberSeqOf(byte[] key) {
        return ByteBuffer.wrap(key, key.length - 8, 8).getLong();
    }

    /** The smallest key after {@code key}: {@code key 0x00}. */
    static byte[] after(byte[] key) {
        return Arrays.copyOf(key, key.length + 1);
    }

    /** The prefix of all keys of one record type: {@code prefix type}. */
    public byte[] typePrefix(byte type) {
        return typed(type, 0).array();
    }

    /** First key after all keys of one record type. */
    public byte[] typeEnd(byte type) {
        return typed((byte) (type + 1), 0).array();
    }

    public static long seqOf(byte[] key) {
        return ByteBuffer.wrap(key, PREFIX_LENGTH + 1, 8).getLong();
    }

    public static String suffixOf(byte[] key) {
        return new String(key, PREFIX_LENGTH + 1, key.length - PREFIX_LENGTH - 1, StandardCharsets.UTF_8);
    }

    public boolean owns(byte[] key) {
        return key.length >= PREFIX_LENGTH && Arrays.equals(key, 0, PREFIX_LENGTH, prefix, 0, PREFIX_LENGTH);
    }

    private ByteBuffer typed(byte type, int extra) {
        return ByteBuffer.allocate(PREFIX_LENGTH + 1 + extra).put(prefix).put(type);
    }

    /** Shard-level key holding the last applied log index (queue id 0 is never a real queue). */
    public static byte[] appliedIndexKey() {
        return ByteBuffer.allocate(PREFIX_LENGTH + 1).putLong(0).putInt(0).put((byte) 'i').array();
    }

    /** A writer's record in the shard's table of applied entry ids ({@link EntryIds}): a shard-level key. */
    static byte[] entryIdKey(long writer) {
        return ByteBuffer.allocate(PREFIX_LENGTH + 9).putLong(0).putInt(0).put((byte) 'r').putLong(writer).array();
    }

    /** Where the entry-id records start (inclusive) and end (exclusive). */
    static byte[] entryIdsStart() {
        return ByteBuffer.allocate(PREFIX_LENGTH + 1).putLong(0).putInt(0).put((byte) 'r').array();
    }

    static byte[] entryIdsEnd() {
        return ByteBuffer.allocate(PREFIX_LENGTH + 1).putLong(0).putInt(0).put((byte) 's').array();
    }

    /** The shard's apply digest ({@code ShardStore#applied}): a shard-level key, like the applied index. */
    public static byte[] appliedDigestKey() {
        return ByteBuffer.allocate(PREFIX_LENGTH + 1).putLong(0).putInt(0).put((byte) 'h').array();
    }
}
