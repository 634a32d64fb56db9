package io.sluice.partition;

import io.sluice.common.validation.RedeliveryBackoff;

/**
 * The binary records a partition's message and configuration share between its store and the wire (log entries and
 * replies): format version byte first, length-prefixed UTF-8 strings ({@link Bytes}). Readers accept every version
 * they know, so a newer node reads older data.
 */
public final class PayloadCodec {
    private static final byte V1 = Bytes.V1;

    private PayloadCodec() {
    }

    public static byte[] encodeMessage(StoredMessage m) {
        Bytes.Writer w = new Bytes.Writer(64 + m.body().length() * 3);
        w.u8(V1);
        w.str(m.messageId());
        w.str(m.body());
        w.attributes(m.attributes());
        w.attributes(m.systemAttributes());
        w.i64(m.sentTimestampMillis());
        w.str(m.groupId());
        w.str(m.deduplicationId());
        w.str(m.sequenceNumber());
        w.str(m.senderId());
        w.str(m.deadLetterSourceArn());
        if (m.deadLetterReason() != null) { // appended later: older records end before it, older readers stop there
            w.u8(m.deadLetterReason().code());
        }
        return w.toBytes();
    }

    public static StoredMessage decodeMessage(byte[] bytes) {
        Bytes.Reader r = new Bytes.Reader(bytes);
        r.version();
        StoredMessage m = new StoredMessage(r.str(), r.str(), r.attributes(), r.attributes(), r.i64(), r.str(), r.str(),
                r.str(), r.str(), r.str());
        if (!r.hasRemaining()) {
            return m;
        }
        int code = r.u8();
        DeadLetterReason reason = null;
        for (DeadLetterReason known : DeadLetterReason.values()) {
            reason = known.code() == code ? known : reason; // a newer code than this version knows: none
        }
        return new StoredMessage(m.messageId(), m.body(), m.attributes(), m.systemAttributes(),
                m.sentTimestampMillis(), m.groupId(), m.deduplicationId(), m.sequenceNumber(), m.senderId(),
                m.deadLetterSourceArn(), reason);
    }

    public static byte[] encodeConfig(PartitionConfig c) {
        Bytes.Writer w = new Bytes.Writer(40);
        w.u8(V1);
        w.u8(c.fifo() ? 1 : 0);
        w.u8(c.contentBasedDeduplication() ? 1 : 0);
        w.u8(c.deduplicationPerGroup() ? 1 : 0);
        w.i32(c.delaySeconds());
        w.i32(c.visibilityTimeoutSeconds());
        w.i32(c.retentionSeconds());
        w.i32(c.maxReceiveCount());
        w.u8(c.deadLetterOnExpiry() ? 1 : 0);
        w.i32(c.maxInflight());
        w.i32(c.maxBacklog()); // appended later: older records end before it
        w.i64(c.version()); // likewise
        RedeliveryBackoff b = c.redeliveryBackoff(); // likewise: older records have none
        w.u8(b == null ? 0 : 1);
        if (b != null) {
            w.i32(b.initialSeconds());
            w.i64(Double.doubleToLongBits(b.multiplier()));
            w.i32(b.maxSeconds());
            w.u8(b.jitter().ordinal());
        }
        w.i32(c.reorderWindowMillis()); // appended later: older records have no reorder window
        return w.toBytes();
    }

    public static PartitionConfig decodeConfig(byte[] bytes) {
        Bytes.Reader r = new Bytes.Reader(bytes);
        r.version();
        PartitionConfig c = new PartitionConfig(r.u8() != 0, r.u8() != 0, r.u8() != 0, r.i32(), r.i32(), r.i32(),
                r.i32(), r.u8() != 0, r.i32());
        c = r.hasRemaining() ? c.withMaxBacklog(r.i32()) : c;
        c = r.hasRemaining() ? c.withVersion(r.i64()) : c;
        if (r.hasRemaining() && r.u8() != 0) {
            c = c.withRedeliveryBackoff(new RedeliveryBackoff(r.i32(), Double.longBitsToDouble(r.i64()), r.i32(),
                    RedeliveryBackoff.Jitter.values()[r.u8()]));
        }
        return r.hasRemaining() ? c.withReorderWindowMillis(r.i32()) : c;
    }
}
