package io.sluice.common.validation;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sluice.common.SqsError;
import io.sluice.common.SqsFailure;
import io.sluice.common.SqsLimits;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;

/**
 * The {@code SluiceRedeliveryBackoff} queue attribute (a Sluice extension, a JSON string like RedrivePolicy):
 * {@code {"initialSeconds": 1, "multiplier": 2, "maxSeconds": 900, "jitter": "full"}}. When a received message's
 * visibility timeout runs out without a delete, the message becomes visible again only after
 * {@code d = min(maxSeconds, initialSeconds * multiplier^(receiveCount - 1))} more seconds, jittered:
 * {@code none} waits d, {@code full} a uniform time in [0, d], {@code equal} d/2 plus a uniform time in [0, d/2].
 *
 * <p>{@code initialSeconds} (0-43200) is required; {@code multiplier} (1-10, may be fractional) defaults to 2,
 * {@code maxSeconds} (initialSeconds-43200) to 900, {@code jitter} to {@code full}. Numbers may arrive as JSON
 * numbers or strings of digits. Failures are {@code InvalidAttributeValue} naming the field.
 */
public record RedeliveryBackoff(int initialSeconds, double multiplier, int maxSeconds, Jitter jitter) {
    static final String INITIAL_SECONDS = "initialSeconds";
    static final String MULTIPLIER = "multiplier";
    static final String MAX_SECONDS = "maxSeconds";
    static final String JITTER = "jitter";
    private static final Set<String> FIELDS = Set.of(INITIAL_SECONDS, MULTIPLIER, MAX_SECONDS, JITTER);
    static final int MAX_BACKOFF_SECONDS = SqsLimits.MAX_VISIBILITY_TIMEOUT_SECONDS; // 12 hours, as a lease
    static final double MAX_MULTIPLIER = 10;
    static final double DEFAULT_MULTIPLIER = 2;
    static final int DEFAULT_MAX_SECONDS = 900;

    /** How the wait is spread: so that workers that failed together do not all retry together. */
    public enum Jitter {
        NONE, FULL, EQUAL;

        public String wireName() {
            return name().toLowerCase(Locale.ROOT);
        }

        static Optional<Jitter> fromWireName(String name) {
            for (Jitter j : values()) {
                if (j.wireName().equals(name)) {
                    return Optional.of(j);
                }
            }
            return Optional.empty();
        }
    }

    public RedeliveryBackoff {
        if (initialSeconds < 0 || initialSeconds > MAX_BACKOFF_SECONDS || maxSeconds < initialSeconds
                || maxSeconds > MAX_BACKOFF_SECONDS || !(multiplier >= 1 && multiplier <= MAX_MULTIPLIER)
                || jitter == null) {
            throw new IllegalArgumentException("invalid redelivery backoff " + initialSeconds + "/" + multiplier + "/"
                    + maxSeconds + "/" + jitter);
        }
    }

    /**
     * The wait before the {@code receiveCount}-th receive's lapsed message is visible again, in milliseconds.
     *
     * @param unit a number in [0, 1) that picks the jittered point; the engine derives it from the message and its
     *             receive count, so every replica computes the same wait
     */
    public long delayMillis(int receiveCount, double unit) {
        // StrictMath: the same bits on every JVM and CPU, so that replicas store the same deadline
        double seconds = Math.min(maxSeconds,
                initialSeconds * StrictMath.pow(multiplier, Math.max(0, receiveCount - 1)));
        double millis = seconds * 1000;
        double jittered = switch (jitter) {
            case NONE -> millis;
            case FULL -> unit * millis;
            case EQUAL -> millis / 2 + unit * millis / 2;
        };
        return (long) jittered;
    }

    /** Parses the attribute value; the empty string (removal) is the caller's concern and fails here. */
    public static Validated<RedeliveryBackoff> parse(String raw) {
        Optional<ObjectNode> parsed = Json.parseObject(raw);
        if (parsed.isEmpty()) {
            return invalid("the value is not a JSON object");
        }
        ObjectNode json = parsed.get();
        for (var names = json.fieldNames(); names.hasNext(); ) {
            String name = names.next();
            if (!FIELDS.contains(name)) {
                return invalid("unknown field " + name + " (known: initialSeconds, multiplier, maxSeconds, jitter)");
            }
        }
        if (!json.has(INITIAL_SECONDS)) {
            return invalid(INITIAL_SECONDS + " is required");
        }
        long initial = integer(json.get(INITIAL_SECONDS));
        if (initial < 0 || initial > MAX_BACKOFF_SECONDS) {
            return invalid(INITIAL_SECONDS + " must be an integer from 0 to " + MAX_BACKOFF_SECONDS);
        }
        double multiplier = DEFAULT_MULTIPLIER;
        if (json.has(MULTIPLIER)) {
            multiplier = number(json.get(MULTIPLIER));
            if (!(multiplier >= 1 && multiplier <= MAX_MULTIPLIER)) {
                return invalid(MULTIPLIER + " must be a number from 1 to 10");
            }
        }
        long max = DEFAULT_MAX_SECONDS;
        if (json.has(MAX_SECONDS)) {
            max = integer(json.get(MAX_SECONDS));
            if (max < 0 || max > MAX_BACKOFF_SECONDS) {
                return invalid(MAX_SECONDS + " must be an integer up to " + MAX_BACKOFF_SECONDS);
            }
        }
        if (max < initial) {
            return invalid(MAX_SECONDS + " (" + max + (json.has(MAX_SECONDS) ? "" : " by default")
                    + ") must not be below initialSeconds (" + initial + ")");
        }
        Jitter jitter = Jitter.FULL;
        if (json.has(JITTER)) {
            JsonNode j = json.get(JITTER);
            Optional<Jitter> named = j.isTextual() ? Jitter.fromWireName(j.asText()) : Optional.empty();
            if (named.isEmpty()) {
                return invalid(JITTER + " must be one of none, full, equal");
            }
            jitter = named.get();
        }
        return Validated.ok(new RedeliveryBackoff((int) initial, multiplier, (int) max, jitter));
    }

    /** Compact JSON with every field, numbers as numbers (what GetQueueAttributes answers). */
    public String toJson() {
        ObjectNode json = Json.newObject();
        json.put(INITIAL_SECONDS, initialSeconds);
        if (multiplier == Math.rint(multiplier)) {
            json.put(MULTIPLIER, (int) multiplier);
        } else {
            json.put(MULTIPLIER, multiplier);
        }
        json.put(MAX_SECONDS, maxSeconds);
        json.put(JITTER, jitter.wireName());
        return Json.write(json);
    }

    /** An integral JSON number or digit string, or -1. */
    private static long integer(JsonNode node) {
        if (node.isIntegralNumber() && node.canConvertToLong()) {
            return node.longValue();
        }
        if (node.isTextual() && node.asText().matches("[0-9]{1,9}")) {
            return Long.parseLong(node.asText());
        }
        return -1;
    }

    /** A finite JSON number or numeric string, or NaN. */
    private static double number(JsonNode node) {
        if (node.isNumber()) {
            return node.doubleValue();
        }
        if (node.isTextual() && node.asText().matches("[0-9]{1,5}(\\.[0-9]{1,9})?")) {
            return Double.parseDouble(node.asText());
        }
        return Double.NaN;
    }

    private static Validated<RedeliveryBackoff> invalid(String reason) {
        return Validated.fail(failure(reason));
    }

    static SqsFailure failure(String reason) {
        return SqsError.INVALID_ATTRIBUTE_VALUE.withMessage(
                "Invalid value for the parameter SluiceRedeliveryBackoff. Reason: " + reason + ".");
    }
}
