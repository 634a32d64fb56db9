/**
 * Protocol-independent request validation, run by the frontend before anything reaches storage.
 *
 * <p>Contract for every class here: pure functions, no I/O, no shared mutable state. A check returns
 * {@code Optional<SqsFailure>} (empty = valid); a check that also produces a value returns {@link
 * io.sluice.common.validation.Validated}. Nothing here throws for invalid client input; only
 * {@link io.sluice.common.validation.Validated#orElseThrow()} converts a failure into an
 * {@link io.sluice.common.SqsException} for callers that prefer to render at one boundary. Error codes and texts
 * follow {@code sqs-api.md}; choices on points the spec leaves open are listed in {@code docs/validation.md}.
 */
package io.sluice.common.validation;
