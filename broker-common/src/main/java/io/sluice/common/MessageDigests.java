package io.sluice.common;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;
import java.util.TreeMap;

/** The digests SQS clients check (spec section 6) and the content-based deduplication id (section 7). */
public final class MessageDigests {
    private static final HexFormat HEX = HexFormat.of();
    private static final byte STRING_TRANSPORT = 1;
    private static final byte BINARY_TRANSPORT = 2;

    private MessageDigests() {
    }

    /** Lower-case hex MD5 of the body's UTF-8 bytes: {@code MD5OfMessageBody} / {@code MD5OfBody}. */
    public static String md5OfBody(String body) {
        return HEX.formatHex(md5().digest(body.getBytes(StandardCharsets.UTF_8)));
    }

    /**
     * {@code MD5OfMessageAttributes} (and {@code MD5OfMessageSystemAttributes}): names sorted, each attribute
     * fed as length-prefixed name, length-prefixed type, a transport byte, length-prefixed value. Returns
     * {@code null} for no attributes, since SQS then omits the digest.
     */
    public static String md5OfAttributes(Map<String, MessageAttributeValue> attributes) {
        if (attributes == null || attributes.isEmpty()) {
            return null;
        }
        MessageDigest md5 = md5();
        for (Map.Entry<String, MessageAttributeValue> e : new TreeMap<>(attributes).entrySet()) {
            MessageAttributeValue value = e.getValue();
            updateLengthPrefixed(md5, e.getKey().getBytes(StandardCharsets.UTF_8));
            updateLengthPrefixed(md5, value.dataType().getBytes(StandardCharsets.UTF_8));
            if (value.isBinary()) {
                md5.update(BINARY_TRANSPORT);
                updateLengthPrefixed(md5, value.binaryValue());
            } else {
                md5.update(STRING_TRANSPORT);
                updateLengthPrefixed(md5, value.stringValue().getBytes(StandardCharsets.UTF_8));
            }
        }
        return HEX.formatHex(md5.digest());
    }

    /** Content-based deduplication id: lower-case hex SHA-256 of the body's UTF-8 bytes. */
    public static String contentDeduplicationId(String body) {
        try {
            return HEX.formatHex(MessageDigest.getInstance("SHA-256").digest(body.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is a required JDK algorithm", e);
        }
    }

    private static void updateLengthPrefixed(MessageDigest md, byte[] bytes) {
        int n = bytes.length;
        md.update(new byte[] {(byte) (n >>> 24), (byte) (n >>> 16), (byte) (n >>> 8), (byte) n});
        md.update(bytes);
    }

    private static MessageDigest md5() {
        try {
            return MessageDigest.getInstance("MD5");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("MD5 is a required JDK algorithm", e);
        }
    }
}
