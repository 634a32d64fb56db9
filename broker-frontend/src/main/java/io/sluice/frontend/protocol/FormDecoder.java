package io.sluice.frontend.protocol;

import io.sluice.common.SqsError;
import io.sluice.common.SqsException;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Strict {@code application/x-www-form-urlencoded} decoding: '+' is a space, {@code %XX} a byte, and the bytes
 * must be valid UTF-8. A malformed escape or invalid UTF-8 is rejected, never silently replaced, so a message
 * body is stored exactly as the client meant it or not at all.
 */
final class FormDecoder {
    /** Upper bound on distinct parameters: 10 batch entries with 10 attributes each is far below it. */
    static final int MAX_PARAMETERS = 2_000;

    private FormDecoder() {
    }

    /** Decodes into {@code out}; a repeated name keeps its first value. */
    static void decode(String text, Map<String, String> out) {
        if (text == null || text.isEmpty()) {
            return;
        }
        int start = 0;
        while (start <= text.length()) {
            int amp = text.indexOf('&', start);
            int end = amp < 0 ? text.length() : amp;
            if (end > start) {
                int eq = text.indexOf('=', start);
                String name;
                String value;
                if (eq < 0 || eq > end) {
                    name = component(text, start, end);
                    value = "";
                } else {
                    name = component(text, start, eq);
                    value = component(text, eq + 1, end);
                }
                out.putIfAbsent(name, value);
                if (out.size() > MAX_PARAMETERS) {
                    throw new SqsException(SqsError.MALFORMED_REQUEST, "Too many parameters in the request.");
                }
            }
            if (amp < 0) {
                break;
            }
            start = amp + 1;
        }
    }

    static Map<String, String> decode(String text) {
        Map<String, String> out = new LinkedHashMap<>();
        decode(text, out);
        return out;
    }

    private static String component(String s, int from, int to) {
        boolean plain = true;
        for (int i = from; i < to; i++) {
            char c = s.charAt(i);
            if (c == '%' || c == '+' || c > 0x7F) {
                plain = false;
                break;
            }
        }
        if (plain) {
            return s.substring(from, to);
        }
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(to - from);
        for (int i = from; i < to; i++) {
            char c = s.charAt(i);
            if (c == '+') {
                bytes.write(' ');
            } else if (c == '%') {
                if (i + 2 >= to) {
                    throw malformed();
                }
                int hi = Character.digit(s.charAt(i + 1), 16);
                int lo = Character.digit(s.charAt(i + 2), 16);
                if (hi < 0 || lo < 0) {
                    throw malformed();
                }
                bytes.write(hi << 4 | lo);
                i += 2;
            } else if (c < 0x80) {
                bytes.write(c);
            } else {
                // Raw non-ASCII in a form body: take it as the UTF-8 the client sent.
                byte[] encoded = String.valueOf(c).getBytes(StandardCharsets.UTF_8);
                if (Character.isHighSurrogate(c) && i + 1 < to) {
                    encoded = s.substring(i, i + 2).getBytes(StandardCharsets.UTF_8);
                    i++;
                }
                bytes.write(encoded, 0, encoded.length);
            }
        }
        try {
            return StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes.toByteArray())).toString();
        } catch (CharacterCodingException e) {
            throw new SqsException(SqsError.INVALID_PARAMETER_VALUE, "The request contains invalid UTF-8.");
        }
    }

    private static SqsException malformed() {
        return new SqsException(SqsError.MALFORMED_REQUEST, "The request contains a malformed percent-encoding.");
    }
}
