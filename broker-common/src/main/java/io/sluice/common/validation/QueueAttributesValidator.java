package io.sluice.common.validation;

import io.sluice.common.SqsError;
import io.sluice.common.SqsFailure;
import io.sluice.common.SqsLimits;
import io.sluice.common.Utf8;
import io.sluice.common.validation.QueueAttributes.DeduplicationScope;
import io.sluice.common.validation.QueueAttributes.FifoThroughputLimit;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Validates the attribute maps of CreateQueue and SetQueueAttributes (spec section 4) and produces the effective
 * {@link QueueAttributes}. Contract:
 * <ul>
 *   <li>All names are checked before any value, in the map's iteration order (pass the request's order);</li>
 *   <li>unknown and read-only names: {@code InvalidAttributeName "Unknown Attribute <X>."};</li>
 *   <li>FIFO-only names on a standard queue: {@code InvalidAttributeName}; bad values: {@code InvalidAttributeValue
 *       "Invalid value for the parameter <X>."}, except RedrivePolicy/RedriveAllowPolicy content problems, which
 *       are {@code InvalidParameterValue} (see {@link RedrivePolicy}, {@link RedriveAllowPolicy});</li>
 *   <li>an empty value removes {@code Policy}, {@code RedrivePolicy}, {@code RedriveAllowPolicy},
 *       {@code SluiceRedeliveryBackoff} and {@code KmsMasterKeyId}; booleans are {@code true}/{@code false} in any case.</li>
 * </ul>
 * The dead-letter target's type is checked here (a FIFO queue's ARN ends in {@code .fifo}); checks that need the
 * other queue itself (it exists, same account and region, its {@code RedriveAllowPolicy}) are the caller's.
 */
public final class QueueAttributesValidator {
    private static final String COMBINATION_REASON =
            "FifoThroughputLimit perMessageGroupId requires DeduplicationScope messageGroup.";
    private static final Pattern INTEGER = Pattern.compile("-?[0-9]{1,12}");

    private QueueAttributesValidator() {
    }

    /**
     * CreateQueue: the name (against the type {@code FifoQueue=true} asks for, see {@link QueueNames}) and then the
     * attributes, applied over {@link QueueAttributes#defaults(boolean)}. {@code attributes} may be null.
     */
    public static Validated<QueueAttributes> forCreate(String queueName, Map<String, String> attributes) {
        Map<String, String> attrs = attributes == null ? Map.of() : attributes;
        boolean fifo = "true".equalsIgnoreCase(attrs.get(QueueAttributeName.FIFO_QUEUE.wireName()));
        Optional<SqsFailure> badName = QueueNames.validate(queueName, fifo);
        if (badName.isPresent()) {
            return Validated.fail(badName.get());
        }
        return apply(QueueAttributes.defaults(fifo), attrs, true);
    }

    /** SetQueueAttributes: the attributes applied over the queue's current ones; at least one is required. */
    public static Validated<QueueAttributes> forSet(QueueAttributes current, Map<String, String> attributes) {
        if (attributes == null || attributes.isEmpty()) {
            return Validated.fail(SqsError.MISSING_PARAMETER.withMessage(
                    "The request must contain the parameter Attributes."));
        }
        return apply(current, attributes, false);
    }

    /**
     * CreateQueue of an existing name: fine when every rendered attribute matches (defaults included), else
     * {@code QueueAlreadyExists} naming the first differing attribute. Tags are not compared.
     */
    public static Optional<SqsFailure> checkSameAttributes(QueueAttributes existing, QueueAttributes requested) {
        return existing.firstDifference(requested).map(name -> SqsError.QUEUE_NAME_EXISTS.withMessage(
                "A queue already exists with the same name and a different value for attribute " + name));
    }

    /**
     * GetQueueAttributes names: each must be {@code All} or a known attribute (read-only ones included); names that
     * do not apply to the queue are not an error, they are simply not returned.
     */
    public static Optional<SqsFailure> checkGetAttributeNames(Collection<String> names) {
        for (String name : names) {
            if (!QueueAttributeName.ALL.equals(name) && QueueAttributeName.fromWireName(name).isEmpty()) {
                return Optional.of(unknownAttribute(name));
            }
        }
        return Optional.empty();
    }

    private static Validated<QueueAttributes> apply(QueueAttributes base, Map<String, String> attrs, boolean create) {
        for (String name : attrs.keySet()) {
            Optional<SqsFailure> bad = checkName(name, base.fifo());
            if (bad.isPresent()) {
                return Validated.fail(bad.get());
            }
        }
        QueueAttributes.Builder b = base.toBuilder();
        for (Map.Entry<String, String> e : attrs.entrySet()) {
            QueueAttributeName name = QueueAttributeName.fromWireName(e.getKey()).orElseThrow();
            Optional<SqsFailure> bad = applyValue(b, name, e.getValue(), create, base.fifo());
            if (bad.isPresent()) {
                return Validated.fail(bad.get());
            }
        }
        return combination(b, attrs);
    }

    private static Optional<SqsFailure> checkName(String wireName, boolean fifo) {
        Optional<QueueAttributeName> name = QueueAttributeName.fromWireName(wireName);
        if (name.isEmpty() || !name.get().settable()) {
            return Optional.of(unknownAttribute(wireName));
        }
        if (name.get().fifoOnly() && !fifo) {
            return Optional.of(switch (name.get()) {
                case DEDUPLICATION_SCOPE, FIFO_THROUGHPUT_LIMIT, SLUICE_REORDER_WINDOW_MILLIS -> SqsError.INVALID_ATTRIBUTE_NAME.withMessage(
                        "You can specify the " + wireName + " only when FifoQueue is set to true.");
                default -> unknownAttribute(wireName);
            });
        }
        return Optional.empty();
    }

    private static Optional<SqsFailure> applyValue(QueueAttributes.Builder b, QueueAttributeName name, String value,
            boolean create, boolean fifo) {
        if (name.isInteger()) {
            if (value == null || !INTEGER.matcher(value).matches() || !name.inRange(Long.parseLong(value))) {
                return invalidValue(name);
            }
            b.integer(name, Integer.parseInt(value));
            return Optional.empty();
        }
        switch (name) {
            case FIFO_QUEUE -> {
                // Only reached on FIFO queues; the type itself never changes.
                Optional<Boolean> flag = parseBoolean(value);
                if (flag.isEmpty()) {
                    return invalidValue(name);
                }
                if (!flag.get() && !create) {
                    return Optional.of(SqsError.INVALID_ATTRIBUTE_VALUE.withMessage("Invalid value for the parameter"
                            + " FifoQueue. Reason: Modifying queue type is not supported."));
                }
                return Optional.empty();
            }
            case CONTENT_BASED_DEDUPLICATION, SQS_MANAGED_SSE_ENABLED, SLUICE_AUTO_SPLIT -> {
                Optional<Boolean> flag = parseBoolean(value);
                if (flag.isEmpty()) {
                    return invalidValue(name);
                }
                switch (name) {
                    case CONTENT_BASED_DEDUPLICATION -> b.contentBasedDeduplication(flag.get());
                    case SQS_MANAGED_SSE_ENABLED -> b.sqsManagedSseEnabled(flag.get());
                    default -> b.autoSplit(flag.get());
                }
                return Optional.empty();
            }
            case DEDUPLICATION_SCOPE -> {
                Optional<DeduplicationScope> scope = DeduplicationScope.fromWireName(value);
                scope.ifPresent(b::deduplicationScope);
                return scope.isPresent() ? Optional.empty() : invalidValue(name);
            }
            case FIFO_THROUGHPUT_LIMIT -> {
                Optional<FifoThroughputLimit> limit = FifoThroughputLimit.fromWireName(value);
                limit.ifPresent(b::fifoThroughputLimit);
                return limit.isPresent() ? Optional.empty() : invalidValue(name);
            }
            case POLICY -> {
                if (isEmpty(value)) {
                    b.policy(null);
                    return Optional.empty();
                }
                if (Utf8.length(value) > SqsLimits.MAX_POLICY_BYTES || Json.parseObject(value).isEmpty()) {
                    return invalidValue(name);
                }
                b.policy(value);
                return Optional.empty();
            }
            case REDRIVE_POLICY -> {
                if (isEmpty(value)) {
                    b.redrivePolicy(null);
                    return Optional.empty();
                }
                Validated<RedrivePolicy> policy = RedrivePolicy.parse(value);
                if (policy.isOk() && policy.value().targetArn().orElseThrow().isFifo() != fifo) {
                    return Optional.of(RedrivePolicy.failure(value,
                            "Dead-letter queue must be same type of queue as the source."));
                }
                if (policy.isOk()) {
                    b.redrivePolicy(policy.value());
                }
                return policy.failure();
            }
            case REDRIVE_ALLOW_POLICY -> {
                if (isEmpty(value)) {
                    b.redriveAllowPolicy(null);
                    return Optional.empty();
                }
                Validated<RedriveAllowPolicy> policy = RedriveAllowPolicy.parse(value);
                if (policy.isOk()) {
                    b.redriveAllowPolicy(policy.value());
                }
                return policy.failure();
            }
            case SLUICE_REDELIVERY_BACKOFF -> {
                if (isEmpty(value)) {
                    b.redeliveryBackoff(null);
                    return Optional.empty();
                }
                Validated<RedeliveryBackoff> backoff = RedeliveryBackoff.parse(value);
                if (backoff.isOk()) {
                    b.redeliveryBackoff(backoff.value());
                }
                return backoff.failure();
            }
            case KMS_MASTER_KEY_ID -> {
                b.kmsMasterKeyId(isEmpty(value) ? null : value);
                return Optional.empty();
            }
            default -> throw new IllegalStateException("unhandled settable attribute " + name);
        }
    }

    /**
     * {@code FifoThroughputLimit=perMessageGroupId} needs {@code DeduplicationScope=messageGroup} (checked on the
     * effective values). The error names FifoThroughputLimit when the request set it, else DeduplicationScope.
     */
    private static Validated<QueueAttributes> combination(QueueAttributes.Builder b, Map<String, String> attrs) {
        if (b.fifoThroughputLimit() == FifoThroughputLimit.PER_MESSAGE_GROUP_ID
                && b.deduplicationScope() != DeduplicationScope.MESSAGE_GROUP) {
            QueueAttributeName blamed = attrs.containsKey(QueueAttributeName.FIFO_THROUGHPUT_LIMIT.wireName())
                    ? QueueAttributeName.FIFO_THROUGHPUT_LIMIT : QueueAttributeName.DEDUPLICATION_SCOPE;
            return Validated.fail(SqsError.INVALID_ATTRIBUTE_VALUE.withMessage("Invalid value for the parameter "
                    + blamed.wireName() + ". Reason: " + COMBINATION_REASON));
        }
        return Validated.ok(b.build());
    }

    private static Optional<Boolean> parseBoolean(String value) {
        if ("true".equalsIgnoreCase(value)) {
            return Optional.of(true);
        }
        if ("false".equalsIgnoreCase(value)) {
            return Optional.of(false);
        }
        return Optional.empty();
    }

    private static boolean isEmpty(String value) {
        return value == null || value.isEmpty();
    }

    private static SqsFailure unknownAttribute(String name) {
        return SqsError.INVALID_ATTRIBUTE_NAME.withMessage("Unknown Attribute " + name + ".");
    }

    private static Optional<SqsFailure> invalidValue(QueueAttributeName name) {
        return Optional.of(SqsError.INVALID_ATTRIBUTE_VALUE.withMessage(
                "Invalid value for the parameter " + name.wireName() + "."));
    }
}
