package io.sluice.common.validation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** {@link AttributeNameFilter} (message attributes) and {@link SystemAttributeSelection}. */
class AttributeSelectionTest {
    private static final Map<String, String> ATTRIBUTES = new LinkedHashMap<>();

    static {
        ATTRIBUTES.put("foo", "1");
        ATTRIBUTES.put("foo.bar", "2");
        ATTRIBUTES.put("foo.baz.qux", "3");
        ATTRIBUTES.put("foobar", "4");
        ATTRIBUTES.put("Other", "5");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "All|foo,foo.bar,foo.baz.qux,foobar,Other",
        ".*|foo,foo.bar,foo.baz.qux,foobar,Other",
        "*|foo,foo.bar,foo.baz.qux,foobar,Other",
        "foo|foo",
        "foo.*|foo.bar,foo.baz.qux",
        "foo.baz.*|foo.baz.qux",
        "other|''",
        "Other,foo|foo,Other",
        "AWS.*|''",
        "..foo|''",
        "fo*|''",
        "nothing,foo.*,Other|foo.bar,foo.baz.qux,Other"})
    void messageAttributeSelection(String requested, String expected) {
        AttributeNameFilter filter = AttributeNameFilter.of(List.of(requested.split(",")));
        List<String> expectedNames = expected.isEmpty() ? List.of() : List.of(expected.split(","));
        assertEquals(expectedNames, List.copyOf(filter.select(ATTRIBUTES).keySet()));
    }

    @Test
    void noNamesSelectNothing() {
        assertTrue(AttributeNameFilter.of(List.of()).selectsNothing());
        assertTrue(AttributeNameFilter.of(null).select(ATTRIBUTES).isEmpty());
        assertFalse(AttributeNameFilter.of(List.of("x")).selectsNothing());
        assertTrue(AttributeNameFilter.of(List.of("All")).matches("anything"));
    }

    @Test
    void systemAttributeSelectionIsTheUnionOfBothLists() {
        SystemAttributeSelection s = SystemAttributeSelection.of(List.of("SentTimestamp", "Bogus"),
                List.of("MessageGroupId", "SentTimestamp"));
        assertEquals(Set.of("SentTimestamp", "MessageGroupId"), s.names());
        assertTrue(s.includes("MessageGroupId"));
        assertFalse(s.includes("Bogus"));
        assertFalse(s.includes("SenderId"));
    }

    @Test
    void allSelectsEverySystemAttributeAndSelectReturnsOnlyPresentOnes() {
        SystemAttributeSelection all = SystemAttributeSelection.of(List.of("All"), null);
        assertEquals(List.copyOf(SystemAttributeSelection.KNOWN), List.copyOf(all.names()));
        Map<String, String> message = Map.of("SentTimestamp", "1", "SenderId", "AID", "ApproximateReceiveCount", "2");
        assertEquals(List.of("SenderId", "SentTimestamp", "ApproximateReceiveCount"),
                List.copyOf(all.select(message).keySet()));
        assertEquals(Map.of("SentTimestamp", "1"),
                SystemAttributeSelection.of(List.of("SentTimestamp", "SequenceNumber")).select(message));
        assertTrue(SystemAttributeSelection.of(List.of()).select(message).isEmpty());
        assertTrue(SystemAttributeSelection.of(List.of("all")).names().isEmpty());
    }
}
