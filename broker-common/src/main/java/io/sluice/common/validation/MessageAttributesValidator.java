package io.sluice.common.validation;

import io.sluice.common.MessageAttributeValue;
import io.sluice.common.ProducerOrder;
import io.sluice.common.SqsError;
import io.sluice.common.SqsFailure;
import io.sluice.common.SqsLimits;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Message attribute rules (spec 5.5) and message system attribute rules (SendMessage). Every violation is
 * {@code InvalidParameterValue}; the first violation in map iteration order is reported.
 */
public final class MessageAttributesValidator {
    /** The only message system attribute a client may send. */
    public static final String AWS_TRACE_HEADER = "AWSTraceHeader";

    private static final Pattern NAME_CHARS = Pattern.compile("[A-Za-z0-9_.-]+");
    private static final String STRING = "String";
    private static final String NUMBER = "Number";
    private static final String BINARY = "Binary";
    private static final String VALID_CHARACTERS = SqsError.INVALID_MESSAGE_CONTENTS.defaultMessage()
            .substring(SqsError.INVALID_MESSAGE_CONTENTS.defaultMessage().indexOf("Valid unicode"));

    private MessageAttributesValidator() {
    }

    /** User attributes: at most 10, then each name, type and value. {@code attributes} may be empty. */
    public static Optional<SqsFailure> validateUserAttributes(Map<String, MessageAttributeValue> attributes) {
        if (attributes.size() > SqsLimits.MAX_MESSAGE_ATTRIBUTES) {
            return invalid("Number of message attributes [" + attributes.size() + "] exceeds the allowed maximum ["
                    + SqsLimits.MAX_MESSAGE_ATTRIBUTES + "].");
        }
        for (Map.Entry<String, MessageAttributeValue> e : attributes.entrySet()) {
            Optional<SqsFailure> bad = checkName(e.getKey()).or(() -> checkUserValue(e.getKey(), e.getValue()))
                    .or(() -> checkProducerOrder(e.getKey(), e.getValue()));
            if (bad.isPresent()) {
                return bad;
            }
        }
        return Optional.empty();
    }

    /**
     * A user attribute name: 1-256 of {@code [A-Za-z0-9_.-]}, not starting with {@code AWS.} or {@code Amazon.}
     * (any case), not starting or ending with {@code .}, no {@code ..}.
     */
    public static Optional<SqsFailure> checkName(String name) {
        if (name == null || name.isEmpty()) {
            return invalid("The request must contain non-empty message (user) attribute names.");
        }
        if (name.length() > SqsLimits.MAX_ATTRIBUTE_NAME_LENGTH) {
            return invalid("Message (user) attribute names must be at most "
                    + SqsLimits.MAX_ATTRIBUTE_NAME_LENGTH + " characters long.");
        }
        String lower = name.toLowerCase(Locale.ROOT);
        if (lower.startsWith("aws.") || lower.startsWith("amazon.")) {
            return invalid("You can't use message attribute names beginning with 'AWS.' or 'Amazon.'."
                    + " These strings are reserved for internal use.");
        }
        if (!NAME_CHARS.matcher(name).matches()) {
            return invalid("Message (user) attribute name '" + name + "' can only include alphanumeric characters,"
                    + " hyphens, underscores, or periods.");
        }
        if (name.startsWith(".") || name.endsWith(".") || name.contains("..")) {
            return invalid("Message (user) attribute name '" + name + "' must not start or end with a period or"
                    + " contain successive periods.");
        }
        return Optional.empty();
    }

    /**
     * The reserved names of producer order ({@link ProducerOrder}), on every queue: a producer time is a Number that
     * is a whole number of milliseconds, 0 or more; a producer id is a String; {@code Sluice.Late} is Sluice's to set.
     */
    private static Optional<SqsFailure> checkProducerOrder(String name, MessageAttributeValue value) {
        return switch (name) {
            case ProducerOrder.PRODUCER_TIME -> NUMBER.equals(baseType(value.dataType()))
                    && ProducerOrder.parseProducerTime(value.stringValue()) >= 0 ? Optional.empty()
                    : invalid("Message attribute '" + name + "' must be a Number of epoch milliseconds (a whole"
                    + " number, 0 or more).");
            case ProducerOrder.PRODUCER_ID -> STRING.equals(baseType(value.dataType())) ? Optional.empty()
                    : invalid("Message attribute '" + name + "' must be a String.");
            case ProducerOrder.LATE -> invalid("Message attribute '" + name + "' is set by Sluice on late messages;"
                    + " a producer can't send it.");
            default -> Optional.empty();
        };
    }

    /**
     * The failure for an attribute that arrived with a data type but no value field at all, which a
     * {@link MessageAttributeValue} cannot represent; for the request parsers.
     */
    public static SqsFailure missingValue(String name, String dataType) {
        return SqsError.INVALID_PARAMETER_VALUE.withMessage(emptyValueMessage(name, dataType));
    }

    /** System attributes: only {@code AWSTraceHeader}, type exactly {@code String}, non-empty valid text. */
    public static Optional<SqsFailure> validateSystemAttributes(Map<String, MessageAttributeValue> attributes) {
        for (Map.Entry<String, MessageAttributeValue> e : attributes.entrySet()) {
            String name = e.getKey();
            MessageAttributeValue value = e.getValue();
            if (!AWS_TRACE_HEADER.equals(name)) {
                return invalid("Message system attribute name '" + name + "' is invalid.");
            }
            if (!STRING.equals(value.dataType())) {
                return invalid("The type of message system attribute '" + name + "' is invalid."
                        + " You must use only the following supported type: String.");
            }
            if (value.isBinary()) {
                return invalid("Message system attribute '" + name + "' with type 'String' must use field 'String'.");
            }
            if (value.stringValue().isEmpty()) {
                return invalid("Message system attribute '" + name
                        + "' must contain a non-empty value of type 'String'.");
            }
            if (!SqsLimits.hasOnlyAllowedCharacters(value.stringValue())) {
                return invalid("Message system attribute '" + name + "' contains invalid characters. "
                        + VALID_CHARACTERS);
            }
        }
        return Optional.empty();
    }

    private static Optional<SqsFailure> checkUserValue(String name, MessageAttributeValue value) {
        String type = value.dataType();
        if (type.isEmpty()) {
            return invalid("The message (user) attribute '" + name
                    + "' must contain a non-empty message attribute type.");
        }
        if (type.codePointCount(0, type.length()) > SqsLimits.MAX_ATTRIBUTE_TYPE_LENGTH) {
            return invalid("Message (user) attribute types must be at most "
                    + SqsLimits.MAX_ATTRIBUTE_TYPE_LENGTH + " characters long.");
        }
        String base = baseType(type);
        if (base == null) {
            return invalid("The type of message (user) attribute '" + name + "' is invalid. You must use only the"
                    + " following supported type prefixes: Binary, Number, String.");
        }
        boolean binaryType = base.equals(BINARY);
        if (binaryType != value.isBinary()) {
            return invalid("Message (user) attribute '" + name + "' with type '" + type + "' must use field '"
                    + (binaryType ? BINARY : STRING) + "'.");
        }
        if (binaryType ? value.binaryValue().length == 0 : value.stringValue().isEmpty()) {
            return invalid(emptyValueMessage(name, type));
        }
        if (binaryType) {
            return Optional.empty();
        }
        if (!SqsLimits.hasOnlyAllowedCharacters(value.stringValue())) {
            return invalid("Message (user) attribute '" + name + "' contains invalid characters. " + VALID_CHARACTERS);
        }
        if (base.equals(NUMBER)) {
            return switch (NumberAttribute.check(value.stringValue())) {
                case VALID -> Optional.empty();
                case NOT_A_NUMBER -> invalid("Can't cast the value of message (user) attribute '" + name
                        + "' to a number.");
                case OUT_OF_RANGE -> invalid("Value " + value.stringValue() + " of message (user) attribute '" + name
                        + "' is out of range: numbers can have at most "
                        + SqsLimits.MAX_NUMBER_ATTRIBUTE_PRECISION + " significant digits and a magnitude from 10^"
                        + SqsLimits.MIN_NUMBER_ATTRIBUTE_EXPONENT + " to 10^+"
                        + SqsLimits.MAX_NUMBER_ATTRIBUTE_EXPONENT + ".");
            };
        }
        return Optional.empty();
    }

    /** {@code String}, {@code Number} or {@code Binary} for a valid type (optional non-empty label), else null. */
    private static String baseType(String type) {
        int dot = type.indexOf('.');
        String base = dot < 0 ? type : type.substring(0, dot);
        if (!base.equals(STRING) && !base.equals(NUMBER) && !base.equals(BINARY)) {
            return null;
        }
        if (dot >= 0) {
            String label = type.substring(dot + 1);
            if (label.isEmpty() || !SqsLimits.hasOnlyAllowedCharacters(label)) {
                return null;
            }
        }
        return base;
    }

    /** AWS's text; String and Number values both travel in the 'String' field. */
    private static String emptyValueMessage(String name, String dataType) {
        String field = dataType != null && dataType.startsWith(BINARY) ? BINARY : STRING;
        return "Message (user) attribute '" + name + "' must contain a non-empty value of type '" + field + "'.";
    }

    private static Optional<SqsFailure> invalid(String message) {
        return Optional.of(SqsError.INVALID_PARAMETER_VALUE.withMessage(message));
    }
}
