package io.sluice.common;

/**
 * Carries an {@link SqsFailure} out of deep validation code. Caught at the action boundary and rendered;
 * never used for control flow inside the queue engine, which returns failures as values.
 */
public final class SqsException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final transient SqsFailure failure;

    public SqsException(SqsFailure failure) {
        super(failure.error().queryCode() + ": " + failure.message(), null, false, false);
        this.failure = failure;
    }

    public SqsException(SqsError error, String message) {
        this(error.withMessage(message));
    }

    public SqsFailure failure() {
        return failure;
    }
}
