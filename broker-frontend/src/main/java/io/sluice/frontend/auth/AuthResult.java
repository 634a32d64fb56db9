package io.sluice.frontend.auth;

import io.sluice.common.SqsFailure;
import java.util.Objects;
import java.util.Optional;

/** The outcome of {@link SigV4Verifier#verify}: the authenticated access key id, or why the request is refused. */
public sealed interface AuthResult {

    /** The signature is valid for the secret of {@code accessKeyId}. */
    record Authenticated(String accessKeyId) implements AuthResult {
        public Authenticated {
            Objects.requireNonNull(accessKeyId, "accessKeyId");
        }
    }

    /** The request must be answered with {@code failure}. */
    record Rejected(SqsFailure failure) implements AuthResult {
        public Rejected {
            Objects.requireNonNull(failure, "failure");
        }
    }

    static AuthResult authenticated(String accessKeyId) {
        return new Authenticated(accessKeyId);
    }

    static AuthResult rejected(SqsFailure failure) {
        return new Rejected(failure);
    }

    default boolean isAuthenticated() {
        return this instanceof Authenticated;
    }

    /** The authenticated access key id; empty when rejected. */
    default Optional<String> principal() {
        return this instanceof Authenticated a ? Optional.of(a.accessKeyId()) : Optional.empty();
    }

    /** Why the request was refused; empty when authenticated. */
    default Optional<SqsFailure> rejection() {
        return this instanceof Rejected r ? Optional.of(r.failure()) : Optional.empty();
    }
}
