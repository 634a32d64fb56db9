package io.sluice.common.validation;

import io.sluice.common.SqsError;
import io.sluice.common.SqsFailure;
import io.sluice.common.SqsLimits;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.function.ToLongFunction;
import java.util.regex.Pattern;
import java.util.stream.IntStream;

/**
 * Request-level checks of the batch actions (spec SendMessageBatch), which fail the whole request. In order:
 * <ol>
 *   <li>no entries: {@code EmptyBatchRequest};</li>
 *   <li>more than 10: {@code TooManyEntriesInBatchRequest};</li>
 *   <li>an {@code Id} not matching {@code [A-Za-z0-9_-]{1,80}}: {@code InvalidBatchEntryId};</li>
 *   <li>the caller's per-entry request-level check, if any (SendMessageBatch on FIFO queues:
 *       {@link MessageValidator#checkBatchRequestFifoEntry});</li>
 *   <li>a repeated {@code Id}: {@code BatchEntryIdsNotDistinct};</li>
 *   <li>sum of entry sizes above 1,048,576 bytes: {@code BatchRequestTooLong}.</li>
 * </ol>
 * Per-entry problems found later (bad body, bad handle) are not request-level; they go to {@code Failed}.
 */
public final class BatchValidator {
    private static final Pattern ENTRY_ID =
            Pattern.compile("[A-Za-z0-9_-]{1," + SqsLimits.MAX_BATCH_ENTRY_ID_LENGTH + "}");

    private BatchValidator() {
    }

    /** DeleteMessageBatch / ChangeMessageVisibilityBatch: ids only, no size limit. */
    public static Optional<SqsFailure> validateIds(List<String> ids) {
        return validate(ids, Function.identity(), null, null);
    }

    /** Ids with the matching entry sizes ({@code sizes.get(i)} belongs to {@code ids.get(i)}). */
    public static Optional<SqsFailure> validate(List<String> ids, List<Long> sizes) {
        if (ids.size() != sizes.size()) {
            throw new IllegalArgumentException("ids and sizes differ in length");
        }
        List<Integer> indexes = IntStream.range(0, ids.size()).boxed().toList();
        return validate(indexes, ids::get, sizes::get, null);
    }

    /**
     * Any entry type.
     *
     * @param entries    the entries in request order
     * @param idOf       an entry's {@code Id} (null when absent, which is an invalid id)
     * @param sizeOf     an entry's size in bytes for the total-size check (spec 5.2); null skips that check
     * @param entryCheck an extra per-entry request-level check run after the id check; null for none
     */
    public static <E> Optional<SqsFailure> validate(List<E> entries, Function<? super E, String> idOf,
            ToLongFunction<? super E> sizeOf, Function<? super E, Optional<SqsFailure>> entryCheck) {
        Objects.requireNonNull(idOf, "idOf");
        if (entries.isEmpty()) {
            return Optional.of(SqsError.EMPTY_BATCH_REQUEST.failure());
        }
        if (entries.size() > SqsLimits.MAX_BATCH_ENTRIES) {
            return Optional.of(SqsError.TOO_MANY_ENTRIES_IN_BATCH_REQUEST.withMessage("Maximum number of entries per"
                    + " request are " + SqsLimits.MAX_BATCH_ENTRIES + ". You have sent " + entries.size() + "."));
        }
        for (E entry : entries) {
            String id = idOf.apply(entry);
            if (id == null || !ENTRY_ID.matcher(id).matches()) {
                return Optional.of(SqsError.INVALID_BATCH_ENTRY_ID.failure());
            }
        }
        if (entryCheck != null) {
            for (E entry : entries) {
                Optional<SqsFailure> bad = entryCheck.apply(entry);
                if (bad.isPresent()) {
                    return bad;
                }
            }
        }
        Set<String> seen = new HashSet<>();
        for (E entry : entries) {
            String id = idOf.apply(entry);
            if (!seen.add(id)) {
                return Optional.of(SqsError.BATCH_ENTRY_IDS_NOT_DISTINCT.withMessage("Id " + id + " repeated."));
            }
        }
        if (sizeOf != null) {
            long total = 0;
            for (E entry : entries) {
                total += sizeOf.applyAsLong(entry);
            }
            if (total > SqsLimits.MAX_BATCH_TOTAL_BYTES) {
                return Optional.of(SqsError.BATCH_REQUEST_TOO_LONG.withMessage("Batch requests cannot be longer than "
                        + SqsLimits.MAX_BATCH_TOTAL_BYTES + " bytes. You have sent " + total + " bytes."));
            }
        }
        return Optional.empty();
    }
}
