package io.sluice.common.validation;

import io.sluice.common.SqsError;
import io.sluice.common.SqsFailure;
import io.sluice.common.SqsLimits;
import java.util.Collection;
import java.util.HashSet;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Queue tag rules (spec section 10), all {@code InvalidParameterValue}: at most 50 tags per queue; keys 1-128 and
 * values 0-256 characters (code points) of Unicode letters, digits, space separators and {@code _ . : / = + - @};
 * keys starting with {@code aws:} (any case) are reserved. Keys and values are case-sensitive.
 */
public final class TagValidator {
    private static final String ALLOWED = "letters, digits, spaces and _ . : / = + - @";
    private static final String RESERVED_PREFIX = "aws:";

    private TagValidator() {
    }

    /** CreateQueue tags: each tag, then the count. */
    public static Optional<SqsFailure> validateTags(Map<String, String> tags) {
        return validateTagQueue(Map.of(), tags);
    }

    /** TagQueue: each new tag, then the number of distinct keys the queue would have afterwards. */
    public static Optional<SqsFailure> validateTagQueue(Map<String, String> existing, Map<String, String> added) {
        for (Map.Entry<String, String> tag : added.entrySet()) {
            Optional<SqsFailure> bad = checkKey(tag.getKey()).or(() -> checkValue(tag.getKey(), tag.getValue()));
            if (bad.isPresent()) {
                return bad;
            }
        }
        Set<String> keys = new HashSet<>(existing.keySet());
        keys.addAll(added.keySet());
        if (keys.size() > SqsLimits.MAX_TAGS_PER_QUEUE) {
            return invalid("Too many tags: a queue can have at most " + SqsLimits.MAX_TAGS_PER_QUEUE
                    + " tags, this request would leave it with " + keys.size() + ".");
        }
        return Optional.empty();
    }

    /** UntagQueue keys: same key rules; keys the queue does not have are fine. */
    public static Optional<SqsFailure> validateTagKeys(Collection<String> keys) {
        for (String key : keys) {
            Optional<SqsFailure> bad = checkKey(key);
            if (bad.isPresent()) {
                return bad;
            }
        }
        return Optional.empty();
    }

    public static Optional<SqsFailure> checkKey(String key) {
        int length = key == null ? 0 : key.codePointCount(0, key.length());
        if (length < 1 || length > SqsLimits.MAX_TAG_KEY_LENGTH) {
            return invalid("Tag keys must be 1 to " + SqsLimits.MAX_TAG_KEY_LENGTH + " characters long.");
        }
        if (!hasAllowedCharacters(key)) {
            return invalid("Tag key '" + key + "' contains characters that are not allowed. Tags can contain "
                    + ALLOWED + ".");
        }
        if (key.toLowerCase(Locale.ROOT).startsWith(RESERVED_PREFIX)) {
            return invalid("Tag key '" + key + "' uses the reserved prefix 'aws:'.");
        }
        return Optional.empty();
    }

    public static Optional<SqsFailure> checkValue(String key, String value) {
        if (value == null) {
            return invalid("Tag '" + key + "' must have a value (it may be empty).");
        }
        if (value.codePointCount(0, value.length()) > SqsLimits.MAX_TAG_VALUE_LENGTH) {
            return invalid("Tag values must be at most " + SqsLimits.MAX_TAG_VALUE_LENGTH + " characters long.");
        }
        if (!hasAllowedCharacters(value)) {
            return invalid("The value of tag '" + key + "' contains characters that are not allowed. Tags can"
                    + " contain " + ALLOWED + ".");
        }
        return Optional.empty();
    }

    private static boolean hasAllowedCharacters(String text) {
        return text.codePoints().allMatch(cp -> Character.isLetter(cp) || Character.isDigit(cp)
                || Character.isSpaceChar(cp) || "_.:/=+-@".indexOf(cp) >= 0);
    }

    private static Optional<SqsFailure> invalid(String message) {
        return Optional.of(SqsError.INVALID_PARAMETER_VALUE.withMessage(message));
    }
}
