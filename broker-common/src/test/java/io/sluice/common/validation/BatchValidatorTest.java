package io.sluice.common.validation;

import static io.sluice.common.validation.ValidationAssertions.assertFailure;
import static io.sluice.common.validation.ValidationAssertions.assertOk;

import io.sluice.common.SqsError;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.NullSource;
import org.junit.jupiter.params.provider.ValueSource;

class BatchValidatorTest {
    private static final String BAD_ID_TEXT = "A batch entry id can only contain alphanumeric characters, hyphens and"
            + " underscores. It can be at most 80 letters long.";

    private record Entry(String id, SendRequest message) {
    }

    private static List<String> ids(int n) {
        return IntStream.range(0, n).mapToObj(i -> "e" + i).toList();
    }

    private static List<Long> sizes(long... sizes) {
        return Arrays.stream(sizes).boxed().toList();
    }

    @Test
    void emptyBatch() {
        assertFailure(SqsError.EMPTY_BATCH_REQUEST, "There should be at least one entry in the request.",
                BatchValidator.validateIds(List.of()));
    }

    @Test
    void atMostTenEntries() {
        assertOk(BatchValidator.validateIds(ids(10)));
        assertFailure(SqsError.TOO_MANY_ENTRIES_IN_BATCH_REQUEST,
                "Maximum number of entries per request are 10. You have sent 11.", BatchValidator.validateIds(ids(11)));
    }

    @ParameterizedTest
    @ValueSource(strings = {"a", "A-b_9", "e"})
    void acceptsIds(String id) {
        assertOk(BatchValidator.validateIds(List.of(id, "x".repeat(80))));
    }

    @ParameterizedTest
    @NullSource
    @ValueSource(strings = {"", "has space", "a.b", "caf\u00e9", "x/y"})
    void rejectsIds(String id) {
        List<String> list = new ArrayList<>(List.of("ok"));
        list.add(id);
        assertFailure(SqsError.INVALID_BATCH_ENTRY_ID, BAD_ID_TEXT, BatchValidator.validateIds(list));
    }

    @Test
    void idOf81CharactersIsRejected() {
        assertFailure(SqsError.INVALID_BATCH_ENTRY_ID, BAD_ID_TEXT,
                BatchValidator.validateIds(List.of("x".repeat(81))));
    }

    @Test
    void idsMustBeDistinct() {
        assertFailure(SqsError.BATCH_ENTRY_IDS_NOT_DISTINCT, "Id e1 repeated.",
                BatchValidator.validateIds(List.of("e1", "e2", "e1")));
        assertOk(BatchValidator.validateIds(List.of("e1", "E1")));
    }

    @Test
    void totalSizeLimitIsInclusive() {
        assertOk(BatchValidator.validate(List.of("a", "b"), sizes(524_288, 524_288)));
        assertFailure(SqsError.BATCH_REQUEST_TOO_LONG,
                "Batch requests cannot be longer than 1048576 bytes. You have sent 1048577 bytes.",
                BatchValidator.validate(List.of("a", "b"), sizes(524_288, 524_289)));
        assertOk(BatchValidator.validateIds(List.of("a")));
    }

    @Test
    void checksRunInSpecOrder() {
        List<String> elevenBad = new ArrayList<>(ids(10));
        elevenBad.add("bad id");
        assertFailure(SqsError.TOO_MANY_ENTRIES_IN_BATCH_REQUEST,
                "Maximum number of entries per request are 10. You have sent 11.",
                BatchValidator.validateIds(elevenBad));
        assertFailure(SqsError.INVALID_BATCH_ENTRY_ID, BAD_ID_TEXT,
                BatchValidator.validateIds(List.of("e1", "e1", "bad id")));
        assertFailure(SqsError.BATCH_ENTRY_IDS_NOT_DISTINCT, "Id a repeated.",
                BatchValidator.validate(List.of("a", "a"), sizes(1_048_576, 1)));
    }

    @Test
    void fifoEntryChecksComeAfterIdsAndBeforeDuplicates() {
        QueueAttributes fifo = QueueAttributes.defaults(true);
        List<Entry> entries = List.of(new Entry("e1", new SendRequest("x", null, null, null, "g", "d")),
                new Entry("e1", new SendRequest("y", null, null, null, null, "d")));
        assertFailure(SqsError.INVALID_PARAMETER_VALUE, "The request must contain the parameter MessageGroupId.",
                BatchValidator.validate(entries, Entry::id, e -> e.message().sizeBytes(),
                        e -> MessageValidator.checkBatchRequestFifoEntry(e.message(), fifo)));
        List<Entry> badId = List.of(new Entry("bad id", new SendRequest("y", null, null, null, null, null)));
        assertFailure(SqsError.INVALID_BATCH_ENTRY_ID, BAD_ID_TEXT, BatchValidator.validate(badId, Entry::id,
                e -> e.message().sizeBytes(), e -> MessageValidator.checkBatchRequestFifoEntry(e.message(), fifo)));
        List<Entry> fine = List.of(new Entry("e1", new SendRequest("x", null, null, null, "g", "d1")),
                new Entry("e2", new SendRequest("y", null, null, null, "g", "d2")));
        assertOk(BatchValidator.validate(fine, Entry::id, e -> e.message().sizeBytes(),
                e -> MessageValidator.checkBatchRequestFifoEntry(e.message(), fifo)));
    }
}
