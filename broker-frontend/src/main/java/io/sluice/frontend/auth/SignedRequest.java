package io.sluice.frontend.auth;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * What SigV4 verification needs from an HTTP request, independent of the HTTP stack.
 *
 * @param method     the request method as sent, e.g. {@code POST}
 * @param rawPath    the path exactly as on the wire (still percent-encoded), without the query
 * @param rawQuery   the query string exactly as on the wire, without {@code ?}; {@code null} when absent
 * @param headers    header values by lower-case name, in arrival order; names given in any case are
 *                   lower-cased and merged
 * @param bodySha256 lower-case hex SHA-256 of the raw body bytes (of the empty body when there is none)
 */
public record SignedRequest(String method, String rawPath, String rawQuery, Map<String, List<String>> headers,
                            String bodySha256) {
    private static final Pattern SHA256_HEX = Pattern.compile("[0-9a-f]{64}");

    public SignedRequest {
        Objects.requireNonNull(method, "method");
        rawPath = rawPath == null ? "" : rawPath;
        headers = normalize(Objects.requireNonNull(headers, "headers"));
        bodySha256 = Objects.requireNonNull(bodySha256, "bodySha256").toLowerCase(Locale.ROOT);
        if (!SHA256_HEX.matcher(bodySha256).matches()) {
            throw new IllegalArgumentException("bodySha256 must be 64 hex digits");
        }
    }

    /** A request whose body hash is computed from {@code body} ({@code null} means empty). */
    public static SignedRequest of(String method, String rawPath, String rawQuery, Map<String, List<String>> headers,
                                   byte[] body) {
        return new SignedRequest(method, rawPath, rawQuery, headers,
                SigV4Crypto.sha256Hex(body == null ? new byte[0] : body));
    }

    /** All values of the header {@code name} (any case); empty when absent. */
    public List<String> header(String name) {
        return headers.getOrDefault(name.toLowerCase(Locale.ROOT), List.of());
    }

    private static Map<String, List<String>> normalize(Map<String, List<String>> raw) {
        Map<String, List<String>> merged = new LinkedHashMap<>();
        raw.forEach((name, values) -> {
            if (name != null && values != null) {
                List<String> target = merged.computeIfAbsent(name.toLowerCase(Locale.ROOT), k -> new ArrayList<>());
                values.stream().filter(Objects::nonNull).forEach(target::add);
            }
        });
        merged.replaceAll((name, values) -> List.copyOf(values));
        return Collections.unmodifiableMap(merged);
    }
}
