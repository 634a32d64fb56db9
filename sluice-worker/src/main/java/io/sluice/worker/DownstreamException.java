package io.sluice.worker;

/**
 * A handler failure caused by something the handler depends on (a database, an HTTP service), not by the message:
 * what the worker's default circuit breaker counts. Throw it (or anything whose cause chain holds one) when the
 * downstream is unavailable; any other exception is a per-message failure, which only backs its message off.
 * {@link SluiceWorker.Builder#downstreamFailure} replaces the rule.
 */
public class DownstreamException extends Exception {
    private static final long serialVersionUID = 1L;

    public DownstreamException(String message) {
        super(message);
    }

    public DownstreamException(String message, Throwable cause) {
        super(message, cause);
    }
}
