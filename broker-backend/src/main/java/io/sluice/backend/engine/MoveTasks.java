package io.sluice.backend.engine;

import io.sluice.common.SqsError;
import io.sluice.partition.MoveTask.Status;
import io.sluice.partition.MoveTask;
import io.sluice.partition.PartitionCommand.CancelMoveTask;
import io.sluice.partition.PartitionCommand.FinishMoveBatch;
import io.sluice.partition.PartitionCommand.LeaseMoveBatch;
import io.sluice.partition.PartitionCommand.StartMoveTask;
import io.sluice.partition.PartitionResponse.Count;
import io.sluice.partition.PartitionResponse.Delivery;
import io.sluice.partition.PartitionResponse.Received;
import io.sluice.partition.PartitionResponse.Rejected;
import io.sluice.partition.PartitionResponse;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * A partition's message move tasks (StartMessageMoveTask on a dead-letter queue), as replicated state: the
 * partition's shard leader drives each running task in batches (lease, copy to the destination, finish), and since
 * every step is a command, a new leader carries on where the old one stopped. Part of {@link PartitionQueueState}'s
 * state machine.
 *
 * <p>Rules: one running task per partition; the task moves at most the messages visible when it started
 * ({@code toMove}) and completes when it has, or when nothing is visible; a batch is leased to the task (not a
 * receive: counts are unchanged) and stays leased until finished, so a driver that dies mid-batch leaves it for the
 * next one to finish, whose copies the destination recognises ({@code handOffKey}); a finish names its batch and one
 * for another batch than the one leased now changes nothing, so two drivers never count one message twice nor undo
 * each other's lease. While leased, consumers' older receipt handles cannot change a message's visibility (or delete
 * it, on FIFO queues); a message a consumer received after a lease ran out (a driver stalled for a minute) stays the
 * consumer's. The newest {@link #KEPT} tasks are kept, finished
 * ones beyond that are forgotten.
 */
final class MoveTasks {
    /** Tasks kept per partition (ListMessageMoveTasks answers at most 10). */
    static final int KEPT = 10;
    /**
     * Messages one batch leases at most: their bodies travel back in the lease's reply (a Raft reply in a cluster), so
     * the batch is bounded by what 32 of the largest messages make.
     */
    static final int MAX_BATCH = 32;
    /** How long a batch stays leased to its task before a consumer may see it again (a stalled driver). */
    static final int LEASE_SECONDS = 60;
    private static final Comparator<MoveTask> OLDEST_FIRST =
            Comparator.comparingLong(MoveTask::startedMillis).thenComparing(MoveTask::taskId);

    private final PartitionQueueState s;
    private final ReceiveCommands receives;
    /** Oldest first: the order does not depend on when a replica loaded them. */
    private final List<MoveTask> tasks = new ArrayList<>();

    MoveTasks(PartitionQueueState s, ReceiveCommands receives) {
        this.s = s;
        this.receives = receives;
    }

    PartitionResponse start(StartMoveTask command, long now) {
        MoveTask existing = find(command.taskId());
        if (existing != null) {
            return new Count((int) Math.min(Integer.MAX_VALUE, existing.toMove())); // a retried start
        }
        if (tasks.stream().anyMatch(t -> t.status() == Status.RUNNING)) {
            return new Rejected(SqsError.INVALID_PARAMETER_VALUE.withMessage("There is already a task running. Only one"
                    + " active task is allowed for a source queue arn at a given time."));
        }
        int toMove = s.visibleCount();
        MoveTask task = new MoveTask(command.taskId(), command.destinationArn(), Math.max(0, command.ratePerSecond()),
                command.startedMillis(), toMove, 0, toMove == 0 ? Status.COMPLETED : Status.RUNNING, null, List.of(), 0);
        tasks.add(task);
        tasks.sort(OLDEST_FIRST);
        put(task);
        for (MoveTask old : List.copyOf(tasks)) {
            if (tasks.size() <= KEPT) {
                break;
            }
            if (!old.needsDriving()) {
                tasks.remove(old);
                s.mutations.add(new Mutation.Delete(s.keys.moveTask(old.taskId())));
            }
        }
        return new Count(toMove);
    }

    PartitionResponse cancel(CancelMoveTask command) {
        MoveTask task = find(command.taskId());
        if (task == null) {
            return new Rejected(SqsError.RESOURCE_NOT_FOUND.withMessage("Task does not exist."));
        }
        if (task.status() != Status.RUNNING) {
            return new Rejected(SqsError.INVALID_PARAMETER_VALUE.withMessage("Only active tasks can be cancelled."));
        }
        // its leased batch is still finished: copies may be made already
        replace(task, task.with(task.moved(), Status.CANCELLED, null, task.leased(), task.leaseDeadlineMillis()));
        return new Count((int) Math.min(Integer.MAX_VALUE, task.moved()));
    }

    PartitionResponse lease(LeaseMoveBatch command, long now) {
        MoveTask task = find(command.taskId());
        if (task == null) {
            return new Received(List.of());
        }
        long deadline = now + LEASE_SECONDS * 1000L;
        if (!task.leased().isEmpty()) {
            List<Delivery> again = receives.renewMoveLease(task.leased(), task.leaseDeadlineMillis(), LEASE_SECONDS,
                    now);
            if (!again.isEmpty()) {
                replace(task, task.with(task.moved(), task.status(), task.failureReason(), seqs(again), deadline));
                return new Received(again);
            }
            task = replace(task, task.with(task.moved(), task.status(), task.failureReason(), List.of(), 0));
        }
        if (task.status() != Status.RUNNING) {
            return new Received(List.of());
        }
        long remaining = task.toMove() - task.moved();
        int max = (int) Math.min(Math.min(remaining, MAX_BATCH), Math.max(0, command.maxMessages()));
        ReceiveCommands.MoveLease lease = max <= 0 ? new ReceiveCommands.MoveLease(List.of(), false)
                : receives.leaseForMove(max, LEASE_SECONDS, now);
        List<Delivery> batch = lease.batch();
        if (batch.isEmpty()) {
            // capped: it expired as many as one command may on the way, and the next batch goes on from there
            boolean finished = remaining <= 0 || command.maxMessages() > 0 && !lease.capped();
            replace(task, task.with(task.moved(), finished ? Status.COMPLETED : Status.RUNNING, null, List.of(), 0));
            return new Received(List.of());
        }
        replace(task, task.with(task.moved(), Status.RUNNING, null, seqs(batch), deadline));
        return new Received(batch);
    }

    private static List<Long> seqs(List<Delivery> deliveries) {
        return deliveries.stream().map(Delivery::seq).toList();
    }

    PartitionResponse finish(FinishMoveBatch command, long now) {
        MoveTask task = find(command.taskId());
        if (task == null || task.leased().isEmpty() || !task.leased().equals(command.batch())) {
            return new Count(0); // not the batch leased now: a late finish of one finished already
        }
        Set<Long> moved = new HashSet<>();
        for (long seq : command.movedSeqs()) {
            if (task.leased().contains(seq) && moved.add(seq)) {
                receives.removeMoved(seq, task.leaseDeadlineMillis());
            }
        }
        for (long seq : task.leased()) {
            if (!moved.contains(seq)) {
                receives.releaseMoveLease(seq, task.leaseDeadlineMillis(), now);
            }
        }
        long total = task.moved() + moved.size();
        Status status = task.status();
        String reason = task.failureReason();
        if (status == Status.RUNNING && command.failureReason() != null) {
            status = Status.FAILED;
            reason = command.failureReason();
        } else if (status == Status.RUNNING && total >= task.toMove()) {
            status = Status.COMPLETED;
        }
        replace(task, task.with(total, status, reason, List.of(), 0));
        return new Count(moved.size());
    }

    /**
     * Whether a message is leased to a move task right now: consumers' receipt handles from before cannot change its
     * visibility (and on FIFO queues cannot delete it) while the task moves it.
     */
    boolean holds(MessageEntry e) {
        for (MoveTask t : tasks) {
            if (t.leaseDeadlineMillis() == e.visibleAtMillis && t.leased().contains(e.seq)) {
                return true;
            }
        }
        return false;
    }

    /** Newest first, as ListMessageMoveTasks answers. */
    List<MoveTask> list() {
        List<MoveTask> out = new ArrayList<>(tasks);
        Collections.reverse(out);
        return out;
    }

    /** Tasks a driver has work on. */
    List<MoveTask> toDrive() {
        return tasks.stream().filter(MoveTask::needsDriving).toList();
    }

    /** The partition's data was dropped (its queue deleted): so were its tasks. */
    void clear() {
        tasks.clear();
    }

    void recover(List<MoveTask> stored) {
        tasks.clear();
        tasks.addAll(stored);
        tasks.sort(OLDEST_FIRST);
    }

    String describe() {
        return tasks.toString();
    }

    private MoveTask find(String taskId) {
        for (MoveTask t : tasks) {
            if (t.taskId().equals(taskId)) {
                return t;
            }
        }
        return null;
    }

    private MoveTask replace(MoveTask old, MoveTask next) {
        tasks.set(tasks.indexOf(old), next);
        put(next);
        return next;
    }

    private void put(MoveTask task) {
        s.mutations.add(new Mutation.Put(s.keys.moveTask(task.taskId()), MoveTask.encode(task)));
    }
}
