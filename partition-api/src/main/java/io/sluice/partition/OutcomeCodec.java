package io.sluice.partition;

import io.sluice.common.ReceiptHandle;
import io.sluice.common.SqsError;
import io.sluice.common.SqsFailure;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The binary form of command outcomes in a shard's replies: the response of each command of a batch, in order; a
 * receive's leases, optionally followed by their bodies ({@link #encodeWithBodies}; without them the client reads
 * the bodies after the commit, {@link #encodeMessages}). Effects are not sent: only the primary executes them. Format
 * {@code version(1) count(4)} then per outcome a response type byte and its fields; then, optionally, the bodies
 * section ({@code BODIES(1)}, then per receive with leases, in order, an included flag and, if included, one present
 * flag and message per lease).
 * Decoders ignore what trails the sections they know; add, never renumber.
 */
public final class OutcomeCodec {
    private static final int REJECTED = 1;
    private static final int DONE = 2;
    private static final int SENT = 3;
    private static final int RECEIVED = 4;
    private static final int ENTRY_OUTCOMES = 5;
    private static final int COUNT = 6;
    /** Marks the trailing section with the bodies of the receives' leased messages. */
    private static final int BODIES = 0xB0;

    private OutcomeCodec() {
    }

    /** The outcomes, a receive's leases without their bodies. */
    public static byte[] encode(List<PartitionOutcome> outcomes) {
        return outcomes(outcomes, 256).toBytes();
    }

    private static Bytes.Writer outcomes(List<PartitionOutcome> outcomes, int capacity) {
        Bytes.Writer w = new Bytes.Writer(capacity);
        w.u8(Bytes.V1);
        w.i32(outcomes.size());
        for (PartitionOutcome o : outcomes) {
            write(w, o);
        }
        return w;
    }

    /**
     * The most body bytes one reply carries, about (the receives past it carry leases only and their bodies are read
     * separately): an entry may batch many receives, and a reply must stay far below gRPC's message limit (64 MiB).
     * The first receive (at most 10 messages of 256 KiB) is always carried.
     */
    public static final int REPLY_BODY_BUDGET = 4 * 1024 * 1024;

    /** A message's size as the budget counts it: body and attributes, as SQS counts a message's size. */
    public static long sizeOf(StoredMessage m) {
        long size = m.body().length();
        if (m.attributes() != null) {
            for (var e : m.attributes().entrySet()) {
                size += e.getValue().sizeBytes(e.getKey());
            }
        }
        return size;
    }

    /**
     * The outcomes and, for the receives before outcome {@code upTo}, the bodies of their leased messages, taken from
     * each outcome's {@code delivered} (a lease without a delivered message is sent as gone). The caller read those
     * bodies within {@link #REPLY_BODY_BUDGET}.
     */
    public static byte[] encodeWithBodies(List<PartitionOutcome> outcomes, int upTo) {
        Bytes.Writer w = outcomes(outcomes, 1024);
        w.u8(BODIES);
        for (int i = 0; i < outcomes.size(); i++) {
            PartitionOutcome o = outcomes.get(i);
            if (o.response() instanceof PartitionResponse.Received received && !received.deliveries().isEmpty()) {
                boolean included = i < upTo;
                w.u8(included ? 1 : 0);
                if (included) {
                    Map<Long, StoredMessage> bySeq = new HashMap<>();
                    o.delivered().forEach(d -> bySeq.put(d.delivery().seq(), d.message()));
                    for (PartitionResponse.Delivery d : received.deliveries()) {
                        StoredMessage m = bySeq.get(d.seq());
                        w.u8(m == null ? 0 : 1);
                        if (m != null) {
                            w.bytes(PayloadCodec.encodeMessage(m));
                        }
                    }
                }
            }
        }
        return w.toBytes();
    }

    /**
     * The outcomes. For each receive whose bodies the reply carries, the outcome has its messages in
     * {@code delivered}, and a lease whose message was gone is left out of both; otherwise {@code delivered} is
     * empty and the caller reads the bodies ({@link #hasBodies}).
     */
    public static List<PartitionOutcome> decode(byte[] bytes) {
        Bytes.Reader r = new Bytes.Reader(bytes);
        r.version();
        int n = r.count();
        List<PartitionOutcome> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(read(r));
        }
        if (r.hasRemaining() && r.u8() == BODIES) {
            for (int i = 0; i < n; i++) {
                if (out.get(i).response() instanceof PartitionResponse.Received received
                        && !received.deliveries().isEmpty() && r.u8() != 0) {
                    List<PartitionResponse.Delivery> kept = new ArrayList<>();
                    List<DeliveredMessage> delivered = new ArrayList<>();
                    for (PartitionResponse.Delivery d : received.deliveries()) {
                        if (r.u8() != 0) {
                            kept.add(d);
                            delivered.add(new DeliveredMessage(d, PayloadCodec.decodeMessage(r.bytes())));
                        }
                    }
                    out.set(i, new PartitionOutcome(new PartitionResponse.Received(kept), List.of(), delivered));
                }
            }
        }
        return out;
    }

    /** Whether a decoded outcome is complete: not a receive whose leases still need their bodies read. */
    public static boolean hasBodies(PartitionOutcome decoded) {
        return !(decoded.response() instanceof PartitionResponse.Received received)
                || received.deliveries().size() == decoded.delivered().size();
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
                int n = r.count();
                List<PartitionResponse.SentMessage> sent = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    sent.add(new PartitionResponse.SentMessage(r.str(), r.i64(), r.str(), r.u8() != 0));
                }
                yield outcome(new PartitionResponse.Sent(sent));
            }
            case RECEIVED -> {
                int n = r.count();
                List<PartitionResponse.Delivery> deliveries = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    deliveries.add(new PartitionResponse.Delivery(r.i64(),
                            new ReceiptHandle(r.i64(), r.i32(), r.i64(), r.i32()), r.i32(), r.i64()));
                }
                yield outcome(new PartitionResponse.Received(deliveries));
            }
            case ENTRY_OUTCOMES -> {
                int n = r.count();
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
        int n = r.count();
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
