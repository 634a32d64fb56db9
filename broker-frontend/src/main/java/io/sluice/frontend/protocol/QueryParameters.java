package io.sluice.frontend.protocol;

import io.sluice.common.SqsError;
import io.sluice.common.SqsException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/** Query protocol parameters: the URL query string merged with a form body (body values win). */
public final class QueryParameters {
    private QueryParameters() {
    }

    public static Map<String, String> decode(String rawQuery, byte[] body, String contentType) {
        Map<String, String> params = new LinkedHashMap<>();
        if (body.length > 0 && (contentType == null
                || contentType.toLowerCase(Locale.ROOT).startsWith("application/x-www-form-urlencoded"))) {
            FormDecoder.decode(asciiOrUtf8(body), params);
        }
        FormDecoder.decode(rawQuery, params);
        return params;
    }

    private static String asciiOrUtf8(byte[] body) {
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(body)).toString();
        } catch (CharacterCodingException e) {
            throw new SqsException(SqsError.INVALID_PARAMETER_VALUE, "The request contains invalid UTF-8.");
        }
    }
}
