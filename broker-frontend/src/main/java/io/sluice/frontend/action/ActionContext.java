package io.sluice.frontend.action;

import io.sluice.common.SqsError;
import io.sluice.common.SqsException;
import io.sluice.frontend.protocol.Protocol;
import java.util.function.BooleanSupplier;

/**
 * One request as an action sees it: who sent it, in which protocol, to which host and path, and whether the
 * client is still there (a long poll must not lease messages for a client that has gone).
 *
 * @param host        the request's {@code Host} header, for queue URLs
 * @param path        the request path; a queue URL path when the client sends to the queue URL
 * @param traceHeader {@code X-Amzn-Trace-Id}, which becomes the {@code AWSTraceHeader} system attribute
 */
public record ActionContext(String requestId, Protocol protocol, String accessKeyId, String host, String path,
                            String traceHeader, BooleanSupplier clientConnected) {

    public boolean connected() {
        return clientConnected.getAsBoolean();
    }

    /** {@code QueueDoesNotExist}, with the message each protocol's SQS uses. */
    public SqsException queueDoesNotExist() {
        return new SqsException(SqsError.QUEUE_DOES_NOT_EXIST, protocol == Protocol.QUERY
                ? "The specified queue does not exist for this wsdl version."
                : "The specified queue does not exist.");
    }
}
