package io.sluice.frontend.auth;

import io.sluice.common.SqsError;
import io.sluice.common.SqsException;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.time.format.ResolverStyle;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The SigV4 parameters of one request, read from its {@code Authorization} header or from its presigned query.
 * Parsing checks syntax only and throws {@link SqsException} with {@link SqsError#INCOMPLETE_SIGNATURE};
 * the meaning (scope, time, signature) is checked by {@link SigV4Verifier}.
 *
 * @param expiresSeconds {@code X-Amz-Expires} of a presigned request, {@code null} when absent
 */
record SigV4Params(String accessKeyId, String scopeDate, String region, String service, String terminator,
                   List<String> signedHeaders, String signature, String amzDate, Instant requestTime,
                   Long expiresSeconds, boolean presigned) {

    static final String X_AMZ_ALGORITHM = "X-Amz-Algorithm";
    static final String X_AMZ_CREDENTIAL = "X-Amz-Credential";
    static final String X_AMZ_DATE = "X-Amz-Date";
    static final String X_AMZ_SIGNED_HEADERS = "X-Amz-SignedHeaders";
    static final String X_AMZ_SIGNATURE = "X-Amz-Signature";
    static final String X_AMZ_EXPIRES = "X-Amz-Expires";

    static final DateTimeFormatter AMZ_DATE = DateTimeFormatter.ofPattern("uuuuMMdd'T'HHmmss'Z'", Locale.ROOT)
            .withZone(ZoneOffset.UTC).withResolverStyle(ResolverStyle.STRICT);

    private static final Pattern AMZ_DATE_SHAPE = Pattern.compile("[0-9]{8}T[0-9]{6}Z");
    private static final Pattern SIGNATURE_SHAPE = Pattern.compile("[0-9a-fA-F]{64}");
    private static final Pattern EXPIRES_SHAPE = Pattern.compile("[0-9]{1,7}");
    private static final int MAX_AUTHORIZATION_LENGTH = 8192;
    private static final int MAX_SIGNED_HEADERS = 64;
    private static final long MAX_EXPIRES_SECONDS = 604_800;
    private static final String QUERY_PARAMETERS_REQUIRED = "AWS query-string parameters must include '"
            + X_AMZ_ALGORITHM + "', '" + X_AMZ_CREDENTIAL + "', '" + X_AMZ_SIGNATURE + "', '" + X_AMZ_DATE + "', '"
            + X_AMZ_SIGNED_HEADERS + "'. Re-examine the query-string parameters.";

    /** {@code date/region/service/terminator}, as in the string to sign. */
    String scope() {
        return scopeDate + "/" + region + "/" + service + "/" + terminator;
    }

    /**
     * Parses the header form: {@code AWS4-HMAC-SHA256 Credential=..., SignedHeaders=..., Signature=...} with the
     * request time from the {@code X-Amz-Date} header values given.
     */
    static SigV4Params fromAuthorizationHeader(String authorization, List<String> amzDateHeader) {
        if (authorization.length() > MAX_AUTHORIZATION_LENGTH) {
            throw incomplete("Authorization header is too long.");
        }
        String header = authorization.strip();
        int space = indexOfWhitespace(header);
        String algorithm = space < 0 ? header : header.substring(0, space);
        if (!algorithm.equals(SigV4Crypto.ALGORITHM)) {
            throw incomplete("Unsupported AWS 'algorithm': " + quote(algorithm) + ".");
        }
        String rest = space < 0 ? "" : header.substring(space).strip();
        Map<String, String> components = new LinkedHashMap<>();
        for (String component : rest.isEmpty() ? new String[0] : rest.split(",", -1)) {
            String trimmed = component.strip();
            int eq = trimmed.indexOf('=');
            if (eq <= 0) {
                throw incomplete("Authorization header requires each component to be of the form name=value: "
                        + quote(trimmed) + ".");
            }
            String name = trimmed.substring(0, eq);
            if (!name.equals("Credential") && !name.equals("SignedHeaders") && !name.equals("Signature")) {
                throw incomplete("Authorization header has an unknown component " + quote(name) + ".");
            }
            if (components.put(name, trimmed.substring(eq + 1)) != null) {
                throw incomplete("Authorization header repeats the component " + quote(name) + ".");
            }
        }
        StringBuilder missing = new StringBuilder();
        for (String required : List.of("Credential", "Signature", "SignedHeaders")) {
            if (!components.containsKey(required)) {
                missing.append("Authorization header requires '").append(required).append("' parameter. ");
            }
        }
        if (amzDateHeader.isEmpty()) {
            missing.append("Authorization header requires existence of an 'X-Amz-Date' header. ");
        }
        if (missing.length() > 0) {
            throw incomplete(missing.toString().strip());
        }
        String amzDate = single(amzDateHeader, "X-Amz-Date header").strip();
        return build(components.get("Credential"), components.get("SignedHeaders"), components.get("Signature"),
                amzDate, null, false);
    }

    /** Parses the presigned query form ({@code X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=...}). */
    static SigV4Params fromQuery(QueryString query) {
        for (String name : List.of(X_AMZ_ALGORITHM, X_AMZ_CREDENTIAL, X_AMZ_SIGNATURE, X_AMZ_DATE,
                X_AMZ_SIGNED_HEADERS)) {
            if (query.values(name).isEmpty()) {
                throw incomplete(QUERY_PARAMETERS_REQUIRED);
            }
        }
        String algorithm = single(query.values(X_AMZ_ALGORITHM), X_AMZ_ALGORITHM);
        if (!algorithm.equals(SigV4Crypto.ALGORITHM)) {
            throw incomplete("Unsupported AWS 'algorithm': " + quote(algorithm) + ".");
        }
        Long expires = null;
        List<String> expiresValues = query.values(X_AMZ_EXPIRES);
        if (!expiresValues.isEmpty()) {
            expires = parseExpires(single(expiresValues, X_AMZ_EXPIRES));
        }
        return build(single(query.values(X_AMZ_CREDENTIAL), X_AMZ_CREDENTIAL),
                single(query.values(X_AMZ_SIGNED_HEADERS), X_AMZ_SIGNED_HEADERS),
                single(query.values(X_AMZ_SIGNATURE), X_AMZ_SIGNATURE),
                single(query.values(X_AMZ_DATE), X_AMZ_DATE), expires, true);
    }

    /** {@code yyyyMMdd'T'HHmmss'Z'} in UTC. */
    static String formatAmzDate(Instant instant) {
        return AMZ_DATE.format(instant);
    }

    /** {@code s} in single quotes, cut to 64 characters, with anything but printable ASCII shown as '?'. */
    static String quote(String s) {
        StringBuilder sb = new StringBuilder("'");
        int n = Math.min(s.length(), 64);
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            sb.append(c >= 0x20 && c < 0x7F ? c : '?');
        }
        return sb.append(s.length() > n ? "...'" : "'").toString();
    }

    private static SigV4Params build(String credential, String signedHeaders, String signature, String amzDate,
                                     Long expires, boolean presigned) {
        String[] scope = credential.split("/", -1);
        if (scope.length != 5 || Arrays.stream(scope).anyMatch(String::isEmpty)) {
            throw incomplete("Credential should be of the form "
                    + "'<access key id>/<yyyyMMdd>/<region>/<service>/aws4_request', got " + quote(credential) + ".");
        }
        Instant requestTime;
        try {
            if (!AMZ_DATE_SHAPE.matcher(amzDate).matches()) {
                throw new DateTimeParseException("not yyyyMMdd'T'HHmmss'Z'", amzDate, 0);
            }
            requestTime = AMZ_DATE.parse(amzDate, Instant::from);
        } catch (DateTimeParseException e) {
            throw incomplete("Date must be in ISO-8601 'basic format' (yyyyMMdd'T'HHmmss'Z'). Got " + quote(amzDate)
                    + ".");
        }
        if (!SIGNATURE_SHAPE.matcher(signature).matches()) {
            throw incomplete("Signature must be 64 hexadecimal digits.");
        }
        return new SigV4Params(scope[0], scope[1], scope[2], scope[3], scope[4], parseSignedHeaders(signedHeaders),
                signature.toLowerCase(Locale.ROOT), amzDate, requestTime, expires, presigned);
    }

    private static List<String> parseSignedHeaders(String signedHeaders) {
        String[] names = signedHeaders.split(";", -1);
        if (names.length > MAX_SIGNED_HEADERS) {
            throw incomplete("SignedHeaders lists more than " + MAX_SIGNED_HEADERS + " headers.");
        }
        List<String> list = new ArrayList<>(names.length);
        for (String name : names) {
            if (name.isEmpty() || indexOfWhitespace(name) >= 0) {
                throw incomplete("SignedHeaders must be a ';'-separated list of header names, got "
                        + quote(signedHeaders) + ".");
            }
            list.add(name);
        }
        if (!list.contains("host")) {
            throw incomplete("'Host' must be a 'SignedHeader' in the AWS Authorization.");
        }
        return List.copyOf(list);
    }

    private static long parseExpires(String value) {
        if (!EXPIRES_SHAPE.matcher(value).matches()) {
            throw incomplete("X-Amz-Expires must be a whole number of seconds, got " + quote(value) + ".");
        }
        long seconds = Long.parseLong(value);
        if (seconds < 1 || seconds > MAX_EXPIRES_SECONDS) {
            throw incomplete("X-Amz-Expires must be between 1 and " + MAX_EXPIRES_SECONDS + " seconds.");
        }
        return seconds;
    }

    private static String single(List<String> values, String what) {
        if (values.size() != 1) {
            throw incomplete(what + " must be given exactly once.");
        }
        return values.get(0);
    }

    private static int indexOfWhitespace(String s) {
        for (int i = 0; i < s.length(); i++) {
            if (Character.isWhitespace(s.charAt(i))) {
                return i;
            }
        }
        return -1;
    }

    private static SqsException incomplete(String message) {
        return new SqsException(SqsError.INCOMPLETE_SIGNATURE, message);
    }
}
