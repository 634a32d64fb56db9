package io.sluice.partition;

import io.sluice.common.ReceiptHandle;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * The binary form of partition commands in a shard's log: a batch of {@code (partition, command)} pairs, which is
 * what one Raft entry carries (group commit). Format {@code version(1) [writer(8) entry(8)] count(4) then per pair:
 * queueId(8) partition(4) typeId(1) fields}; the type ids are {@link PartitionCommand#typeId()}'s. Add types and
 * trailing fields, never renumber or reorder.
 *
 * <p>Version 2 carries the entry's id: the writer that made it (a random number per {@code ShardClient}) and its
 * number among that writer's entries, which lets a shard apply an entry once however many times its log holds it
 * (a retried Raft call that Ratis' retry cache no longer recognises: {@code EntryIds}). Version 1 (no id; entries
 * logged before ids existed, and writers that never retry) decodes with writer 0.
 */
public final class CommandCodec {
    private CommandCodec() {
    }

    /** One command addressed to one partition. */
    public record Addressed(PartitionId partition, PartitionCommand command) {
    }

    public static byte[] encode(List<Addressed> batch) {
        return join(batch.stream().map(CommandCodec::encodeOne).toList());
    }

    /** One pair of a batch, encoded: {@link #join} makes a batch of such pieces without encoding them again. */
    public static byte[] encodeOne(Addressed a) {
        Bytes.Writer w = new Bytes.Writer(64);
        w.i64(a.partition().queueId());
        w.i32(a.partition().index());
        w.u8(a.command().typeId());
        writeCommand(w, a.command());
        return w.toBytes();
    }

    /**
     * A decoded entry: its commands and its id, {@code writer} 0 when it has none.
     *
     * @param entry the entry's number among its writer's entries (from 1)
     */
    public record Batch(long writer, long entry, List<Addressed> commands) {
        public Batch {
            commands = List.copyOf(commands);
        }

        /** An entry without an id: applied each time the log holds it. */
        public static Batch anonymous(List<Addressed> commands) {
            return new Batch(0, 0, commands);
        }
    }

    private static final byte V2 = 2;

    /** Bytes a batch adds to its pieces at most: the version, the entry id and the count. */
    public static final int BATCH_HEADER_BYTES = 21;

    /** A batch without an id (version 1) of pairs encoded by {@link #encodeOne}. */
    public static byte[] join(List<byte[]> pieces) {
        return join(0, 0, pieces);
    }

    /**
     * A batch of pairs encoded by {@link #encodeOne}, as entry {@code entry} of {@code writer} (version 2), or without
     * an id when {@code writer} is 0 (version 1).
     */
    public static byte[] join(long writer, long entry, List<byte[]> pieces) {
        int size = writer == 0 ? 5 : BATCH_HEADER_BYTES;
        for (byte[] p : pieces) {
            size += p.length;
        }
        ByteBuffer out = ByteBuffer.allocate(size);
        if (writer == 0) {
            out.put(Bytes.V1);
        } else {
            out.put(V2).putLong(writer).putLong(entry);
        }
        out.putInt(pieces.size());
        pieces.forEach(out::put);
        return out.array();
    }

    public static List<Addressed> decode(byte[] bytes) {
        return decodeBatch(bytes).commands();
    }

    /** An entry with its id (writer 0 for a version 1 entry). */
    public static Batch decodeBatch(byte[] bytes) {
        Bytes.Reader r = new Bytes.Reader(bytes);
        int version = r.u8();
        long writer = 0;
        long entry = 0;
        if (version == V2) {
            writer = r.i64();
            entry = r.i64();
            if (writer == 0 || entry <= 0) {
                throw new IllegalArgumentException("invalid entry id " + writer + "/" + entry);
            }
        } else if (version != Bytes.V1) {
            throw new IllegalStateException("unknown record format version " + version);
        }
        int n = r.i32();
        if (n < 0 || n > 100_000) {
            throw new IllegalArgumentException("implausible batch size " + n);
        }
        List<Addressed> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            PartitionId pid = new PartitionId(r.i64(), r.i32());
            out.add(new Addressed(pid, readCommand(r, r.u8())));
        }
        return new Batch(writer, entry, out);
    }

    private static void writeCommand(Bytes.Writer w, PartitionCommand c) {
        if (c instanceof PartitionCommand.Configure cfg) {
            w.bytes(PayloadCodec.encodeConfig(cfg.config()));
        } else if (c instanceof PartitionCommand.Send s) {
            w.i32(s.messages().size());
            for (NewMessage m : s.messages()) {
                writeMessage(w, m);
            }
        } else if (c instanceof PartitionCommand.Receive r) {
            w.i32(r.maxMessages());
            w.i32(r.visibilityTimeoutSeconds());
            w.str(r.receiveRequestAttemptId());
        } else if (c instanceof PartitionCommand.Delete d) {
            w.i32(d.handles().size());
            d.handles().forEach(h -> writeHandle(w, h));
        } else if (c instanceof PartitionCommand.ChangeVisibility cv) {
            w.i32(cv.changes().size());
            cv.changes().forEach(ch -> {
                writeHandle(w, ch.handle());
                w.i32(ch.visibilityTimeoutSeconds());
            });
        } else if (c instanceof PartitionCommand.Expire e) {
            w.i32(e.limit());
        } else if (c instanceof PartitionCommand.AcknowledgeDeadLetters a) {
            w.i32(a.seqs().size());
            a.seqs().forEach(w::i64);
        } else if (c instanceof PartitionCommand.Retire r) {
            w.u8(r.handOff() ? 1 : 0);
        } else if (c instanceof PartitionCommand.StartMoveTask st) {
            w.str(st.taskId());
            w.str(st.destinationArn());
            w.i32(st.ratePerSecond());
            w.i64(st.startedMillis());
        } else if (c instanceof PartitionCommand.CancelMoveTask ct) {
            w.str(ct.taskId());
        } else if (c instanceof PartitionCommand.LeaseMoveBatch l) {
            w.str(l.taskId());
            w.i32(l.maxMessages());
        } else if (c instanceof PartitionCommand.FinishMoveBatch f) {
            w.str(f.taskId());
            w.i32(f.batch().size());
            f.batch().forEach(w::i64);
            w.i32(f.movedSeqs().size());
            f.movedSeqs().forEach(w::i64);
            w.str(f.failureReason());
        } else if (!(c instanceof PartitionCommand.Purge)) {
            throw new IllegalArgumentException("no codec for " + c.getClass());
        }
    }

    private static PartitionCommand readCommand(Bytes.Reader r, int type) {
        return switch (type) {
            case 1 -> new PartitionCommand.Configure(PayloadCodec.decodeConfig(r.bytes()));
            case 2 -> {
                int n = count(r.i32());
                List<NewMessage> messages = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    messages.add(readMessage(r));
                }
                yield new PartitionCommand.Send(messages);
            }
            case 3 -> new PartitionCommand.Receive(r.i32(), r.i32(), r.str());
            case 4 -> {
                int n = count(r.i32());
                List<ReceiptHandle> handles = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    handles.add(readHandle(r));
                }
                yield new PartitionCommand.Delete(handles);
            }
            case 5 -> {
                int n = count(r.i32());
                List<PartitionCommand.VisibilityChange> changes = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    changes.add(new PartitionCommand.VisibilityChange(readHandle(r), r.i32()));
                }
                yield new PartitionCommand.ChangeVisibility(changes);
            }
            case 6 -> new PartitionCommand.Purge();
            case 7 -> new PartitionCommand.Expire(r.i32());
            case 8 -> {
                int n = count(r.i32());
                List<Long> seqs = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    seqs.add(r.i64());
                }
                yield new PartitionCommand.AcknowledgeDeadLetters(seqs);
            }
            case 9 -> new PartitionCommand.Retire(r.u8() != 0);
            case 10 -> new PartitionCommand.StartMoveTask(r.str(), r.str(), r.i32(), r.i64());
            case 11 -> new PartitionCommand.CancelMoveTask(r.str());
            case 12 -> new PartitionCommand.LeaseMoveBatch(r.str(), r.i32());
            case 13 -> new PartitionCommand.FinishMoveBatch(r.str(), readSeqs(r), readSeqs(r), r.str());
            default -> throw new IllegalArgumentException("unknown command type " + type);
        };
    }

    private static List<Long> readSeqs(Bytes.Reader r) {
        int n = count(r.i32());
        List<Long> seqs = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            seqs.add(r.i64());
        }
        return seqs;
    }

    private static int count(int n) {
        if (n < 0 || n > 1_000_000) {
            throw new IllegalArgumentException("implausible count " + n);
        }
        return n;
    }

    private static void writeMessage(Bytes.Writer w, NewMessage m) {
        w.str(m.messageId());
        w.str(m.body());
        w.attributes(m.attributes());
        w.attributes(m.systemAttributes());
        w.i32(m.delaySeconds());
        w.str(m.groupId());
        w.str(m.deduplicationId());
        w.str(m.senderId());
        NewMessage.Provenance p = m.provenance();
        w.u8(p == null ? 0 : p.handOffKey() == null ? 1 : 2); // 2: with a hand-off key (added later)
        if (p != null) {
            w.i64(p.sentTimestampMillis());
            w.i32(p.receiveCount());
            w.i64(p.firstReceiveTimestampMillis());
            w.str(p.deadLetterSourceArn());
            if (p.handOffKey() != null) {
                w.str(p.handOffKey());
            }
        }
    }

    private static NewMessage readMessage(Bytes.Reader r) {
        String id = r.str();
        String body = r.str();
        var attributes = r.attributes();
        var system = r.attributes();
        int delay = r.i32();
        String group = r.str();
        String dedup = r.str();
        String sender = r.str();
        int provenance = r.u8();
        NewMessage.Provenance p = provenance == 0 ? null
                : new NewMessage.Provenance(r.i64(), r.i32(), r.i64(), r.str(), provenance == 2 ? r.str() : null);
        return new NewMessage(id, body, attributes, system, delay, group, dedup, sender, p);
    }

    private static void writeHandle(Bytes.Writer w, ReceiptHandle h) {
        w.i64(h.queueId());
        w.i32(h.partition());
        w.i64(h.seq());
        w.i32(h.receiveCount());
    }

    private static ReceiptHandle readHandle(Bytes.Reader r) {
        return new ReceiptHandle(r.i64(), r.i32(), r.i64(), r.i32());
    }
}
