package io.sluice.backend.engine;

import io.sluice.partition.Bytes;
import io.sluice.partition.DeadLetterReason;


/**
 * Binary encodings of the stored records. Each record starts with a format version byte; readers accept every
 * version they know, so a newer node reads older data. Strings are length-prefixed UTF-8, -1 meaning null.
 */
final class RecordCodec {
    private static final byte V1 = Bytes.V1;

    private RecordCodec() {
    }

    // ---- message body record -------------------------------------------------------------------------------



    // ---- message state record ------------------------------------------------------------------------------

    static byte[] encodeState(MessageEntry e) {
        Bytes.Writer w = new Bytes.Writer(48);
        w.u8(V1);
        w.i64(e.visibleAtMillis);
        w.i64(e.retentionBaseMillis);
        w.i64(e.receivedAtMillis);
        w.i64(e.firstReceiveMillis);
        w.i32(e.receiveCount);
        w.u8(e.deadLetterReason == null ? 0 : e.deadLetterReason.code());
        w.str(e.groupId());
        w.i64(e.backoffFromMillis); // appended later: older records end before it (no backoff)
        w.i64(e.orderMillis); // likewise: older records have order time 0 (before every newer message)
        w.str(e.producerId);
        w.i64(e.releaseMillis);
        return w.toBytes();
    }

    /** A state record as read at open; the group id is resolved to a {@link FifoGroup} by the caller. */
    record DecodedState(MessageEntry entry, String groupId) {
    }

    static DecodedState decodeState(long seq, byte[] bytes) {
        Bytes.Reader r = new Bytes.Reader(bytes);
        r.version();
        MessageEntry e = new MessageEntry(seq);
        e.visibleAtMillis = r.i64();
        e.retentionBaseMillis = r.i64();
        e.receivedAtMillis = r.i64();
        e.firstReceiveMillis = r.i64();
        e.receiveCount = r.i32();
        int reason = r.u8();
        e.deadLetterReason = reason == 0 ? null : DeadLetterReason.ofCode(reason);
        String groupId = r.str();
        e.backoffFromMillis = r.hasRemaining() ? r.i64() : 0;
        if (r.hasRemaining()) {
            e.orderMillis = r.i64();
            e.producerId = r.str();
            e.releaseMillis = r.i64();
        }
        return new DecodedState(e, groupId);
    }

    // ---- partition meta and config -------------------------------------------------------------------------

    /**
     * The partition's meta record; {@code totals}, then the cold tail ({@link ColdTail}), then the deferred messages'
     * count ({@link DeferredTail}), then the first seq sent after the FIFO delay last changed and whether FIFO cold
     * members are keyed in producer order ({@link PartitionKeys#coldMember}) were appended later: a record without
     * them reads as zero totals, no cold or deferred messages, no delay change and members keyed by seq.
     */
    record Meta(long nextSeq, long lastNowMillis, long lastPurgeMillis, boolean retired, PartitionTotals totals,
                long coldCount, long coldFrom, long coldOldestMillis, long deferredCount, long delayChangedSeq,
                boolean orderedMembers) {
        Meta(long nextSeq, long lastNowMillis, long lastPurgeMillis, boolean retired, PartitionTotals totals,
             long coldCount, long coldFrom, long coldOldestMillis, long deferredCount) {
            this(nextSeq, lastNowMillis, lastPurgeMillis, retired, totals, coldCount, coldFrom, coldOldestMillis,
                    deferredCount, 0, false);
        }
    }

    static byte[] encodeMeta(Meta m) {
        Bytes.Writer w = new Bytes.Writer(96);
        w.u8(V1);
        w.i64(m.nextSeq());
        w.i64(m.lastNowMillis());
        w.i64(m.lastPurgeMillis());
        w.u8(m.retired() ? 1 : 0);
        PartitionTotals t = m.totals();
        w.i64(t.sent());
        w.i64(t.received());
        w.i64(t.deleted());
        w.i64(t.expired());
        w.i64(t.purged());
        w.i64(t.deadLetteredMaxReceives());
        w.i64(t.deadLetteredRetention());
        w.i64(t.deadLetteredSourceDeleted());
        w.i64(m.coldCount());
        w.i64(m.coldFrom());
        w.i64(m.coldOldestMillis());
        w.i64(t.late()); // appended later: older records count no late messages
        w.i64(m.deferredCount()); // likewise: older records have no deferred messages
        w.i64(m.delayChangedSeq()); // likewise: no FIFO delay change since a cold message was sent
        w.u8(m.orderedMembers() ? 1 : 0); // likewise: FIFO cold members keyed by seq (rewritten at open)
        return w.toBytes();
    }

    static Meta decodeMeta(byte[] bytes) {
        Bytes.Reader r = new Bytes.Reader(bytes);
        r.version();
        long nextSeq = r.i64();
        long lastNow = r.i64();
        long lastPurge = r.i64();
        boolean retired = r.u8() != 0;
        PartitionTotals totals = !r.hasRemaining() ? PartitionTotals.ZERO : new PartitionTotals(r.i64(), r.i64(),
                r.i64(), r.i64(), r.i64(), r.i64(), r.i64(), r.i64(), 0);
        if (!r.hasRemaining()) {
            return new Meta(nextSeq, lastNow, lastPurge, retired, totals, 0, nextSeq, -1, 0);
        }
        long coldCount = r.i64();
        long coldFrom = r.i64();
        long coldOldest = r.i64();
        if (r.hasRemaining()) {
            totals = totals.withLate(r.i64());
        }
        long deferredCount = r.hasRemaining() ? r.i64() : 0;
        long delayChangedSeq = r.hasRemaining() ? r.i64() : 0;
        boolean orderedMembers = r.hasRemaining() && r.u8() != 0;
        return new Meta(nextSeq, lastNow, lastPurge, retired, totals, coldCount, coldFrom, coldOldest, deferredCount,
                delayChangedSeq, orderedMembers);
    }



    // ---- deduplication and receive attempts ----------------------------------------------------------------

    static byte[] encodeDedup(DedupWindow.Entry d) {
        Bytes.Writer w = new Bytes.Writer(80);
        w.u8(V1);
        w.str(d.messageId());
        w.i64(d.seq());
        w.str(d.sequenceNumber());
        w.i64(d.expiresAtMillis());
        return w.toBytes();
    }

    static DedupWindow.Entry decodeDedup(String key, byte[] bytes) {
        Bytes.Reader r = new Bytes.Reader(bytes);
        r.version();
        return new DedupWindow.Entry(key, r.str(), r.i64(), r.str(), r.i64());
    }

    static byte[] encodeMark(GroupMarks.Mark m) {
        Bytes.Writer w = new Bytes.Writer(32);
        w.u8(V1);
        w.i64(m.orderMillis());
        w.str(m.producerId());
        w.i64(m.expiresAtMillis());
        return w.toBytes();
    }

    static GroupMarks.Mark decodeMark(String groupId, byte[] bytes) {
        Bytes.Reader r = new Bytes.Reader(bytes);
        r.version();
        return new GroupMarks.Mark(groupId, r.i64(), r.str(), r.i64());
    }

    static byte[] encodeAttempt(ReceiveAttempts.Attempt a) {
        Bytes.Writer w = new Bytes.Writer(16 + a.leases().length * 8);
        w.u8(V1);
        w.i64(a.expiresAtMillis());
        w.i32(a.leases().length / 3);
        for (long v : a.leases()) {
            w.i64(v);
        }
        return w.toBytes();
    }

    static ReceiveAttempts.Attempt decodeAttempt(String id, byte[] bytes) {
        Bytes.Reader r = new Bytes.Reader(bytes);
        r.version();
        long expiresAt = r.i64();
        long[] leases = new long[r.i32() * 3];
        for (int i = 0; i < leases.length; i++) {
            leases[i] = r.i64();
        }
        return new ReceiveAttempts.Attempt(id, expiresAt, leases);
    }

}
