package io.sluice.worker;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.MessageAttributeValue;
import software.amazon.awssdk.services.sqs.model.MessageSystemAttributeName;

/**
 * One received message as a handler sees it ({@link ContextHandler}, {@link BatchHandler}): the message with every
 * system attribute, and what the handler may do with it while it runs. An outcome chosen here ({@link #retryAfter},
 * {@link #deadLetterNow}, {@link #fail}) applies when the handler returns, and the first one chosen stands (a later
 * choice throws {@link IllegalStateException}); {@link #acknowledge} deletes the message at once.
 */
public final class MessageContext {
    /** What the worker does for a context (it holds the client and the queue). */
    interface Actions {
        void extend(Held held, Duration visibility) throws Exception;

        void acknowledge(Held held) throws Exception;
    }

    private final Held held;
    private final Actions actions;
    private final String queueUrl;

    MessageContext(Held held, Actions actions, String queueUrl) {
        this.held = held;
        this.actions = actions;
        this.queueUrl = queueUrl;
    }

    public Message message() {
        return held.message;
    }

    public String body() {
        return held.message.body();
    }

    public String messageId() {
        return held.message.messageId();
    }

    public String queueUrl() {
        return queueUrl;
    }

    public Map<String, MessageAttributeValue> messageAttributes() {
        return held.message.messageAttributes();
    }

    /** Every system attribute the server returned (the worker asks for all), by its API name. */
    public Map<String, String> systemAttributes() {
        return new TreeMap<>(held.message.attributesAsStrings());
    }

    /** ApproximateReceiveCount: 1 on the first delivery. */
    public int receiveCount() {
        return held.receiveCount();
    }

    /** SentTimestamp, when the server returned it. */
    public Optional<Instant> sentTimestamp() {
        return attribute(MessageSystemAttributeName.SENT_TIMESTAMP).map(ms -> Instant.ofEpochMilli(Long.parseLong(ms)));
    }

    /** MessageGroupId (FIFO queues). */
    public Optional<String> messageGroupId() {
        return attribute(MessageSystemAttributeName.MESSAGE_GROUP_ID);
    }

    /** SequenceNumber (FIFO queues). */
    public Optional<String> sequenceNumber() {
        return attribute(MessageSystemAttributeName.SEQUENCE_NUMBER);
    }

    /** MessageDeduplicationId (FIFO queues). */
    public Optional<String> deduplicationId() {
        return attribute(MessageSystemAttributeName.MESSAGE_DEDUPLICATION_ID);
    }

    /** AWSTraceHeader (X-Ray), when the producer set one. */
    public Optional<String> traceHeader() {
        return attribute(MessageSystemAttributeName.AWS_TRACE_HEADER);
    }

    private Optional<String> attribute(MessageSystemAttributeName name) {
        return Optional.ofNullable(held.message.attributes().get(name));
    }

    /**
     * Sets the message's lease to {@code visibility} from now (ChangeMessageVisibility), at once. The worker's heartbeat
     * goes on extending it while the handler runs, from that lease on; to have the message come back later, use
     * {@link #retryAfter}.
     *
     * @throws Exception when the server refuses (e.g. the lease has already run out)
     */
    public void extendVisibility(Duration visibility) throws Exception {
        checkOpen();
        actions.extend(held, visibility);
    }

    /**
     * Not done, not failed: the message becomes visible again after {@code delay} (0 s to 12 h, whole seconds), without
     * counting as a failure (no failure log, not for the circuit breaker). Its receive count still grows with each
     * receive, so the queue's redrive policy still applies.
     */
    public void retryAfter(Duration delay) {
        if (delay.isNegative() || delay.compareTo(Backoff.LONGEST) > 0) {
            throw new IllegalArgumentException("retryAfter must be 0 s to 12 h: " + delay);
        }
        choose(new Held.Outcome(Held.Outcome.Kind.RETRY, null, delay, null));
    }

    /**
     * A poison message: it goes to its queue's dead-letter queue (the RedrivePolicy's target) as soon as the handler
     * returns, with {@code reason} in the message attribute {@code SluiceDeadLetterReason}, and is deleted from this
     * queue. Without a redrive policy it is backed off as a failure instead.
     */
    public void deadLetterNow(String reason) {
        choose(new Held.Outcome(Held.Outcome.Kind.DEAD_LETTER, null, null, reason == null ? "" : reason));
    }

    /** Failed with {@code cause}, as if the handler had thrown it (for batch handlers, per message). */
    public void fail(Throwable cause) {
        choose(new Held.Outcome(Held.Outcome.Kind.FAILED, cause, null, null));
    }

    /**
     * Done now: deletes the message at once (DeleteMessage) while the handler goes on; nothing that happens afterwards
     * brings it back. On a FIFO queue this lets the group's next messages be delivered.
     */
    public void acknowledge() throws Exception {
        if (held.chosen.compareAndSet(null, Held.Outcome.ACKNOWLEDGED)) {
            try {
                actions.acknowledge(held);
            } catch (Exception e) {
                held.chosen.compareAndSet(Held.Outcome.ACKNOWLEDGED, null); // not deleted: the usual outcome applies
                throw e;
            }
        } else if (held.chosen.get() != Held.Outcome.ACKNOWLEDGED) {
            throw new IllegalStateException("an outcome was already chosen: " + held.chosen.get().kind());
        }
    }

    private void choose(Held.Outcome outcome) {
        if (!held.chosen.compareAndSet(null, outcome)) {
            throw new IllegalStateException("an outcome was already chosen: " + held.chosen.get().kind());
        }
    }

    private void checkOpen() {
        if (held.chosen.get() == Held.Outcome.ACKNOWLEDGED) {
            throw new IllegalStateException("acknowledged: the message is deleted");
        }
    }
}
