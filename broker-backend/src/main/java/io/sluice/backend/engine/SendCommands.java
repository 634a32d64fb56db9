package io.sluice.backend.engine;

import io.sluice.common.MessageAttributeValue;
import io.sluice.common.MessageDigests;
import io.sluice.common.ProducerOrder;
import io.sluice.common.SqsError;
import io.sluice.common.SqsLimits;
import io.sluice.partition.NewMessage;
import io.sluice.partition.PartitionCommand.Send;
import io.sluice.partition.PartitionResponse.Rejected;
import io.sluice.partition.PartitionResponse.Sent;
import io.sluice.partition.PartitionResponse.SentMessage;
import io.sluice.partition.PartitionResponse;
import io.sluice.partition.PayloadCodec;
import io.sluice.partition.StoredMessage;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * The send path of {@link PartitionQueueState}: FIFO send rules, the backlog limits, deduplication (FIFO ids and
 * dead-letter hand-off keys), and where a new message goes (the index, or on disk only in the cold or deferred tail).
 * Part of the state machine: it records mutations through the state.
 */
final class SendCommands {
    private final PartitionQueueState s;

    SendCommands(PartitionQueueState s) {
        this.s = s;
    }

    PartitionResponse send(Send command, long now) {
        if (s.config.fifo()) {
            for (NewMessage m : command.messages()) {
                if (m.groupId() == null) {
                    return new Rejected(SqsError.MISSING_PARAMETER.withMessage(
                            "The request must contain the parameter MessageGroupId."));
                }
                if (m.deduplicationId() == null && !s.config.contentBasedDeduplication() && m.provenance() == null) {
                    return new Rejected(SqsError.INVALID_PARAMETER_VALUE.withMessage("The queue should either have"
                            + " ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly"));
                }
            }
        }
        int limit = s.config.maxBacklog();
        if (limit > 0 && s.size() - s.index.deadLetterPending().size() + newMessages(command, now) > limit
                && command.messages().stream().anyMatch(m -> !isDeadLetterHandOff(m))) {
            return new Rejected(SqsError.REQUEST_THROTTLED.withMessage("The queue's backlog limit (SluiceMaxBacklog,"
                    + " " + limit + " messages per partition) is reached; retry later."));
        }
        if (s.config.fifo() && s.index.size() + newMessages(command, now) > s.maxIndexed) {
            // refused before the partition's memory passes its bound, never a crash that every replica would repeat
            return new Rejected(SqsError.REQUEST_THROTTLED.withMessage("The partition holds " + s.index.size()
                    + " messages in memory, its most for a FIFO queue; retry later."));
        }
        List<SentMessage> sent = new ArrayList<>(command.messages().size());
        for (NewMessage m : command.messages()) {
            sent.add(sendOne(m, now));
        }
        return new Sent(sent);
    }

    /**
     * A dead-letter queue's copy of an exhausted message: never refused by the backlog limit (the source has
     * already given it up). A redrive's copy is an ordinary send as far as the limit goes: the task fails and the
     * message stays where it was.
     */
    private static boolean isDeadLetterHandOff(NewMessage m) {
        return m.provenance() != null && m.provenance().deadLetterSourceArn() != null;
    }

    /** Messages of a send that would be stored (FIFO duplicates inside the window are answered, not stored). */
    private int newMessages(Send command, long now) {
        int n = 0;
        for (NewMessage m : command.messages()) {
            String key = dedupKey(m);
            n += key != null && findDuplicate(key, now) != null ? 0 : 1;
        }
        return n;
    }

    /**
     * The deduplication key of a FIFO send, or of a dead-letter hand-off's copy (any queue type: one copy per
     * hand-off however many movers execute it); null for other sends and moves.
     */
    private String dedupKey(NewMessage m) {
        if (m.provenance() != null) {
            // '\0' never starts a FIFO key (valid deduplication and group ids are printable ASCII)
            return m.provenance().handOffKey() == null ? null : "\0handoff\n" + m.provenance().handOffKey();
        }
        if (!s.config.fifo()) {
            return null;
        }
        String dedupId = m.deduplicationId() != null ? m.deduplicationId()
                : MessageDigests.contentDeduplicationId(m.body());
        // Valid ids are printable ASCII, so '\n' cannot collide with either part.
        return s.config.deduplicationPerGroup() ? m.groupId() + "\n" + dedupId : dedupId;
    }

    /** The live window entry of a deduplication key: FIFO ids in memory, copies' hand-off keys on disk. */
    private DedupWindow.Entry findDuplicate(String key, long now) {
        DedupWindow.Entry e = s.dedup.find(key, now); // hand-off keys too, when remembered before HandOffKeys existed
        return e != null || key.charAt(0) != '\0' ? e : s.handOffKeys.find(key, now);
    }

    private SentMessage sendOne(NewMessage m, long now) {
        String dedupKey = dedupKey(m);
        if (dedupKey != null) {
            DedupWindow.Entry original = findDuplicate(dedupKey, now);
            if (original != null) {
                return new SentMessage(original.messageId(), original.seq(), original.sequenceNumber(), true);
            }
        }
        String dedupId = null;
        if (s.config.fifo() && m.provenance() == null) {
            dedupId = m.deduplicationId() != null ? m.deduplicationId()
                    : MessageDigests.contentDeduplicationId(m.body());
        } else if (s.config.fifo()) {
            dedupId = m.deduplicationId();
        }
        long seq = s.nextSeq++;
        s.totals.sent++;
        // the same on every replica
        String sequenceNumber = s.config.fifo() ? String.format(Locale.ROOT, "%020d", seq) : null;
        MessageEntry e = new MessageEntry(seq);
        NewMessage.Provenance p = m.provenance();
        long sentTimestamp = now;
        long delayMillis;
        if (p != null) {
            sentTimestamp = p.sentTimestampMillis();
            e.receiveCount = p.receiveCount();
            e.firstReceiveMillis = p.firstReceiveTimestampMillis();
            // Standard queues keep counting retention from the original send; FIFO queues restart it.
            e.retentionBaseMillis = s.config.fifo() ? now : sentTimestamp;
            delayMillis = 0;
        } else {
            e.retentionBaseMillis = now;
            int delaySeconds = s.config.fifo() || m.delaySeconds() < 0 ? s.config.delaySeconds() : m.delaySeconds();
            delayMillis = delaySeconds * 1000L;
        }
        e.visibleAtMillis = now + delayMillis;
        Map<String, MessageAttributeValue> attributes = m.attributes();
        if (s.config.fifo()) {
            e.orderMillis = now;
            if (p == null && s.ordering.placeInProducerOrder(m, e, now)) {
                attributes = new TreeMap<>(attributes);
                attributes.put(ProducerOrder.LATE, new MessageAttributeValue("String", "true", null));
            }
        }
        if (!s.config.fifo() && p == null && delayMillis == 0 && (!s.cold.isEmpty() || s.index.size() >= s.hotLimit)) {
            s.cold.add(e, s.mutations); // behind the cold messages sent before it: send order is kept
        } else if (!s.config.fifo() && s.index.size() >= s.hotLimit) {
            s.deferred.add(e, now, s.mutations); // delayed, or a copy with its own retention: by delivery order
        } else if (s.config.fifo() && s.tiers.sendToColdGroup(m.groupId(), e)) {
            // on disk only, behind its group's cold messages
        } else {
            s.index.add(e, s.config.fifo() ? m.groupId() : null);
            s.putState(e);
        }
        StoredMessage stored = new StoredMessage(m.messageId(), m.body(), attributes, m.systemAttributes(),
                sentTimestamp, m.groupId(), dedupId, sequenceNumber, m.senderId(),
                p == null ? null : p.deadLetterSourceArn(), p == null ? null : p.deadLetterReason());
        s.mutations.add(new Mutation.Put(s.keys.body(seq), PayloadCodec.encodeMessage(stored)));
        if (dedupKey != null) {
            DedupWindow.Entry entry = new DedupWindow.Entry(dedupKey, m.messageId(), seq, sequenceNumber,
                    now + SqsLimits.DEDUPLICATION_WINDOW_MILLIS);
            if (m.provenance() != null) {
                s.handOffKeys.remember(entry, s.mutations);
            } else {
                s.dedup.remember(entry);
                s.mutations.add(new Mutation.Put(s.keys.dedup(dedupKey), RecordCodec.encodeDedup(entry)));
            }
        }
        return new SentMessage(m.messageId(), seq, sequenceNumber, false);
    }
}
