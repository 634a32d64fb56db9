package io.sluice.worker.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * A bean method that handles the messages of a queue, run by a {@code SluiceWorker} from the application context's
 * start to its stop. The method takes one parameter, which decides what it gets: {@code String} (the body),
 * {@code software.amazon.awssdk.services.sqs.model.Message}, {@code io.sluice.worker.MessageContext}, or
 * {@code List<MessageContext>} (a batch handler). Returning means done; throwing means failed (backed off; a
 * {@code DownstreamException} counts for the circuit breaker). Settings left at their defaults come from the
 * {@code sluice.worker.*} properties.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface SluiceListener {
    /** The queue: its name (looked up with GetQueueUrl) or URL; {@code ${...}} placeholders are resolved. */
    String queue();

    /** Handlers running at once; 0: {@code sluice.worker.concurrency}. */
    int concurrency() default 0;

    /** The lease of each receive and heartbeat, seconds; 0: {@code sluice.worker.visibility-timeout}. */
    int visibilityTimeoutSeconds() default 0;

    /** Long-poll wait, seconds; -1: {@code sluice.worker.wait-time}. */
    int waitTimeSeconds() default -1;

    /** Back-off of a failed message: first ceiling, seconds; -1: {@code sluice.worker.backoff.initial}. */
    int backoffInitialSeconds() default -1;

    /** Back-off growth per receive; 0: {@code sluice.worker.backoff.multiplier}. */
    double backoffMultiplier() default 0;

    /** Back-off cap, seconds; -1: {@code sluice.worker.backoff.max}. */
    int backoffMaxSeconds() default -1;
}
