package io.sluice.frontend.auth;

import java.util.Optional;

/** Where the verifier finds the secret of an access key. Implementations must be thread-safe. */
@FunctionalInterface
public interface CredentialStore {
    /** The credentials for {@code accessKeyId} (exact, case-sensitive match), or empty when unknown. */
    Optional<Credentials> find(String accessKeyId);
}
