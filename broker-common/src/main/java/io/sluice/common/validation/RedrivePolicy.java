package io.sluice.common.validation;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sluice.common.SqsError;
import io.sluice.common.SqsFailure;
import io.sluice.common.SqsLimits;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The {@code RedrivePolicy} queue attribute: {@code {"deadLetterTargetArn":"<arn>","maxReceiveCount":<1-1000>}}.
 * {@code maxReceiveCount} may arrive as a JSON number or a string of digits; it is always rendered as a number.
 * Parse failures are {@code InvalidParameterValue} (spec SetQueueAttributes, localstack-style texts).
 */
public record RedrivePolicy(String deadLetterTargetArn, int maxReceiveCount) {
    static final String DEAD_LETTER_TARGET_ARN = "deadLetterTargetArn";
    static final String MAX_RECEIVE_COUNT = "maxReceiveCount";
    private static final Pattern DIGITS = Pattern.compile("[0-9]{1,9}");

    public RedrivePolicy {
        Objects.requireNonNull(deadLetterTargetArn, "deadLetterTargetArn");
        if (maxReceiveCount < SqsLimits.MIN_MAX_RECEIVE_COUNT || maxReceiveCount > SqsLimits.MAX_MAX_RECEIVE_COUNT) {
            throw new IllegalArgumentException("maxReceiveCount out of range: " + maxReceiveCount);
        }
    }

    /** Parses the attribute value; the empty string (removal) is the caller's concern and fails here. */
    public static Validated<RedrivePolicy> parse(String raw) {
        Optional<ObjectNode> parsed = Json.parseObject(raw);
        if (parsed.isEmpty()) {
            return Validated.fail(SqsError.INVALID_PARAMETER_VALUE.withMessage(
                    "Invalid value for the parameter RedrivePolicy. Reason: Redrive policy is not a valid JSON map."));
        }
        ObjectNode json = parsed.get();
        if (!json.has(MAX_RECEIVE_COUNT)) {
            return invalid(raw, "Redrive policy does not contain mandatory attribute: " + MAX_RECEIVE_COUNT + ".");
        }
        if (!json.has(DEAD_LETTER_TARGET_ARN)) {
            return invalid(raw, "Redrive policy does not contain mandatory attribute: " + DEAD_LETTER_TARGET_ARN + ".");
        }
        if (json.size() > 2) {
            return invalid(raw, "Only following attributes are supported: [deadLetterTargetArn, maxReceiveCount].");
        }
        JsonNode count = json.get(MAX_RECEIVE_COUNT);
        int maxReceiveCount = receiveCount(count);
        if (maxReceiveCount < SqsLimits.MIN_MAX_RECEIVE_COUNT || maxReceiveCount > SqsLimits.MAX_MAX_RECEIVE_COUNT) {
            return invalid(raw, "Invalid value for maxReceiveCount: " + (count.isTextual() ? count.asText() : count)
                    + ", valid values are from 1 to 1000 both inclusive.");
        }
        JsonNode arn = json.get(DEAD_LETTER_TARGET_ARN);
        if (!arn.isTextual() || QueueArn.parse(arn.asText()).isEmpty()) {
            return invalid(raw, "Dead-letter target ARN should be fully qualified ARN.");
        }
        return Validated.ok(new RedrivePolicy(arn.asText(), maxReceiveCount));
    }

    /** The target as a parsed ARN (always well-formed once constructed through {@link #parse}). */
    public Optional<QueueArn> targetArn() {
        return QueueArn.parse(deadLetterTargetArn);
    }

    /** Compact JSON with {@code maxReceiveCount} as a number. */
    public String toJson() {
        ObjectNode json = Json.newObject();
        json.put(DEAD_LETTER_TARGET_ARN, deadLetterTargetArn);
        json.put(MAX_RECEIVE_COUNT, maxReceiveCount);
        return Json.write(json);
    }

    /** The integral count, or -1 when the node is not an integer (number or digit string) in int range. */
    private static int receiveCount(JsonNode node) {
        if (node.isIntegralNumber() && node.canConvertToInt()) {
            return node.intValue();
        }
        if (node.isTextual() && DIGITS.matcher(node.asText()).matches()) {
            return Integer.parseInt(node.asText());
        }
        return -1;
    }

    private static Validated<RedrivePolicy> invalid(String raw, String reason) {
        return Validated.fail(failure(raw, reason));
    }

    static SqsFailure failure(String raw, String reason) {
        return SqsError.INVALID_PARAMETER_VALUE.withMessage(
                "Value " + raw + " for parameter RedrivePolicy is invalid. Reason: " + reason);
    }
}
