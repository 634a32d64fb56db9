package io.sluice.backend.shard;

import io.sluice.backend.engine.ShardPartitions;
import io.sluice.partition.Effect;
import io.sluice.partition.MoveTask;
import io.sluice.partition.OutcomeCodec;
import io.sluice.partition.PartitionId;
import io.sluice.partition.PeekedMessage;
import io.sluice.partition.QueueCounts;
import io.sluice.partition.StoredMessage;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The read-only queries a shard answers (Raft read requests, served by the leader): partition counts, the next
 * deadline, visible count, a stored message or several (a receive's bodies), pending dead-letter hand-offs, a partition's move tasks, {@code AWAIT_CONFIGURED} (answered once a partition is configured from a catalog
 * version, its primary asked to do so now), and {@code AWAIT}: a parked query that
 * completes when messages become available in any of the shard's partitions (or at its timeout), which is how a
 * frontend learns of arrivals without polling. Requests and answers are small fixed binary layouts.
 */
public final class ShardQueries {
    public static final byte COUNTS = 1;
    public static final byte NEXT_DEADLINE = 2;
    public static final byte VISIBLE_AT = 3;
    public static final byte READ_MESSAGE = 4;
    public static final byte PENDING_DEAD_LETTERS = 5;
    public static final byte AWAIT = 6;
    public static final byte READ_MESSAGES = 7;
    public static final byte MOVE_TASKS = 8;
    public static final byte AWAIT_CONFIGURED = 9;
    public static final byte PEEK = 10;
    /** The counts of every partition the shard holds (the console's queue list and charts: one query per shard). */
    public static final byte ALL_COUNTS = 11;
    /** A partition's recorded counts over a time range ({@link ShardHistory}: the console's charts). */
    public static final byte HISTORY = 12;
    /** The most messages one PEEK answers. */
    public static final int PEEK_MAX = 10;

    private ShardQueries() {
    }

    /**
     * The answer to a read query of {@code type} ({@code q} its whole request) from a shard's partitions at its time
     * {@code nowMillis}, or null for a type this method does not answer (the parked ones, AWAIT and AWAIT_CONFIGURED,
     * are the shard's own). The caller holds the shard's lock.
     */
    public static byte[] answer(byte type, ByteBuffer q, ShardPartitions partitions, long nowMillis) {
        if (type == PENDING_DEAD_LETTERS) {
            return encodeDeadLetters(partitions.pendingDeadLetters());
        }
        if (type == ALL_COUNTS) {
            Map<PartitionId, QueueCounts> all = new LinkedHashMap<>();
            partitions.stats(nowMillis).forEach(p -> all.put(p.id(), p.counts()));
            return encodeAllCounts(all);
        }
        if (type == READ_MESSAGES) {
            PartitionId id = partitionOf(q);
            List<StoredMessage> found = new ArrayList<>();
            for (long seq : seqsOf(q)) {
                found.add(partitions.readMessage(id, seq));
            }
            return OutcomeCodec.encodeMessages(found);
        }
        PartitionId id = partitionOf(q);
        long arg = argOf(q);
        return switch (type) {
            case COUNTS -> encodeCounts(partitions.counts(id, Math.max(arg, nowMillis)));
            case NEXT_DEADLINE -> encodeLong(partitions.nextDeadlineMillis(id));
            case MOVE_TASKS -> MoveTask.encodeList(partitions.moveTasks(id));
            case PEEK -> encodePeek(partitions.peek(id, nowMillis, (int) Math.min(Math.max(arg, 0), PEEK_MAX)));
            case VISIBLE_AT -> encodeLong(partitions.visibleAt(id, Math.max(arg, nowMillis)));
            case READ_MESSAGE -> {
                StoredMessage m = partitions.readMessage(id, arg);
                yield m == null ? new byte[0] : OutcomeCodec.encodeMessage(m);
            }
            default -> null;
        };
    }

    public static byte[] partitionQuery(byte type, PartitionId p, long arg) {
        return ByteBuffer.allocate(1 + 8 + 4 + 8).put(type).putLong(p.queueId()).putInt(p.index()).putLong(arg).array();
    }

    /** A HISTORY query: the partition, then the range's start and, last (where {@link #argOf} reads it), its end. */
    public static byte[] history(PartitionId p, long fromMillis, long toMillis) {
        return ByteBuffer.allocate(1 + 8 + 4 + 8 + 8).put(HISTORY).putLong(p.queueId()).putInt(p.index())
                .putLong(fromMillis).putLong(toMillis).array();
    }

    /** A HISTORY query's start. */
    public static long historyFrom(ByteBuffer q) {
        if (q.limit() != 29) {
            throw new IllegalArgumentException("malformed history query");
        }
        return q.getLong(13);
    }

    public static byte[] simple(byte type, long arg) {
        return ByteBuffer.allocate(1 + 8).put(type).putLong(arg).array();
    }

    /** The stored copies of several messages of a partition (a receive's bodies, read after its commit). */
    public static byte[] readMessages(PartitionId p, List<Long> seqs) {
        ByteBuffer b = ByteBuffer.allocate(1 + 8 + 4 + 4 + 8 * seqs.size()).put(READ_MESSAGES).putLong(p.queueId())
                .putInt(p.index()).putInt(seqs.size());
        seqs.forEach(b::putLong);
        return b.array();
    }

    public static List<Long> seqsOf(ByteBuffer q) {
        int n = q.getInt(13);
        if (n < 0 || n > 1_000 || q.limit() != 17 + 8 * n) {
            throw new IllegalArgumentException("malformed read of " + n + " messages");
        }
        List<Long> seqs = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            seqs.add(q.getLong(17 + 8 * i));
        }
        return seqs;
    }

    public static PartitionId partitionOf(ByteBuffer q) {
        return new PartitionId(q.getLong(1), q.getInt(9));
    }

    public static long argOf(ByteBuffer q) {
        return q.getLong(q.limit() - 8);
    }

    /** The size of this version's COUNTS answer. */
    static final int COUNTS_BYTES = 4 * 4 + 8 * 5;

    /**
     * COUNTS' answer; the oldest hand-off's time, the arrival skew's p99 and then the sent and received totals trail
     * (a reader of an earlier version stops before them; an answer of an earlier version reads as -1 for them).
     */
    public static byte[] encodeCounts(QueueCounts c) {
        return ByteBuffer.allocate(COUNTS_BYTES).putInt(c.visible()).putInt(c.inflight()).putInt(c.delayed())
                .putInt(c.deadLetterPending()).putLong(c.oldestRetentionBaseMillis()).putLong(c.oldestHandOffMillis())
                .putLong(c.arrivalSkewP99Millis()).putLong(c.sentTotal()).putLong(c.receivedTotal()).array();
    }

    public static QueueCounts decodeCounts(byte[] b) {
        return decodeCounts(ByteBuffer.wrap(b));
    }

    private static QueueCounts decodeCounts(ByteBuffer r) {
        return new QueueCounts(r.getInt(), r.getInt(), r.getInt(), r.getInt(), r.getLong(),
                r.remaining() >= 8 ? r.getLong() : -1, r.remaining() >= 8 ? r.getLong() : -1,
                r.remaining() >= 8 ? r.getLong() : -1, r.remaining() >= 8 ? r.getLong() : -1);
    }

    /** ALL_COUNTS' answer: how many, then each partition's id and its COUNTS answer (of a fixed size). */
    public static byte[] encodeAllCounts(Map<PartitionId, QueueCounts> all) {
        ByteBuffer b = ByteBuffer.allocate(4 + all.size() * (12 + COUNTS_BYTES)).putInt(all.size());
        all.forEach((id, c) -> b.putLong(id.queueId()).putInt(id.index()).put(encodeCounts(c)));
        return b.array();
    }

    public static Map<PartitionId, QueueCounts> decodeAllCounts(byte[] bytes) {
        ByteBuffer b = ByteBuffer.wrap(bytes);
        int n = b.getInt();
        if (n < 0 || b.remaining() != (long) n * (12 + COUNTS_BYTES)) {
            throw new IllegalArgumentException("malformed counts of " + n + " partitions");
        }
        Map<PartitionId, QueueCounts> all = new LinkedHashMap<>(n * 2);
        for (int i = 0; i < n; i++) {
            PartitionId id = new PartitionId(b.getLong(), b.getInt());
            all.put(id, decodeCounts(b.slice(b.position(), COUNTS_BYTES)));
            b.position(b.position() + COUNTS_BYTES);
        }
        return all;
    }

    /** PEEK's answer: each message's seq and receive count, then their stored copies ({@link OutcomeCodec}). */
    public static byte[] encodePeek(List<PeekedMessage> peeked) {
        byte[] messages = OutcomeCodec.encodeMessages(
                peeked.stream().map(PeekedMessage::message).toList());
        ByteBuffer b = ByteBuffer.allocate(4 + 12 * peeked.size() + messages.length).putInt(peeked.size());
        peeked.forEach(p -> b.putLong(p.seq()).putInt(p.receiveCount()));
        return b.put(messages).array();
    }

    public static List<PeekedMessage> decodePeek(byte[] bytes) {
        ByteBuffer b = ByteBuffer.wrap(bytes);
        int n = b.getInt();
        if (n < 0 || n > PEEK_MAX || b.remaining() < 12 * n) {
            throw new IllegalArgumentException("malformed peek answer of " + n + " messages");
        }
        long[] seqs = new long[n];
        int[] counts = new int[n];
        for (int i = 0; i < n; i++) {
            seqs[i] = b.getLong();
            counts[i] = b.getInt();
        }
        byte[] rest = new byte[b.remaining()];
        b.get(rest);
        List<StoredMessage> messages = OutcomeCodec.decodeMessages(rest);
        if (messages.size() != n || messages.contains(null)) {
            throw new IllegalArgumentException("malformed peek answer: " + messages.size() + " messages for " + n);
        }
        List<PeekedMessage> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(new PeekedMessage(seqs[i], counts[i], messages.get(i)));
        }
        return out;
    }

    public static byte[] encodeLong(long v) {
        return ByteBuffer.allocate(8).putLong(v).array();
    }

    public static long decodeLong(byte[] b) {
        return ByteBuffer.wrap(b).getLong();
    }

    /**
     * {@code PENDING_DEAD_LETTERS}' answer. Since hand-offs are executed by each shard's leader
     * ({@code DeadLetterHandOffs}) no Sluice component asks it; it is still answered for frontends of earlier
     * versions during a rolling upgrade (their movers' copies are deduplicated at the dead-letter queue).
     */
    public static byte[] encodeDeadLetters(List<Effect.DeadLetter> list) {
        ByteBuffer b = ByteBuffer.allocate(4 + list.size() * (8 + 4 + 8 + 1 + 4 + 8));
        b.putInt(list.size());
        for (Effect.DeadLetter d : list) {
            b.putLong(d.partition().queueId()).putInt(d.partition().index()).putLong(d.seq())
                    .put((byte) d.reason().code()).putInt(d.receiveCount()).putLong(d.firstReceiveTimestampMillis());
        }
        return b.array();
    }

    /**
     * An AWAIT from {@code since} (what its reader heard last from this shard's leader): the timeout is last, where a
     * backend that knows no cursors reads it ({@link #argOf}).
     */
    public static byte[] await(long timeoutMillis, ShardAwaits.Cursor since) {
        return ByteBuffer.allocate(1 + 8 + 8 + 8).put(AWAIT).putLong(since.epoch()).putLong(since.seq())
                .putLong(timeoutMillis).array();
    }

    /** The cursor of an AWAIT query ({@link ShardAwaits.Cursor#NONE} for one without). */
    public static ShardAwaits.Cursor cursorOf(ByteBuffer q) {
        return q.limit() >= 25 ? new ShardAwaits.Cursor(q.getLong(1), q.getLong(9)) : ShardAwaits.Cursor.NONE;
    }

    /**
     * AWAIT answer: the partitions that have messages now (empty at timeout), then how many each has visible, then
     * the cursor the answer brings its reader to. What was added later trails what was there before, so that either
     * side may be older: a reader that knows no counts or cursor stops before them, and {@link #decodeAvailable}
     * gives an answer without counts {@link Integer#MAX_VALUE} each ("unknown: wake all") and without a cursor
     * {@link ShardAwaits.Cursor#NONE}.
     */
    public static byte[] encodeAvailable(ShardAwaits.Answer answer) {
        Map<PartitionId, Integer> available = answer.available();
        ByteBuffer b = ByteBuffer.allocate(4 + available.size() * 16 + 16);
        b.putInt(available.size());
        available.keySet().forEach(p -> b.putLong(p.queueId()).putInt(p.index()));
        available.values().forEach(b::putInt);
        b.putLong(answer.cursor().epoch()).putLong(answer.cursor().seq());
        return b.array();
    }

    public static ShardAwaits.Answer decodeAvailable(byte[] bytes) {
        ByteBuffer b = ByteBuffer.wrap(bytes);
        int n = b.getInt();
        List<PartitionId> ids = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            ids.add(new PartitionId(b.getLong(), b.getInt()));
        }
        boolean counted = b.remaining() >= 4 * n;
        Map<PartitionId, Integer> out = new LinkedHashMap<>();
        for (PartitionId id : ids) {
            out.put(id, counted ? b.getInt() : Integer.MAX_VALUE);
        }
        ShardAwaits.Cursor cursor = b.remaining() >= 16 ? new ShardAwaits.Cursor(b.getLong(), b.getLong())
                : ShardAwaits.Cursor.NONE;
        return new ShardAwaits.Answer(out, cursor);
    }
}
