package io.sluice.frontend.console;

import io.sluice.common.validation.QueueAttributeName;
import java.util.Set;

/** Queue attributes as an operator reads them: durations, sizes, counts and times in their units. */
final class AttributeUnits {
    private AttributeUnits() {
    }

    private static final Set<String> SECONDS = Set.of("DelaySeconds", "MessageRetentionPeriod",
            "ReceiveMessageWaitTimeSeconds", "VisibilityTimeout", "KmsDataKeyReusePeriodSeconds",
            "SluiceApproximateAgeOfOldestMessage");
    private static final Set<String> COUNTS = Set.of("ApproximateNumberOfMessages",
            "ApproximateNumberOfMessagesNotVisible", "ApproximateNumberOfMessagesDelayed", "SluiceMaxBacklog");
    private static final Set<String> TIMES = Set.of("CreatedTimestamp", "LastModifiedTimestamp");

    /** The value in its unit ("4 d", "256 KiB", "1,234", a UTC time); the raw value when it has none or is odd. */
    static String show(String name, String raw, long nowMillis) {
        long v;
        try {
            v = Long.parseLong(raw.trim());
        } catch (NumberFormatException e) {
            return raw;
        }
        if (SECONDS.contains(name)) {
            return Units.duration(v);
        }
        if (name.equals("MaximumMessageSize")) {
            return Units.bytes(v);
        }
        if (name.equals("SluiceReorderWindowMillis") || name.equals("SluiceArrivalSkewP99Millis")) {
            return v < 1_000 ? Units.count(v) + " ms" : Units.duration(v / 1000) + (v % 1000 == 0 ? "" : " "
                    + Units.count(v % 1000) + " ms");
        }
        if (COUNTS.contains(name)) {
            return Units.count(v);
        }
        if (TIMES.contains(name) && v > 0) {
            return Html.utc(v * 1000) + " (" + Units.ago(nowMillis - v * 1000) + ")";
        }
        return raw;
    }

    /**
     * What the edit form says next to an integer attribute: its unit and allowed range, and the current value in that
     * unit ("seconds, 0 s to 12 h; now 30 s"); null for the others.
     */
    static String hint(QueueAttributeName n, String raw) {
        if (!n.isInteger()) {
            return null;
        }
        String name = n.wireName();
        String unit;
        String min;
        String max;
        if (SECONDS.contains(name)) {
            unit = "seconds";
            min = Units.duration(n.min());
            max = Units.duration(n.max());
        } else if (name.equals("MaximumMessageSize")) {
            unit = "bytes";
            min = Units.bytes(n.min());
            max = Units.bytes(n.max());
        } else if (name.endsWith("Millis")) {
            unit = "milliseconds";
            min = Units.count(n.min()) + " ms";
            max = show(name, Integer.toString(n.max()), 0);
        } else {
            unit = "messages";
            min = Units.count(n.min());
            max = n.max() == Integer.MAX_VALUE ? "no limit" : Units.count(n.max());
        }
        String now = raw == null || raw.isEmpty() ? "" : "; now " + show(name, raw, 0);
        return unit + ", " + min + " to " + max + now;
    }
}
