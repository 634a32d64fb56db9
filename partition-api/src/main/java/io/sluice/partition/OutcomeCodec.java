package io.sluice.partition;

import io.sluice.common.ReceiptHandle;
import io.sluice.common.SqsError;
import io.sluice.common.SqsFailure;
import java.util.ArrayList;
import java.util.List;

/**
 * The binary form of command outcomes in a shard's replies: the response of each command of a batch, in order; a
 * receive's leases without their bodies (read after the commit, {@link #encodeMessages}). Effects are not sent: only the primary executes them. Format
 * {@code version(1) count(4)} then per outcome a response type byte and its fields; add, never renumber.
 */
public final class OutcomeCodec {
    private static final int REJECTED = 1;
    private static final int DONE = 2;
    private static final int SENT = 3;
    private static final int RECEIVED = 4;
    private static final int ENTRY_OUTCOMES = 5;
    private static final int COUNT = 6;

    private OutcomeCodec() {
    }

    public static byte[] encode(List<PartitionOutcome> outcomes) {
        Bytes.Writer w = new Bytes.Writer(256);
        w.u8(Bytes.V1);
        w.i32(outcomes.size());
        for (PartitionOutcome o : outcomes) {
            write(w, o);
        }
        return w.toBytes();
    }

    public static List<PartitionOutcome> decode(byte[] bytes) {
        Bytes.Reader r = new Bytes.Reader(bytes);
        r.version();
        int n = r.i32();
        List<PartitionOutcome> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(read(r));
        }
        return out;
    }

    private static void write(Bytes.Writer w, PartitionOutcome o) {
        PartitionResponse response = o.response();
        if (response instanceof PartitionResponse.Rejected rej) {
            w.u8(REJECTED);
            writeFailure(w, rej.failure());
        } else if (response instanceof PartitionResponse.Done) {
            w.u8(DONE);
        } else if (response instanceof PartitionResponse.Sent sent) {
            w.u8(SENT);
            w.i32(sent.messages().size());
            for (PartitionResponse.SentMessage m : sent.messages()) {
                w.str(m.messageId());
                w.i64(m.seq());
                w.str(m.sequenceNumber());
                w.u8(m.duplicate() ? 1 : 0);
            }
        } else if (response instanceof PartitionResponse.Received received) {
            w.u8(RECEIVED); // the leases only: bodies are read after the commit
            w.i32(received.deliveries().size());
            for (PartitionResponse.Delivery del : received.deliveries()) {
                w.i64(del.seq());
                ReceiptHandle h = del.receiptHandle();
                w.i64(h.queueId());
                w.i32(h.partition());
                w.i64(h.seq());
                w.i32(h.receiveCount());
                w.i32(del.receiveCount());
                w.i64(del.firstReceiveTimestampMillis());
            }
        } else if (response instanceof PartitionResponse.EntryOutcomes entries) {
            w.u8(ENTRY_OUTCOMES);
            w.i32(entries.failures().size());
            for (SqsFailure f : entries.failures()) {
                w.u8(f == null ? 0 : 1);
                if (f != null) {
                    writeFailure(w, f);
                }
            }
        } else if (response instanceof PartitionResponse.Count count) {
            w.u8(COUNT);
            w.i32(count.count());
        } else {
            throw new IllegalArgumentException("no codec for " + response.getClass());
        }
    }

    private static PartitionOutcome read(Bytes.Reader r) {
        int type = r.u8();
        return switch (type) {
            case REJECTED -> outcome(new PartitionResponse.Rejected(readFailure(r)));
            case DONE -> outcome(new PartitionResponse.Done());
            case SENT -> {
                int n = r.i32();
                List<PartitionResponse.SentMessage> sent = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    sent.add(new PartitionResponse.SentMessage(r.str(), r.i64(), r.str(), r.u8() != 0));
                }
                yield outcome(new PartitionResponse.Sent(sent));
            }
            case RECEIVED -> {
                int n = r.i32();
                List<PartitionResponse.Delivery> deliveries = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    deliveries.add(new PartitionResponse.Delivery(r.i64(),
                            new ReceiptHandle(r.i64(), r.i32(), r.i64(), r.i32()), r.i32(), r.i64()));
                }
                yield outcome(new PartitionResponse.Received(deliveries));
            }
            case ENTRY_OUTCOMES -> {
                int n = r.i32();
                List<SqsFailure> failures = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    failures.add(r.u8() == 0 ? null : readFailure(r));
                }
                yield outcome(new PartitionResponse.EntryOutcomes(failures));
            }
            case COUNT -> outcome(new PartitionResponse.Count(r.i32()));
            default -> throw new IllegalArgumentException("unknown response type " + type);
        };
    }

    private static PartitionOutcome outcome(PartitionResponse response) {
        return new PartitionOutcome(response, List.of(), List.of());
    }

    /** The stored form of a message (for reads of a single message). */
    public static byte[] encodeMessage(StoredMessage m) {
        return PayloadCodec.encodeMessage(m);
    }

    public static StoredMessage decodeMessage(byte[] bytes) {
        return PayloadCodec.decodeMessage(bytes);
    }

    /** Several stored messages, in order; a null (a message that is gone) stays null. */
    public static byte[] encodeMessages(List<StoredMessage> messages) {
        Bytes.Writer w = new Bytes.Writer(1024);
        w.u8(Bytes.V1);
        w.i32(messages.size());
        for (StoredMessage m : messages) {
            w.u8(m == null ? 0 : 1);
            if (m != null) {
                w.bytes(PayloadCodec.encodeMessage(m));
            }
        }
        return w.toBytes();
    }

    public static List<StoredMessage> decodeMessages(byte[] bytes) {
        Bytes.Reader r = new Bytes.Reader(bytes);
        r.version();
        int n = r.i32();
        List<StoredMessage> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(r.u8() == 0 ? null : PayloadCodec.decodeMessage(r.bytes()));
        }
        return out;
    }

    private static void writeFailure(Bytes.Writer w, SqsFailure f) {
        w.str(f.error().name());
        w.str(f.message());
    }

    private static SqsFailure readFailure(Bytes.Reader r) {
        return new SqsFailure(SqsError.valueOf(r.str()), r.str());
    }
}
