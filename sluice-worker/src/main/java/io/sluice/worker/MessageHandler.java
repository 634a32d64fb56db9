package io.sluice.worker;

import software.amazon.awssdk.services.sqs.model.Message;

/**
 * What a worker does with one message. Returning normally means done: the worker deletes the message. Throwing means
 * failed: the worker never deletes it, but makes it visible again after a back-off (the queue's redrive policy decides
 * when it goes to the dead-letter queue). A failure counts against the circuit breaker only when it is a downstream
 * failure ({@link DownstreamException} by default). {@link ContextHandler} gives a handler control over its message.
 */
@FunctionalInterface
public interface MessageHandler {
    void handle(Message message) throws Exception;
}
