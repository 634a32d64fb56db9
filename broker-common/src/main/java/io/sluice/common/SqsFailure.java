package io.sluice.common;

import java.util.Objects;

/** An {@link SqsError} with the message a client sees. A value, returned by domain code, never thrown. */
public record SqsFailure(SqsError error, String message) {
    public SqsFailure {
        Objects.requireNonNull(error, "error");
        Objects.requireNonNull(message, "message");
    }
}
