package io.sluice.frontend.auth;

import java.util.Objects;

/** An access key pair. {@link #toString()} never shows the secret. */
public record Credentials(String accessKeyId, String secretAccessKey) {
    public Credentials {
        Objects.requireNonNull(accessKeyId, "accessKeyId");
        Objects.requireNonNull(secretAccessKey, "secretAccessKey");
        if (accessKeyId.isEmpty() || secretAccessKey.isEmpty()) {
            throw new IllegalArgumentException("access key id and secret must not be empty");
        }
    }

    @Override
    public String toString() {
        return "Credentials[accessKeyId=" + accessKeyId + ", secretAccessKey=<redacted>]";
    }
}
