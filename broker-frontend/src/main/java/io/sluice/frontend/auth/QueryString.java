package io.sluice.frontend.auth;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Collectors;

/**
 * A raw (wire) query string split into parameters. Each parameter is kept decoded, for reading
 * {@code X-Amz-*} values, and re-encoded with {@link UriEncoding}, for the SigV4 canonical query string.
 * A {@code +} is a space, as the Query protocol's parameter parser reads it (form encoding), and canonicalises to
 * {@code %20}: the signature covers the value the action gets. (Read as a literal plus, a presigned URL whose
 * {@code %2B} was changed to {@code +} kept its signature but gave the action a space: issue 42.) Signers encode a
 * plus as {@code %2B} and a space as {@code %20}, so a signed URL never needs a raw {@code +}.
 */
final class QueryString {
    /** One {@code name=value} pair; a piece without {@code =} has the empty value. */
    record Parameter(String name, String value, String canonicalName, String canonicalValue) {
    }

    private static final Comparator<Parameter> CANONICAL_ORDER =
            Comparator.comparing(Parameter::canonicalName).thenComparing(Parameter::canonicalValue);

    private final List<Parameter> parameters;

    private QueryString(List<Parameter> parameters) {
        this.parameters = parameters;
    }

    /** Parses {@code rawQuery} (without the leading {@code ?}); {@code null} or empty gives no parameters. */
    static QueryString parse(String rawQuery) {
        List<Parameter> parameters = new ArrayList<>();
        if (rawQuery != null && !rawQuery.isEmpty()) {
            for (String piece : rawQuery.split("&", -1)) {
                if (piece.isEmpty()) {
                    continue;
                }
                int eq = piece.indexOf('=');
                String rawName = (eq < 0 ? piece : piece.substring(0, eq)).replace("+", "%20");
                String rawValue = (eq < 0 ? "" : piece.substring(eq + 1)).replace("+", "%20");
                byte[] name = UriEncoding.decode(rawName);
                byte[] value = UriEncoding.decode(rawValue);
                parameters.add(new Parameter(UriEncoding.decodeToString(rawName), UriEncoding.decodeToString(rawValue),
                        UriEncoding.encode(name), UriEncoding.encode(value)));
            }
        }
        return new QueryString(List.copyOf(parameters));
    }

    /** Decoded values of every parameter whose decoded name equals {@code name} (case-sensitive), in order. */
    List<String> values(String name) {
        List<String> values = new ArrayList<>(1);
        for (Parameter p : parameters) {
            if (p.name().equals(name)) {
                values.add(p.value());
            }
        }
        return values;
    }

    boolean contains(String name) {
        return parameters.stream().anyMatch(p -> p.name().equals(name));
    }

    /**
     * The SigV4 canonical query string: encoded {@code name=value} pairs sorted by name then value, joined by
     * {@code &}, leaving out parameters named {@code excludedName} (may be {@code null}).
     */
    String canonical(String excludedName) {
        return parameters.stream()
                .filter(p -> !p.name().equals(excludedName))
                .sorted(CANONICAL_ORDER)
                .map(p -> p.canonicalName() + "=" + p.canonicalValue())
                .collect(Collectors.joining("&"));
    }
}
