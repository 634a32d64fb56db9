package io.sluice.frontend.action;

import io.sluice.common.SqsError;
import io.sluice.common.SqsException;
import io.sluice.frontend.protocol.Protocol;
import java.util.function.BiPredicate;
import java.util.function.BooleanSupplier;

/**
 * One request as an action sees it: who sent it, in which protocol, to which host and path, and whether the
 * client is still there (a long poll must not lease messages for a client that has gone).
 *
 * @param host        the request's {@code Host} header, for queue URLs
 * @param path        the request path; a queue URL path when the client sends to the queue URL
 * @param traceHeader {@code X-Amzn-Trace-Id}, which becomes the {@code AWSTraceHeader} system attribute
 * @param queueName   the request's own queue as resolved once for authorization ({@code RequestResources}), null
 *                    for account-wide actions: the action acts on this queue and no other
 * @param access      whether the request's key may do an action on a queue (for listings: a key lists only what it
 *                    may see)
 */
public record ActionContext(String requestId, Protocol protocol, String accessKeyId, String host, String path,
                            String traceHeader, BooleanSupplier clientConnected, String queueName,
                            BiPredicate<String, String> access) {

    /** Whether this request's key may do {@code action} on the queue {@code queueName}. */
    public boolean allowed(String action, String queueName) {
        return access.test(action, queueName);
    }

    public boolean connected() {
        return clientConnected.getAsBoolean();
    }

    /** {@code QueueDoesNotExist}, with the message each protocol's SQS uses. */
    public SqsException queueDoesNotExist() {
        return queueDoesNotExist(protocol);
    }

    /** {@code QueueDoesNotExist} in {@code protocol}'s words. */
    public static SqsException queueDoesNotExist(Protocol protocol) {
        return new SqsException(SqsError.QUEUE_DOES_NOT_EXIST, protocol == Protocol.QUERY
                ? "The specified queue does not exist for this wsdl version."
                : "The specified queue does not exist.");
    }
}
