package io.sluice.frontend.http;

import java.util.List;
import java.util.function.Supplier;
import java.util.regex.Pattern;

/**
 * Which {@code X-Amzn-Trace-Id} becomes a sent message's {@code AWSTraceHeader}. The AWS SDKs and botocore leave that
 * header out of what they sign (tracing rewrites it in transit), so an unsigned one is taken only in X-Ray's own form
 * (whoever could change it in transit can then only point the message at another trace); a signed one up to
 * {@link #MAX_LENGTH} characters. Anything else is ignored, never stored (issue 42: an unsigned 10,000-character value
 * was).
 */
final class TraceHeader {
    /** An X-Ray trace header as X-Ray writes it: what an unsigned header may carry. */
    private static final Pattern XRAY = Pattern.compile(
            "Root=1-[0-9a-f]{8}-[0-9a-f]{24}(;(Parent=[0-9a-f]{16}|Sampled=[01?]|Self=1-[0-9a-f]{8}-[0-9a-f]{24}"
                    + "|Lineage=[0-9A-Za-z:-]{1,64}))*");
    /** The longest unsigned X-Ray header taken. */
    static final int MAX_XRAY_LENGTH = 256;
    /** The longest header taken at all. */
    static final int MAX_LENGTH = 1024;

    private TraceHeader() {
    }

    /**
     * @param value         the request's {@code X-Amzn-Trace-Id}, or null
     * @param authenticated whether the request's signature was checked (not {@code --no-auth})
     * @param signedHeaders the signed header names (lower case), read only when needed
     * @return the value to store, or null
     */
    static String accepted(String value, boolean authenticated, Supplier<List<String>> signedHeaders) {
        if (value == null || value.isEmpty() || value.length() > MAX_LENGTH) {
            return null;
        }
        if (value.length() <= MAX_XRAY_LENGTH && XRAY.matcher(value).matches()) {
            return value;
        }
        return authenticated && signedHeaders.get().contains("x-amzn-trace-id") ? value : null;
    }
}
