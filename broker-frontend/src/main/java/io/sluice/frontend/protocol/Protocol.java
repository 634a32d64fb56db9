package io.sluice.frontend.protocol;

/** The two wire protocols SQS clients speak; detected per request, answered in kind. */
public enum Protocol {
    /** {@code X-Amz-Target: AmazonSQS.<Action>}, JSON body, JSON response (SDK v2, boto3 >= 1.34.90). */
    JSON,
    /** Form-encoded {@code Action=...} parameters, XML response (Debian's boto3 1.26 and AWS CLI 2.9). */
    QUERY
}
