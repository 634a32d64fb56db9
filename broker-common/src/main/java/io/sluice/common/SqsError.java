package io.sluice.common;

/**
 * The one catalogue of errors Sluice returns to clients (spec section 2). Domain code returns these as
 * values; only the frontend renders them, in the request's protocol.
 *
 * <p>{@code jsonType} is the full JSON 1.0 {@code __type}; {@code queryCode} is the Query protocol
 * {@code Code} and the {@code x-amzn-query-error} code.
 */
public enum SqsError {
    QUEUE_DOES_NOT_EXIST("com.amazonaws.sqs#QueueDoesNotExist", "AWS.SimpleQueueService.NonExistentQueue", 400,
            "The specified queue does not exist."),
    QUEUE_NAME_EXISTS("com.amazonaws.sqs#QueueNameExists", "QueueAlreadyExists", 400,
            "A queue already exists with the same name and a different value for an attribute."),
    QUEUE_DELETED_RECENTLY("com.amazonaws.sqs#QueueDeletedRecently", "AWS.SimpleQueueService.QueueDeletedRecently",
            400, "You must wait 60 seconds after deleting a queue before you can create another with the same name."),
    PURGE_QUEUE_IN_PROGRESS("com.amazonaws.sqs#PurgeQueueInProgress",
            "AWS.SimpleQueueService.PurgeQueueInProgress", 403, "Only one PurgeQueue operation is allowed every 60 seconds."),
    OVER_LIMIT("com.amazonaws.sqs#OverLimit", "OverLimit", 403, "The maximum number of in flight messages is reached."),
    REQUEST_THROTTLED("com.amazonaws.sqs#RequestThrottled", "RequestThrottled", 403, "Rate exceeded."),
    RECEIPT_HANDLE_IS_INVALID("com.amazonaws.sqs#ReceiptHandleIsInvalid", "ReceiptHandleIsInvalid", 404,
            "The input receipt handle is not a valid receipt handle."),
    MESSAGE_NOT_INFLIGHT("com.amazonaws.sqs#MessageNotInflight", "AWS.SimpleQueueService.MessageNotInflight", 400,
            "The message referred to isn't in flight."),
    INVALID_MESSAGE_CONTENTS("com.amazonaws.sqs#InvalidMessageContents", "InvalidMessageContents", 400,
            "Invalid characters found. Valid unicode characters are #x9 | #xA | #xD | #x20 to #xD7FF"
                    + " | #xE000 to #xFFFD | #x10000 to #x10FFFF"),
    INVALID_ATTRIBUTE_NAME("com.amazonaws.sqs#InvalidAttributeName", "InvalidAttributeName", 400,
            "Unknown Attribute."),
    INVALID_ATTRIBUTE_VALUE("com.amazonaws.sqs#InvalidAttributeValue", "InvalidAttributeValue", 400,
            "Invalid value for an attribute."),
    EMPTY_BATCH_REQUEST("com.amazonaws.sqs#EmptyBatchRequest", "AWS.SimpleQueueService.EmptyBatchRequest", 400,
            "There should be at least one entry in the request."),
    TOO_MANY_ENTRIES_IN_BATCH_REQUEST("com.amazonaws.sqs#TooManyEntriesInBatchRequest",
            "AWS.SimpleQueueService.TooManyEntriesInBatchRequest", 400, "Maximum number of entries per request are 10."),
    BATCH_ENTRY_IDS_NOT_DISTINCT("com.amazonaws.sqs#BatchEntryIdsNotDistinct",
            "AWS.SimpleQueueService.BatchEntryIdsNotDistinct", 400, "Two or more batch entries have the same Id."),
    BATCH_REQUEST_TOO_LONG("com.amazonaws.sqs#BatchRequestTooLong", "AWS.SimpleQueueService.BatchRequestTooLong",
            400, "Batch requests cannot be longer than 1048576 bytes."),
    INVALID_BATCH_ENTRY_ID("com.amazonaws.sqs#InvalidBatchEntryId", "AWS.SimpleQueueService.InvalidBatchEntryId",
            400, "A batch entry id can only contain alphanumeric characters, hyphens and underscores."
                    + " It can be at most 80 letters long."),
    UNSUPPORTED_OPERATION("com.amazonaws.sqs#UnsupportedOperation", "AWS.SimpleQueueService.UnsupportedOperation",
            400, "The operation is not supported."),
    RESOURCE_NOT_FOUND("com.amazonaws.sqs#ResourceNotFoundException", "ResourceNotFoundException", 404,
            "The specified resource does not exist."),
    INVALID_ADDRESS("com.amazonaws.sqs#InvalidAddress", "InvalidAddress", 404, "The address is not valid."),
    INVALID_SECURITY("com.amazonaws.sqs#InvalidSecurity", "InvalidSecurity", 403,
            "The request was not made over HTTPS or did not use SigV4 for signing."),

    INVALID_PARAMETER_VALUE("com.amazon.coral.service#InvalidParameterValueException", "InvalidParameterValue", 400,
            "An invalid or out-of-range value was supplied for the input parameter."),
    MISSING_PARAMETER("com.amazon.coral.service#MissingRequiredParameterException", "MissingParameter", 400,
            "A required parameter is missing."),
    INVALID_CLIENT_TOKEN_ID("com.amazon.coral.service#InvalidClientTokenId", "InvalidClientTokenId", 403,
            "The security token included in the request is invalid."),
    SIGNATURE_DOES_NOT_MATCH("com.amazon.coral.service#SignatureDoesNotMatch", "SignatureDoesNotMatch", 403,
            "The request signature we calculated does not match the signature you provided."),
    INCOMPLETE_SIGNATURE("com.amazon.coral.service#IncompleteSignature", "IncompleteSignature", 400,
            "The request signature does not conform to AWS standards."),
    MISSING_AUTHENTICATION_TOKEN("com.amazon.coral.service#MissingAuthenticationToken",
            "MissingAuthenticationToken", 403, "Request is missing Authentication Token."),
    ACCESS_DENIED("com.amazon.coral.service#AccessDeniedException", "AccessDenied", 403,
            "Access to the resource is denied."),
    INVALID_ACTION("com.amazon.coral.service#InvalidAction", "InvalidAction", 400,
            "The action or operation requested is invalid."),
    MISSING_ACTION("com.amazon.coral.service#MissingAction", "MissingAction", 400,
            "The request must contain the parameter Action."),
    UNKNOWN_OPERATION("com.amazon.coral.service#UnknownOperationException", "UnknownOperation", 400,
            "The requested operation is not recognised."),
    MALFORMED_REQUEST("com.amazon.coral.service#SerializationException", "MalformedQueryString", 400,
            "The request could not be parsed."),
    REQUEST_ENTITY_TOO_LARGE("com.amazon.coral.service#RequestEntityTooLarge", "RequestEntityTooLarge", 413,
            "The request is too large."),
    INTERNAL_FAILURE("com.amazon.coral.service#InternalFailure", "InternalError", 500,
            "The request processing has failed because of an unknown error, exception or failure."),
    SERVICE_UNAVAILABLE("com.amazon.coral.service#ServiceUnavailableException", "ServiceUnavailable", 503,
            "The request has failed due to a temporary failure of the server.");

    private final String jsonType;
    private final String queryCode;
    private final int httpStatus;
    private final String defaultMessage;

    SqsError(String jsonType, String queryCode, int httpStatus, String defaultMessage) {
        this.jsonType = jsonType;
        this.queryCode = queryCode;
        this.httpStatus = httpStatus;
        this.defaultMessage = defaultMessage;
    }

    public String jsonType() {
        return jsonType;
    }

    public String queryCode() {
        return queryCode;
    }

    public int httpStatus() {
        return httpStatus;
    }

    public String defaultMessage() {
        return defaultMessage;
    }

    /** {@code Sender} for client errors (4xx), {@code Receiver} for server faults (5xx). */
    public String faultType() {
        return httpStatus >= 500 ? "Receiver" : "Sender";
    }

    public boolean senderFault() {
        return httpStatus < 500;
    }

    /** This error with a specific message. */
    public SqsFailure withMessage(String message) {
        return new SqsFailure(this, message);
    }

    /** This error with its default message. */
    public SqsFailure failure() {
        return new SqsFailure(this, defaultMessage);
    }
}
