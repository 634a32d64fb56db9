package io.sluice.frontend.auth;

/** Decides whether an authenticated access key may perform an action on a queue. Thread-safe. */
@FunctionalInterface
public interface Authorizer {
    /** @param queueName the queue the request names, or null for account-wide actions such as ListQueues */
    boolean isAllowed(String accessKeyId, String action, String queueName);
}
