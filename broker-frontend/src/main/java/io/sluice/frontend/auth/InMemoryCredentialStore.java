package io.sluice.frontend.auth;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/** An immutable {@link CredentialStore} built from a map of access key id to secret access key. */
public final class InMemoryCredentialStore implements CredentialStore {
    private final Map<String, Credentials> byAccessKey;

    public InMemoryCredentialStore(Map<String, String> secretsByAccessKeyId) {
        Map<String, Credentials> copy = new HashMap<>();
        secretsByAccessKeyId.forEach((id, secret) -> copy.put(id, new Credentials(id, secret)));
        this.byAccessKey = Map.copyOf(copy);
    }

    @Override
    public Optional<Credentials> find(String accessKeyId) {
        return accessKeyId == null ? Optional.empty() : Optional.ofNullable(byAccessKey.get(accessKeyId));
    }
}
