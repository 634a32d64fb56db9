package io.sluice.common.validation;

import static io.sluice.common.validation.ValidationAssertions.assertFailure;
import static io.sluice.common.validation.ValidationAssertions.assertOk;

import io.sluice.common.SqsError;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class TagValidatorTest {
    private static final String ALLOWED = "letters, digits, spaces and _ . : / = + - @";

    private static Map<String, String> tags(int n, String prefix) {
        Map<String, String> map = new HashMap<>();
        for (int i = 0; i < n; i++) {
            map.put(prefix + i, "v");
        }
        return map;
    }

    @ParameterizedTest
    @ValueSource(strings = {"env", "team:owner", "a/b=c+d-e@f_g.h", "caf\u00e9 \u65e5\u672c 42", "AWS", "awsx:y"})
    void acceptsKeysAndValues(String text) {
        assertOk(TagValidator.validateTags(Map.of(text, text)));
    }

    @Test
    void keyAndValueLengths() {
        assertOk(TagValidator.validateTags(Map.of("k".repeat(128), "v".repeat(256))));
        assertOk(TagValidator.validateTags(Map.of("k", "")));
        // Lengths count code points: 256 supplementary-plane letters (512 UTF-16 units) are fine.
        assertOk(TagValidator.validateTags(Map.of("\uD840\uDC00".repeat(128), "\uD840\uDC00".repeat(256))));
        assertFailure(SqsError.INVALID_PARAMETER_VALUE, "Tag keys must be 1 to 128 characters long.",
                TagValidator.validateTags(Map.of("k".repeat(129), "v")));
        assertFailure(SqsError.INVALID_PARAMETER_VALUE, "Tag keys must be 1 to 128 characters long.",
                TagValidator.validateTags(Map.of("", "v")));
        assertFailure(SqsError.INVALID_PARAMETER_VALUE, "Tag values must be at most 256 characters long.",
                TagValidator.validateTags(Map.of("k", "v".repeat(257))));
    }

    @ParameterizedTest
    @ValueSource(strings = {"semi;colon", "star*", "quote\"", "tab\t", "comma,", "emoji\uD83D\uDE00"})
    void rejectsOtherCharacters(String text) {
        assertFailure(SqsError.INVALID_PARAMETER_VALUE, "Tag key '" + text + "' contains characters that are not"
                + " allowed. Tags can contain " + ALLOWED + ".", TagValidator.validateTags(Map.of(text, "v")));
        assertFailure(SqsError.INVALID_PARAMETER_VALUE, "The value of tag 'k' contains characters that are not"
                + " allowed. Tags can contain " + ALLOWED + ".", TagValidator.validateTags(Map.of("k", text)));
    }

    @ParameterizedTest
    @ValueSource(strings = {"aws:createdBy", "AWS:x", "Aws:"})
    void awsPrefixIsReserved(String key) {
        assertFailure(SqsError.INVALID_PARAMETER_VALUE, "Tag key '" + key + "' uses the reserved prefix 'aws:'.",
                TagValidator.validateTags(Map.of(key, "v")));
        assertFailure(SqsError.INVALID_PARAMETER_VALUE, "Tag key '" + key + "' uses the reserved prefix 'aws:'.",
                TagValidator.validateTagKeys(List.of("ok", key)));
    }

    @Test
    void atMostFiftyTagsPerQueue() {
        assertOk(TagValidator.validateTags(tags(50, "k")));
        assertFailure(SqsError.INVALID_PARAMETER_VALUE, "Too many tags: a queue can have at most 50 tags, this"
                + " request would leave it with 51.", TagValidator.validateTags(tags(51, "k")));
        assertOk(TagValidator.validateTagQueue(tags(40, "k"), tags(10, "n")));
        assertOk(TagValidator.validateTagQueue(tags(50, "k"), tags(10, "k")));
        assertFailure(SqsError.INVALID_PARAMETER_VALUE, "Too many tags: a queue can have at most 50 tags, this"
                + " request would leave it with 51.", TagValidator.validateTagQueue(tags(50, "k"), Map.of("new", "v")));
    }

    @Test
    void untagKeysFollowKeyRules() {
        assertOk(TagValidator.validateTagKeys(List.of("missing-is-fine", "env")));
        assertFailure(SqsError.INVALID_PARAMETER_VALUE, "Tag keys must be 1 to 128 characters long.",
                TagValidator.validateTagKeys(List.of("")));
    }
}
