package io.sluice.backend.engine;

import io.sluice.backend.engine.MessageEntry.Status;
import io.sluice.common.ReceiptHandle;
import io.sluice.common.SqsError;
import io.sluice.common.SqsFailure;
import io.sluice.common.SqsLimits;
import io.sluice.partition.PartitionCommand.ChangeVisibility;
import io.sluice.partition.PartitionCommand.Delete;
import io.sluice.partition.PartitionCommand.VisibilityChange;
import io.sluice.partition.PartitionResponse.EntryOutcomes;
import io.sluice.partition.PartitionResponse;
import java.util.ArrayList;
import java.util.List;

/**
 * Delete and ChangeVisibility: resolving a receipt handle to its message and applying the stale-handle rules
 * (docs/architecture.md). Part of {@link PartitionQueueState}'s state machine.
 */
final class ReceiptHandleCommands {
    private final PartitionQueueState s;

    ReceiptHandleCommands(PartitionQueueState s) {
        this.s = s;
    }

    PartitionResponse delete(Delete command, long now) {
        List<SqsFailure> failures = new ArrayList<>(command.handles().size());
        for (ReceiptHandle h : command.handles()) {
            failures.add(deleteOne(h, now));
        }
        return new EntryOutcomes(failures);
    }

    private SqsFailure deleteOne(ReceiptHandle h, long now) {
        if (!isOurs(h)) {
            return invalidHandle(h);
        }
        MessageEntry e = s.tiers.indexed(h.seq());
        if (e == null || e.isDeadLetterPending()) {
            return null; // already deleted, or on its way to the dead-letter queue: deleting again succeeds
        }
        if (h.receiveCount() > e.receiveCount) {
            return invalidHandle(h);
        }
        if (s.lifecycle.isExpired(e, now)) {
            s.lifecycle.expireOne(e); // past retention it is gone, swept or not: deleting it succeeds
            return null;
        }
        if (s.config.fifo() && (!(e.status(now) == Status.INFLIGHT && e.receiveCount == h.receiveCount())
                || s.moveTasks.holds(e))) {
            return SqsError.INVALID_PARAMETER_VALUE.withMessage("Value " + h.encode()
                    + " for parameter ReceiptHandle is invalid. Reason: The receipt handle has expired.");
        }
        // Standard queues: a stale handle still deletes (SQS behaviour).
        s.index.remove(e);
        s.deleteMessageKeys(e.seq);
        s.totals.deleted++;
        return null;
    }

    PartitionResponse changeVisibility(ChangeVisibility command, long now) {
        List<SqsFailure> failures = new ArrayList<>(command.changes().size());
        for (VisibilityChange c : command.changes()) {
            failures.add(changeVisibilityOne(c, now));
        }
        return new EntryOutcomes(failures);
    }

    private SqsFailure changeVisibilityOne(VisibilityChange change, long now) {
        ReceiptHandle h = change.handle();
        if (!isOurs(h)) {
            return invalidHandle(h);
        }
        MessageEntry e = s.tiers.indexed(h.seq());
        if (e != null && h.receiveCount() > e.receiveCount) {
            return invalidHandle(h);
        }
        if (e != null && !e.isDeadLetterPending() && s.lifecycle.isExpired(e, now)) {
            s.lifecycle.expireOne(e); // past retention: it is gone, whether or not the sweep got to it yet
            e = null;
        }
        if (e == null || e.isDeadLetterPending() || e.receiveCount != h.receiveCount() || s.moveTasks.holds(e)) {
            // Deleted, expired, handed off, received again since this handle was issued, or leased to a move task.
            return SqsError.INVALID_PARAMETER_VALUE.withMessage("Value " + h.encode() + " for parameter ReceiptHandle"
                    + " is invalid. Reason: Message does not exist or is not available for visibility timeout change.");
        }
        if (s.config.fifo() && e.status(now) != Status.INFLIGHT) {
            return SqsError.INVALID_PARAMETER_VALUE.withMessage("Value " + h.encode()
                    + " for parameter ReceiptHandle is invalid. Reason: The receipt handle has expired.");
        }
        int seconds = change.visibilityTimeoutSeconds();
        if (seconds < 0 || seconds > SqsLimits.MAX_VISIBILITY_TIMEOUT_SECONDS) {
            return SqsError.INVALID_PARAMETER_VALUE.withMessage("Value " + seconds
                    + " for parameter VisibilityTimeout is invalid. Reason: Must be between 0 and 43200.");
        }
        if (now - e.receivedAtMillis + seconds * 1000L > SqsLimits.MAX_INFLIGHT_MILLIS) {
            return SqsError.INVALID_PARAMETER_VALUE.withMessage("Value " + seconds + " for parameter"
                    + " VisibilityTimeout is invalid. Reason: Total VisibilityTimeout for the message is beyond the"
                    + " limit [43200 seconds]");
        }
        // the consumer's word: visible again exactly then, no redelivery backoff on top
        s.index.update(e, m -> {
            m.visibleAtMillis = now + seconds * 1000L;
            m.backoffFromMillis = 0;
        });
        s.putState(e);
        return null;
    }

    private boolean isOurs(ReceiptHandle h) {
        return h.queueId() == s.id.queueId() && h.partition() == s.id.index() && h.seq() > 0 && h.seq() < s.nextSeq
                && h.receiveCount() > 0;
    }

    static SqsFailure invalidHandle(ReceiptHandle h) {
        return SqsError.RECEIPT_HANDLE_IS_INVALID.withMessage(
                "The input receipt handle \"" + h.encode() + "\" is not a valid receipt handle.");
    }
}
