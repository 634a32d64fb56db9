package io.sluice.frontend.auth;

/** Decides whether an authenticated access key may perform an action on a queue. Thread-safe. */
@FunctionalInterface
public interface Authorizer {
    /**
     * @param queueName a queue the request touches (see {@link RequestResources}), or null for an account-wide
     *                  action (which only a rule whose queue pattern is {@code *} allows)
     */
    boolean isAllowed(String accessKeyId, String action, String queueName);
}
