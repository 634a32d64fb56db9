package io.sluice.worker;

import java.util.List;

/**
 * What a worker does with the messages of one receive at once (up to 10; on a FIFO queue, the messages of one group
 * from one receive, in order). Each message's outcome is what the handler set on its context
 * ({@link MessageContext#fail}, {@link MessageContext#retryAfter}, {@link MessageContext#deadLetterNow},
 * {@link MessageContext#acknowledge}); a message without one is done (deleted) when the handler returns, failed when it
 * throws. On a FIFO queue, a message without an outcome after one that did not succeed is given back unhandled, so the
 * group's order holds. Each call counts once for the circuit breaker: as a downstream failure if any of its messages
 * (or the call) failed with one.
 */
@FunctionalInterface
public interface BatchHandler {
    void handle(List<MessageContext> messages) throws Exception;
}
