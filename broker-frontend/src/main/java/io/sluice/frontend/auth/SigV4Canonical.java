package io.sluice.frontend.auth;

import java.util.List;

/** Builds the SigV4 canonical request and string to sign (spec section 9, steps 2 and 3). */
final class SigV4Canonical {
    private SigV4Canonical() {
    }

    /**
     * {@code METHOD \n canonical URI \n canonical query \n canonical headers \n signed headers \n payload hash},
     * where the canonical headers block ends with its own newline.
     */
    static String canonicalRequest(SignedRequest request, String canonicalQuery, List<String> signedHeaders,
                                   String payloadHash) {
        StringBuilder sb = new StringBuilder(256);
        sb.append(request.method()).append('\n')
                .append(UriEncoding.canonicalPath(request.rawPath())).append('\n')
                .append(canonicalQuery).append('\n');
        for (String name : signedHeaders) {
            sb.append(name).append(':');
            List<String> values = request.header(name);
            for (int i = 0; i < values.size(); i++) {
                if (i > 0) {
                    sb.append(',');
                }
                appendNormalized(sb, values.get(i));
            }
            sb.append('\n');
        }
        sb.append('\n').append(String.join(";", signedHeaders)).append('\n').append(payloadHash);
        return sb.toString();
    }

    /** {@code AWS4-HMAC-SHA256 \n X-Amz-Date \n scope \n hex(sha256(canonical request))}. */
    static String stringToSign(String amzDate, String scope, String canonicalRequest) {
        return SigV4Crypto.ALGORITHM + '\n' + amzDate + '\n' + scope + '\n' + SigV4Crypto.sha256Hex(canonicalRequest);
    }

    /** Appends {@code value} trimmed, with each inner run of whitespace collapsed to one space. */
    private static void appendNormalized(StringBuilder sb, String value) {
        boolean pendingSpace = false;
        boolean started = false;
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (isWhitespace(c)) {
                pendingSpace = started;
            } else {
                if (pendingSpace) {
                    sb.append(' ');
                    pendingSpace = false;
                }
                sb.append(c);
                started = true;
            }
        }
    }

    private static boolean isWhitespace(char c) {
        return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == 0x0B;
    }
}
