package io.sluice.common;

import java.util.Arrays;
import java.util.Objects;

/**
 * A message attribute (user or system). {@code String} and {@code Number} types (and custom labels such as
 * {@code Number.float}) carry {@code stringValue}; {@code Binary} types carry {@code binaryValue}.
 */
public record MessageAttributeValue(String dataType, String stringValue, byte[] binaryValue) {
    public MessageAttributeValue {
        Objects.requireNonNull(dataType, "dataType");
        if ((stringValue == null) == (binaryValue == null)) {
            throw new IllegalArgumentException("exactly one of stringValue and binaryValue must be set");
        }
    }

    public static MessageAttributeValue ofString(String dataType, String value) {
        return new MessageAttributeValue(dataType, value, null);
    }

    public static MessageAttributeValue ofBinary(String dataType, byte[] value) {
        return new MessageAttributeValue(dataType, null, value.clone());
    }

    public boolean isBinary() {
        return binaryValue != null;
    }

    /** Bytes this attribute counts toward the message size: name, type and value (spec 5.2). */
    public int sizeBytes(String name) {
        return Utf8.length(name) + Utf8.length(dataType)
                + (binaryValue != null ? binaryValue.length : Utf8.length(stringValue));
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof MessageAttributeValue other
                && dataType.equals(other.dataType)
                && Objects.equals(stringValue, other.stringValue)
                && Arrays.equals(binaryValue, other.binaryValue);
    }

    @Override
    public int hashCode() {
        return Objects.hash(dataType, stringValue) * 31 + Arrays.hashCode(binaryValue);
    }

    @Override
    public String toString() {
        return dataType + "=" + (binaryValue != null ? "<" + binaryValue.length + " bytes>" : stringValue);
    }
}
