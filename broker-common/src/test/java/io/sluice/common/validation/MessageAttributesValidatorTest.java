package io.sluice.common.validation;

import static io.sluice.common.validation.ValidationAssertions.assertFailure;
import static io.sluice.common.validation.ValidationAssertions.assertOk;

import io.sluice.common.MessageAttributeValue;
import io.sluice.common.SqsError;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class MessageAttributesValidatorTest {
    private static final String VALID_CHARS = "Valid unicode characters are #x9 | #xA | #xD | #x20 to #xD7FF"
            + " | #xE000 to #xFFFD | #x10000 to #x10FFFF";
    private static final String RESERVED = "You can't use message attribute names beginning with 'AWS.' or"
            + " 'Amazon.'. These strings are reserved for internal use.";

    private static Optional<io.sluice.common.SqsFailure> user(String name, MessageAttributeValue value) {
        return MessageAttributesValidator.validateUserAttributes(Map.of(name, value));
    }

    private static MessageAttributeValue str(String type, String value) {
        return MessageAttributeValue.ofString(type, value);
    }

    private static Map<String, MessageAttributeValue> attributes(int n) {
        Map<String, MessageAttributeValue> map = new LinkedHashMap<>();
        for (int i = 0; i < n; i++) {
            map.put("a" + i, str("String", "v"));
        }
        return map;
    }

    @ParameterizedTest
    @ValueSource(strings = {"a", "Attr.1", "x-y_z.W9", "AWSx", "awsish.x", "Amazonian.y", "_.-"})
    void acceptsNames(String name) {
        assertOk(user(name, str("String", "v")));
    }

    @Test
    void nameLengthBoundary() {
        assertOk(user("n".repeat(256), str("String", "v")));
        assertFailure(SqsError.INVALID_PARAMETER_VALUE, "Message (user) attribute names must be at most 256"
                + " characters long.", user("n".repeat(257), str("String", "v")));
        assertFailure(SqsError.INVALID_PARAMETER_VALUE,
                "The request must contain non-empty message (user) attribute names.", user("", str("String", "v")));
    }

    @ParameterizedTest
    @ValueSource(strings = {"AWS.x", "aws.x", "Aws.", "Amazon.y", "AMAZON.y", "amazon.Z"})
    void reservedPrefixesInAnyCase(String name) {
        assertFailure(SqsError.INVALID_PARAMETER_VALUE, RESERVED, user(name, str("String", "v")));
    }

    @ParameterizedTest
    @ValueSource(strings = {"bad name", "a/b", "caf\u00e9", "a*", "a:b"})
    void nameCharacters(String name) {
        assertFailure(SqsError.INVALID_PARAMETER_VALUE, "Message (user) attribute name '" + name + "' can only"
                + " include alphanumeric characters, hyphens, underscores, or periods.",
                user(name, str("String", "v")));
    }

    @ParameterizedTest
    @ValueSource(strings = {".a", "a.", "a..b", "."})
    void namePeriods(String name) {
        assertFailure(SqsError.INVALID_PARAMETER_VALUE, "Message (user) attribute name '" + name + "' must not"
                + " start or end with a period or contain successive periods.", user(name, str("String", "v")));
    }

    @Test
    void producerOrderNamesAreReserved() {
        assertOk(user("Sluice.ProducerTime", str("Number", "1733200000000")));
        assertOk(user("Sluice.ProducerTime", str("Number.epochMillis", "0")));
        for (String bad : List.of("-1", "1.5", "1e3", "1234567890123456789")) {
            assertFailure(SqsError.INVALID_PARAMETER_VALUE, "Message attribute 'Sluice.ProducerTime' must be a Number of"
                    + " epoch milliseconds (a whole number, 0 or more).", user("Sluice.ProducerTime", str("Number", bad)));
        }
        assertFailure(SqsError.INVALID_PARAMETER_VALUE, "Message attribute 'Sluice.ProducerTime' must be a Number of"
                + " epoch milliseconds (a whole number, 0 or more).", user("Sluice.ProducerTime", str("String", "5")));
        assertOk(user("Sluice.ProducerId", str("String", "producer-7")));
        assertFailure(SqsError.INVALID_PARAMETER_VALUE, "Message attribute 'Sluice.ProducerId' must be a String.",
                user("Sluice.ProducerId", str("Number", "7")));
        assertFailure(SqsError.INVALID_PARAMETER_VALUE, "Message attribute 'Sluice.Late' is set by Sluice on late"
                + " messages; a producer can't send it.", user("Sluice.Late", str("String", "true")));
    }

    @Test
    void atMostTenAttributes() {
        assertOk(MessageAttributesValidator.validateUserAttributes(attributes(10)));
        assertFailure(SqsError.INVALID_PARAMETER_VALUE,
                "Number of message attributes [11] exceeds the allowed maximum [10].",
                MessageAttributesValidator.validateUserAttributes(attributes(11)));
    }

    @ParameterizedTest
    @ValueSource(strings = {"String", "Number", "String.json", "Number.float", "String.x.y", "String.\u00e9t\u00e9"})
    void acceptsStringCarryingTypes(String type) {
        assertOk(user("a", str(type, "12")));
    }

    @ParameterizedTest
    @ValueSource(strings = {"Binary", "Binary.png"})
    void acceptsBinaryTypes(String type) {
        assertOk(user("a", MessageAttributeValue.ofBinary(type, new byte[] {0, 1})));
    }

    @ParameterizedTest
    @ValueSource(strings = {"string", "Int", "StringX", "String.", "Binary.", ".String", "Str\u0000ing.x",
        "String.\u0000"})
    void rejectsTypes(String type) {
        assertFailure(SqsError.INVALID_PARAMETER_VALUE, "The type of message (user) attribute 'a' is invalid. You"
                + " must use only the following supported type prefixes: Binary, Number, String.",
                user("a", str(type, "v")));
    }

    @Test
    void typeLengthAndPresence() {
        assertOk(user("a", str("String." + "l".repeat(249), "v")));
        assertFailure(SqsError.INVALID_PARAMETER_VALUE, "Message (user) attribute types must be at most 256"
                + " characters long.", user("a", str("String." + "l".repeat(250), "v")));
        assertFailure(SqsError.INVALID_PARAMETER_VALUE,
                "The message (user) attribute 'a' must contain a non-empty message attribute type.",
                user("a", str("", "v")));
    }

    @Test
    void valueFieldMustMatchType() {
        assertFailure(SqsError.INVALID_PARAMETER_VALUE,
                "Message (user) attribute 'a' with type 'Binary.png' must use field 'Binary'.",
                user("a", str("Binary.png", "v")));
        assertFailure(SqsError.INVALID_PARAMETER_VALUE,
                "Message (user) attribute 'a' with type 'Number' must use field 'String'.",
                user("a", MessageAttributeValue.ofBinary("Number", new byte[] {1})));
    }

    @ParameterizedTest
    @CsvSource({"String, String", "Number, String", "Number.int, String", "String.json, String"})
    void emptyStringValues(String type, String field) {
        assertFailure(SqsError.INVALID_PARAMETER_VALUE, "Message (user) attribute 'ErrorDetails' must contain a"
                + " non-empty value of type '" + field + "'.", user("ErrorDetails", str(type, "")));
    }

    @Test
    void emptyBinaryValueAndParserHelper() {
        assertFailure(SqsError.INVALID_PARAMETER_VALUE,
                "Message (user) attribute 'b' must contain a non-empty value of type 'Binary'.",
                user("b", MessageAttributeValue.ofBinary("Binary", new byte[0])));
        assertFailure(SqsError.INVALID_PARAMETER_VALUE,
                "Message (user) attribute 'b' must contain a non-empty value of type 'Binary'.",
                Optional.of(MessageAttributesValidator.missingValue("b", "Binary.gif")));
        assertFailure(SqsError.INVALID_PARAMETER_VALUE,
                "Message (user) attribute 's' must contain a non-empty value of type 'String'.",
                Optional.of(MessageAttributesValidator.missingValue("s", "Number")));
    }

    @ParameterizedTest
    @ValueSource(strings = {"nul\u0000", "\uFFFF", "lone \uD800"})
    void stringValueCharacters(String value) {
        assertFailure(SqsError.INVALID_PARAMETER_VALUE,
                "Message (user) attribute 'a' contains invalid characters. " + VALID_CHARS,
                user("a", str("String", value)));
    }

    @ParameterizedTest
    @ValueSource(strings = {"0", "-1", "3.14", "1e5", "+7", ".5", "5.", "-0.0", "1E126", "-1E+126", "1e-128",
        "0.0000000001", "99999999999999999999999999999999999999", "1000000000000000000000000000000000000000000000",
        "0e999999999999", "1.00000000000000000000000000000000000000000", "000000000000000000000000000000000000000012"})
    void acceptsNumbers(String value) {
        assertOk(user("n", str("Number", value)));
    }

    @ParameterizedTest
    @ValueSource(strings = {"abc", "1,5", " 1", "1 ", "0x10", "NaN", "Infinity", "--1", "1e", "e5", ".", "+", "1e5.5"})
    void rejectsNonNumbers(String value) {
        assertFailure(SqsError.INVALID_PARAMETER_VALUE,
                "Can't cast the value of message (user) attribute 'n' to a number.", user("n", str("Number", value)));
    }

    @ParameterizedTest
    @ValueSource(strings = {"123456789012345678901234567890123456789", "1.1E126", "2E126", "1E127", "1e-129",
        "0.9e-128", "1e9999999999", "-1e-99999999999"})
    void rejectsNumbersOutOfPrecisionOrRange(String value) {
        assertFailure(SqsError.INVALID_PARAMETER_VALUE, "Value " + value + " of message (user) attribute 'n' is out"
                + " of range: numbers can have at most 38 significant digits and a magnitude from 10^-128 to 10^+126.",
                user("n", str("Number.big", value)));
    }

    @Test
    void systemAttributesAllowOnlyAwsTraceHeaderAsString() {
        assertOk(MessageAttributesValidator.validateSystemAttributes(Map.of("AWSTraceHeader",
                str("String", "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"))));
        assertOk(MessageAttributesValidator.validateSystemAttributes(Map.of()));
        assertFailure(SqsError.INVALID_PARAMETER_VALUE, "Message system attribute name 'Hello' is invalid.",
                MessageAttributesValidator.validateSystemAttributes(Map.of("Hello", str("String", "v"))));
        for (String type : new String[] {"Number", "String.x", "Binary"}) {
            assertFailure(SqsError.INVALID_PARAMETER_VALUE, "The type of message system attribute 'AWSTraceHeader' is"
                    + " invalid. You must use only the following supported type: String.",
                    MessageAttributesValidator.validateSystemAttributes(Map.of("AWSTraceHeader", str(type, "v"))));
        }
        assertFailure(SqsError.INVALID_PARAMETER_VALUE,
                "Message system attribute 'AWSTraceHeader' with type 'String' must use field 'String'.",
                MessageAttributesValidator.validateSystemAttributes(Map.of("AWSTraceHeader",
                        MessageAttributeValue.ofBinary("String", new byte[] {1}))));
        assertFailure(SqsError.INVALID_PARAMETER_VALUE,
                "Message system attribute 'AWSTraceHeader' must contain a non-empty value of type 'String'.",
                MessageAttributesValidator.validateSystemAttributes(Map.of("AWSTraceHeader", str("String", ""))));
        assertFailure(SqsError.INVALID_PARAMETER_VALUE,
                "Message system attribute 'AWSTraceHeader' contains invalid characters. " + VALID_CHARS,
                MessageAttributesValidator.validateSystemAttributes(Map.of("AWSTraceHeader", str("String", "\u0001"))));
    }
}
