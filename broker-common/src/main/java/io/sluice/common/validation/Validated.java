package io.sluice.common.validation;

import io.sluice.common.SqsException;
import io.sluice.common.SqsFailure;
import java.util.Objects;
import java.util.Optional;

/**
 * The outcome of a validation that also produces a value (for example parsed queue attributes): either a value or
 * the {@link SqsFailure} to send to the client, never both. Checks that produce nothing return
 * {@code Optional<SqsFailure>} instead; both styles are values, and {@link #orElseThrow()} is the one place a
 * caller may turn a failure into an {@link SqsException}.
 */
public final class Validated<T> {
    private final T value;
    private final SqsFailure failure;

    private Validated(T value, SqsFailure failure) {
        this.value = value;
        this.failure = failure;
    }

    public static <T> Validated<T> ok(T value) {
        return new Validated<>(Objects.requireNonNull(value, "value"), null);
    }

    public static <T> Validated<T> fail(SqsFailure failure) {
        return new Validated<>(null, Objects.requireNonNull(failure, "failure"));
    }

    public boolean isOk() {
        return failure == null;
    }

    /** The failure, empty when valid. */
    public Optional<SqsFailure> failure() {
        return Optional.ofNullable(failure);
    }

    /** The value; throws {@link IllegalStateException} when this is a failure (a caller bug). */
    public T value() {
        if (failure != null) {
            throw new IllegalStateException("validation failed: " + failure);
        }
        return value;
    }

    /** The value, or an {@link SqsException} carrying the failure, for callers that render at a boundary. */
    public T orElseThrow() {
        if (failure != null) {
            throw new SqsException(failure);
        }
        return value;
    }

    @Override
    public String toString() {
        return failure == null ? "ok(" + value + ")" : "fail(" + failure + ")";
    }
}
