package io.sluice.worker;

/**
 * What a worker does with one message, with control over it through its {@link MessageContext}: returning normally
 * means done (the worker deletes the message) unless the handler chose another outcome on the context
 * ({@link MessageContext#retryAfter}, {@link MessageContext#deadLetterNow}, {@link MessageContext#fail}); throwing
 * means failed (backed off, see {@link MessageHandler}).
 */
@FunctionalInterface
public interface ContextHandler {
    void handle(MessageContext context) throws Exception;
}
