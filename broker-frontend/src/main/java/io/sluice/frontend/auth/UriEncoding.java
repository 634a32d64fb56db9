package io.sluice.frontend.auth;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * RFC 3986 percent-encoding as SigV4 canonicalisation requires: unreserved characters
 * ({@code A-Z a-z 0-9 - _ . ~}) are kept, every other byte becomes {@code %XX} with upper-case hex.
 */
final class UriEncoding {
    private static final char[] HEX = "0123456789ABCDEF".toCharArray();

    private UriEncoding() {
    }

    /** Encodes every byte that is not unreserved. */
    static String encode(byte[] bytes) {
        return encode(bytes, false);
    }

    /** Encodes the UTF-8 bytes of {@code s}. */
    static String encode(String s) {
        return encode(s.getBytes(StandardCharsets.UTF_8), false);
    }

    /**
     * The SigV4 canonical URI of a path as sent on the wire (non-S3 rule): each character is encoded once
     * more, so {@code /a%20b} becomes {@code /a%2520b}; {@code /} separators are kept; empty becomes {@code /}.
     */
    static String canonicalPath(String rawPath) {
        if (rawPath == null || rawPath.isEmpty()) {
            return "/";
        }
        return encode(rawPath.getBytes(StandardCharsets.UTF_8), true);
    }

    /**
     * Percent-decodes {@code s} into bytes. {@code +} is a literal plus, not a space. A {@code %} that is not
     * followed by two hex digits is kept literally, so decoding never fails.
     */
    static byte[] decode(String s) {
        byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
        ByteArrayOutputStream out = new ByteArrayOutputStream(utf8.length);
        for (int i = 0; i < utf8.length; i++) {
            byte b = utf8[i];
            if (b == '%' && i + 2 < utf8.length && hexValue(utf8[i + 1]) >= 0 && hexValue(utf8[i + 2]) >= 0) {
                out.write(hexValue(utf8[i + 1]) << 4 | hexValue(utf8[i + 2]));
                i += 2;
            } else {
                out.write(b);
            }
        }
        return out.toByteArray();
    }

    /** Percent-decodes {@code s} and reads the bytes as UTF-8 (malformed sequences become U+FFFD). */
    static String decodeToString(String s) {
        return new String(decode(s), StandardCharsets.UTF_8);
    }

    private static String encode(byte[] bytes, boolean keepSlash) {
        StringBuilder sb = new StringBuilder(bytes.length + 16);
        for (byte b : bytes) {
            int c = b & 0xFF;
            if (isUnreserved(c) || keepSlash && c == '/') {
                sb.append((char) c);
            } else {
                sb.append('%').append(HEX[c >>> 4]).append(HEX[c & 0xF]);
            }
        }
        return sb.toString();
    }

    private static boolean isUnreserved(int c) {
        return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
                || c == '-' || c == '_' || c == '.' || c == '~';
    }

    private static int hexValue(byte b) {
        if (b >= '0' && b <= '9') {
            return b - '0';
        }
        if (b >= 'A' && b <= 'F') {
            return b - 'A' + 10;
        }
        if (b >= 'a' && b <= 'f') {
            return b - 'a' + 10;
        }
        return -1;
    }
}
