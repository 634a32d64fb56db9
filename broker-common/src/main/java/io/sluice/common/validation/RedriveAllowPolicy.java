package io.sluice.common.validation;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sluice.common.SqsError;
import io.sluice.common.SqsLimits;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The {@code RedriveAllowPolicy} queue attribute of a (potential) dead-letter queue:
 * {@code {"redrivePermission":"allowAll|denyAll|byQueue","sourceQueueArns":[...]}}. {@code sourceQueueArns} is
 * required with {@code byQueue} (1 to 10 well-formed queue ARNs) and forbidden otherwise. An unset policy means
 * {@code allowAll}. Parse failures are {@code InvalidParameterValue}.
 */
public record RedriveAllowPolicy(Permission permission, List<String> sourceQueueArns) {
    static final String REDRIVE_PERMISSION = "redrivePermission";
    static final String SOURCE_QUEUE_ARNS = "sourceQueueArns";

    public enum Permission {
        ALLOW_ALL("allowAll"), DENY_ALL("denyAll"), BY_QUEUE("byQueue");

        private final String wireName;

        Permission(String wireName) {
            this.wireName = wireName;
        }

        public String wireName() {
            return wireName;
        }

        static Optional<Permission> fromWireName(String name) {
            for (Permission p : values()) {
                if (p.wireName.equals(name)) {
                    return Optional.of(p);
                }
            }
            return Optional.empty();
        }
    }

    public static final RedriveAllowPolicy ALLOW_ALL = new RedriveAllowPolicy(Permission.ALLOW_ALL, List.of());

    public RedriveAllowPolicy {
        Objects.requireNonNull(permission, "permission");
        sourceQueueArns = List.copyOf(sourceQueueArns);
        if ((permission == Permission.BY_QUEUE) == sourceQueueArns.isEmpty()) {
            throw new IllegalArgumentException("sourceQueueArns must be non-empty exactly for byQueue");
        }
    }

    /** Whether a queue with this ARN may use the owning queue as its dead-letter queue. */
    public boolean permits(String sourceQueueArn) {
        return switch (permission) {
            case ALLOW_ALL -> true;
            case DENY_ALL -> false;
            case BY_QUEUE -> sourceQueueArns.contains(sourceQueueArn);
        };
    }

    /** Parses the attribute value; the empty string (removal) is the caller's concern and fails here. */
    public static Validated<RedriveAllowPolicy> parse(String raw) {
        Optional<ObjectNode> parsed = Json.parseObject(raw);
        if (parsed.isEmpty()) {
            return Validated.fail(SqsError.INVALID_PARAMETER_VALUE.withMessage("Invalid value for the parameter"
                    + " RedriveAllowPolicy. Reason: Redrive allow policy is not a valid JSON map."));
        }
        ObjectNode json = parsed.get();
        for (Iterator<String> it = json.fieldNames(); it.hasNext(); ) {
            String field = it.next();
            if (!field.equals(REDRIVE_PERMISSION) && !field.equals(SOURCE_QUEUE_ARNS)) {
                return invalid(raw, "Only following attributes are supported: [redrivePermission, sourceQueueArns].");
            }
        }
        JsonNode permissionNode = json.get(REDRIVE_PERMISSION);
        if (permissionNode == null) {
            return invalid(raw, "Redrive allow policy does not contain mandatory attribute: redrivePermission.");
        }
        Optional<Permission> permission = permissionNode.isTextual()
                ? Permission.fromWireName(permissionNode.asText()) : Optional.empty();
        if (permission.isEmpty()) {
            return invalid(raw, "Invalid value for redrivePermission: "
                    + (permissionNode.isTextual() ? permissionNode.asText() : permissionNode)
                    + ", valid values are allowAll, denyAll and byQueue.");
        }
        JsonNode arnsNode = json.get(SOURCE_QUEUE_ARNS);
        if (permission.get() != Permission.BY_QUEUE) {
            return arnsNode == null ? Validated.ok(new RedriveAllowPolicy(permission.get(), List.of()))
                    : invalid(raw, "sourceQueueArns can be specified only when redrivePermission is byQueue.");
        }
        if (!(arnsNode instanceof ArrayNode arns) || arns.isEmpty()) {
            return invalid(raw, "byQueue redrivePermission requires a non-empty sourceQueueArns list.");
        }
        if (arns.size() > SqsLimits.MAX_REDRIVE_ALLOW_SOURCE_ARNS) {
            return invalid(raw, "Too many sourceQueueArns: " + arns.size() + ", at most "
                    + SqsLimits.MAX_REDRIVE_ALLOW_SOURCE_ARNS + " are allowed.");
        }
        List<String> list = new ArrayList<>(arns.size());
        for (JsonNode arn : arns) {
            if (!arn.isTextual() || QueueArn.parse(arn.asText()).isEmpty()) {
                return invalid(raw, "Source queue ARN should be fully qualified ARN: " + arn + ".");
            }
            list.add(arn.asText());
        }
        return Validated.ok(new RedriveAllowPolicy(Permission.BY_QUEUE, list));
    }

    /** Compact JSON; {@code sourceQueueArns} only for {@code byQueue}. */
    public String toJson() {
        ObjectNode json = Json.newObject();
        json.put(REDRIVE_PERMISSION, permission.wireName());
        if (permission == Permission.BY_QUEUE) {
            ArrayNode arns = json.putArray(SOURCE_QUEUE_ARNS);
            sourceQueueArns.forEach(arns::add);
        }
        return Json.write(json);
    }

    private static Validated<RedriveAllowPolicy> invalid(String raw, String reason) {
        return Validated.fail(SqsError.INVALID_PARAMETER_VALUE.withMessage(
                "Value " + raw + " for parameter RedriveAllowPolicy is invalid. Reason: " + reason));
    }
}
