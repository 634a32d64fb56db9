package io.sluice.partition;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * One partition's share of a message move task (StartMessageMoveTask on a dead-letter queue): replicated partition
 * state, so it survives restarts and leader changes. Every partition of the source queue holds a copy under the same
 * id and moves its own messages, driven by its shard's leader; ListMessageMoveTasks adds the partitions' figures.
 *
 * @param destinationArn where copies go, or null: back to the queue each message was dead-lettered from
 * @param ratePerSecond  the task's MaxNumberOfMessagesPerSecond over all partitions, or 0 for no limit
 * @param toMove         messages visible in this partition when the task started
 * @param moved          messages copied to their destination and removed here
 * @param leased         the batch being moved right now (leased by the task, not counted as receives): a new driver
 *                       finishes it first. Its copies are idempotent at the destination ({@link NewMessage.Provenance#handOffKey})
 * @param leaseDeadlineMillis when the batch's lease ends (its messages' visibility deadline while the task holds them)
 */
public record MoveTask(String taskId, String destinationArn, int ratePerSecond, long startedMillis, long toMove,
                       long moved, Status status, String failureReason, List<Long> leased, long leaseDeadlineMillis) {

    public enum Status { RUNNING, COMPLETED, CANCELLED, FAILED }

    public MoveTask {
        Objects.requireNonNull(taskId, "taskId");
        Objects.requireNonNull(status, "status");
        leased = List.copyOf(leased);
    }

    /** Whether a driver has work here: moving, or finishing a batch leased before a cancel or a crash. */
    public boolean needsDriving() {
        return status == Status.RUNNING || !leased.isEmpty();
    }

    public MoveTask with(long newMoved, Status newStatus, String newFailureReason, List<Long> newLeased,
                         long newLeaseDeadlineMillis) {
        return new MoveTask(taskId, destinationArn, ratePerSecond, startedMillis, toMove, newMoved, newStatus,
                newFailureReason, newLeased, newLeaseDeadlineMillis);
    }

    /** A task of a given partition: what a driver scans. */
    public record Located(PartitionId partition, MoveTask task) {
    }

    public static byte[] encode(MoveTask t) {
        Bytes.Writer w = new Bytes.Writer(96);
        w.u8(Bytes.V1);
        write(w, t);
        return w.toBytes();
    }

    public static MoveTask decode(byte[] bytes) {
        Bytes.Reader r = new Bytes.Reader(bytes);
        r.version();
        return read(r);
    }

    public static byte[] encodeList(List<MoveTask> tasks) {
        Bytes.Writer w = new Bytes.Writer(16 + 96 * tasks.size());
        w.u8(Bytes.V1);
        w.i32(tasks.size());
        tasks.forEach(t -> write(w, t));
        return w.toBytes();
    }

    public static List<MoveTask> decodeList(byte[] bytes) {
        Bytes.Reader r = new Bytes.Reader(bytes);
        r.version();
        int n = r.i32();
        if (n < 0 || n > 10_000) {
            throw new IllegalArgumentException("implausible task count " + n);
        }
        List<MoveTask> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(read(r));
        }
        return out;
    }

    private static void write(Bytes.Writer w, MoveTask t) {
        w.str(t.taskId());
        w.str(t.destinationArn());
        w.i32(t.ratePerSecond());
        w.i64(t.startedMillis());
        w.i64(t.toMove());
        w.i64(t.moved());
        w.u8(t.status().ordinal());
        w.str(t.failureReason());
        w.i32(t.leased().size());
        t.leased().forEach(w::i64);
        w.i64(t.leaseDeadlineMillis());
    }

    private static MoveTask read(Bytes.Reader r) {
        String id = r.str();
        String destination = r.str();
        int rate = r.i32();
        long started = r.i64();
        long toMove = r.i64();
        long moved = r.i64();
        int status = r.u8();
        if (status >= Status.values().length) {
            throw new IllegalArgumentException("unknown move task status " + status);
        }
        String reason = r.str();
        int n = r.i32();
        if (n < 0 || n > 1_000) {
            throw new IllegalArgumentException("implausible lease of " + n);
        }
        List<Long> leased = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            leased.add(r.i64());
        }
        return new MoveTask(id, destination, rate, started, toMove, moved, Status.values()[status], reason, leased,
                r.i64());
    }
}
