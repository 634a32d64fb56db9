package io.sluice.worker;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.MessageSystemAttributeName;

/** One message a worker holds, from its receive until it is deleted, backed off, dead-lettered or given back. */
final class Held {
    /** What became of a message: chosen on its context by the handler, or by how the handler ended. */
    record Outcome(Kind kind, Throwable cause, Duration after, String reason) {
        enum Kind { SUCCESS, FAILED, RETRY, DEAD_LETTER, ACKNOWLEDGED }

        static final Outcome SUCCESS = new Outcome(Kind.SUCCESS, null, null, null);
        static final Outcome ACKNOWLEDGED = new Outcome(Kind.ACKNOWLEDGED, null, null, null);

        /** Whether the message leaves the queue (the rest of its FIFO group may go on). */
        boolean leaves() {
            return kind == Kind.SUCCESS || kind == Kind.ACKNOWLEDGED || kind == Kind.DEAD_LETTER;
        }
    }

    /** A key of this receive's own: one message received twice while its first handler runs is held twice. */
    final long key;
    final Message message;
    /** When the receive was sent: the server's lease began after it, so the lease is counted from here. */
    final long receivedNanos;
    volatile long leaseEndNanos;
    /**
     * The visibility the worker left it with when it gave it back (0) or backed it off, or -1 while it runs: a
     * heartbeat extension that lands after that is undone with this value.
     */
    volatile int finalVisibility = -1;
    private final AtomicBoolean settled = new AtomicBoolean();
    /** The outcome the handler chose on the context, if any (the first one chosen stands). */
    final AtomicReference<Outcome> chosen = new AtomicReference<>();
    MessageContext context;

    Held(long key, Message message, long receiveSentNanos, int visibilitySeconds) {
        this.key = key;
        this.message = message;
        this.receivedNanos = receiveSentNanos;
        this.leaseEndNanos = receiveSentNanos + TimeUnit.SECONDS.toNanos(visibilitySeconds);
    }

    /** True for the one caller that decides this message's outcome. */
    boolean settle() {
        return settled.compareAndSet(false, true);
    }

    boolean isSettled() {
        return settled.get();
    }

    /** The outcome: the one chosen on the context, else success or (when the handler threw) failure. */
    Outcome outcome(Throwable thrown) {
        Outcome o = chosen.get();
        if (o != null) {
            return o;
        }
        return thrown == null ? Outcome.SUCCESS : new Outcome(Outcome.Kind.FAILED, thrown, null, null);
    }

    int receiveCount() {
        String n = message.attributes().get(MessageSystemAttributeName.APPROXIMATE_RECEIVE_COUNT);
        try {
            return n == null ? 1 : Integer.parseInt(n);
        } catch (NumberFormatException e) {
            return 1;
        }
    }

    /** The FIFO group, or null. */
    String group() {
        return message.attributes().get(MessageSystemAttributeName.MESSAGE_GROUP_ID);
    }
}
