package io.sluice.common.validation;

import io.sluice.common.SqsLimits;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The queue attribute names of spec section 4, with whether a client may set them and whether they exist only on
 * FIFO queues. Names are case-sensitive, as in SQS.
 */
public enum QueueAttributeName {
    DELAY_SECONDS("DelaySeconds", 0, SqsLimits.MAX_DELAY_SECONDS),
    MAXIMUM_MESSAGE_SIZE("MaximumMessageSize", SqsLimits.MIN_MESSAGE_SIZE_LIMIT_BYTES,
            SqsLimits.MAX_MESSAGE_SIZE_BYTES),
    MESSAGE_RETENTION_PERIOD("MessageRetentionPeriod", SqsLimits.MIN_RETENTION_SECONDS,
            SqsLimits.MAX_RETENTION_SECONDS),
    RECEIVE_MESSAGE_WAIT_TIME_SECONDS("ReceiveMessageWaitTimeSeconds", 0, SqsLimits.MAX_WAIT_TIME_SECONDS),
    VISIBILITY_TIMEOUT("VisibilityTimeout", 0, SqsLimits.MAX_VISIBILITY_TIMEOUT_SECONDS),
    POLICY("Policy", true, false),
    REDRIVE_POLICY("RedrivePolicy", true, false),
    REDRIVE_ALLOW_POLICY("RedriveAllowPolicy", true, false),
    FIFO_QUEUE("FifoQueue", true, true),
    CONTENT_BASED_DEDUPLICATION("ContentBasedDeduplication", true, true),
    DEDUPLICATION_SCOPE("DeduplicationScope", true, true),
    FIFO_THROUGHPUT_LIMIT("FifoThroughputLimit", true, true),
    KMS_MASTER_KEY_ID("KmsMasterKeyId", true, false),
    KMS_DATA_KEY_REUSE_PERIOD_SECONDS("KmsDataKeyReusePeriodSeconds", SqsLimits.MIN_KMS_DATA_KEY_REUSE_PERIOD_SECONDS,
            SqsLimits.MAX_KMS_DATA_KEY_REUSE_PERIOD_SECONDS),
    SQS_MANAGED_SSE_ENABLED("SqsManagedSseEnabled", true, false),
    /** Sluice extension (load shedding): the most messages the queue stores before sends are throttled; 0 = none. */
    SLUICE_MAX_BACKLOG("SluiceMaxBacklog", 0, Integer.MAX_VALUE),
    /** Sluice extension: {@code false} keeps the metadata leader from raising the queue's partition count by itself. */
    SLUICE_AUTO_SPLIT("SluiceAutoSplit", true, false),
    /** Sluice extension: a lapsed lease's message waits out an exponential backoff before it is visible again. */
    SLUICE_REDELIVERY_BACKOFF("SluiceRedeliveryBackoff", true, false),
    /**
     * Sluice extension (FIFO): how long a message group waits for stragglers so that it delivers in producer order
     * ({@code Sluice.ProducerTime}); 0 = arrival order.
     */
    SLUICE_REORDER_WINDOW_MILLIS("SluiceReorderWindowMillis", 0, SqsLimits.MAX_REORDER_WINDOW_MILLIS, true),
    /** Sluice extension (FIFO, read-only): p99 of arrival time minus producer time over the last minutes. */
    SLUICE_ARRIVAL_SKEW_P99_MILLIS("SluiceArrivalSkewP99Millis", false, true),
    /**
     * Sluice extension (read-only, returned only when named): seconds since the oldest message still in the queue was
     * sent (what CloudWatch calls ApproximateAgeOfOldestMessage; 0 when empty).
     */
    SLUICE_APPROXIMATE_AGE_OF_OLDEST_MESSAGE("SluiceApproximateAgeOfOldestMessage", false, false),
    QUEUE_ARN("QueueArn", false, false),
    CREATED_TIMESTAMP("CreatedTimestamp", false, false),
    LAST_MODIFIED_TIMESTAMP("LastModifiedTimestamp", false, false),
    APPROXIMATE_NUMBER_OF_MESSAGES("ApproximateNumberOfMessages", false, false),
    APPROXIMATE_NUMBER_OF_MESSAGES_NOT_VISIBLE("ApproximateNumberOfMessagesNotVisible", false, false),
    APPROXIMATE_NUMBER_OF_MESSAGES_DELAYED("ApproximateNumberOfMessagesDelayed", false, false);

    /** The pseudo-name GetQueueAttributes accepts for "every attribute"; not an attribute itself. */
    public static final String ALL = "All";

    private static final Map<String, QueueAttributeName> BY_WIRE_NAME = new HashMap<>();

    static {
        for (QueueAttributeName n : values()) {
            BY_WIRE_NAME.put(n.wireName, n);
        }
    }

    private final String wireName;
    private final boolean settable;
    private final boolean fifoOnly;
    private final boolean integer;
    private final int min;
    private final int max;

    QueueAttributeName(String wireName, boolean settable, boolean fifoOnly) {
        this.wireName = wireName;
        this.settable = settable;
        this.fifoOnly = fifoOnly;
        this.integer = false;
        this.min = 0;
        this.max = 0;
    }

    /** A settable integer attribute valid in {@code [min, max]}. */
    QueueAttributeName(String wireName, int min, int max) {
        this(wireName, min, max, false);
    }

    /** A settable integer attribute valid in {@code [min, max]}, on FIFO queues only when {@code fifoOnly}. */
    QueueAttributeName(String wireName, int min, int max, boolean fifoOnly) {
        this.wireName = wireName;
        this.settable = true;
        this.fifoOnly = fifoOnly;
        this.integer = true;
        this.min = min;
        this.max = max;
    }

    /** The exact name on the wire, e.g. {@code DelaySeconds}. */
    public String wireName() {
        return wireName;
    }

    /** False for the read-only attributes, which CreateQueue and SetQueueAttributes reject. */
    public boolean settable() {
        return settable;
    }

    /** True for attributes that exist only on FIFO queues. */
    public boolean fifoOnly() {
        return fifoOnly;
    }

    /** True for the settable integer attributes, which have a {@link #min()}-{@link #max()} range. */
    public boolean isInteger() {
        return integer;
    }

    /** Smallest valid value of an integer attribute. */
    public int min() {
        return min;
    }

    /** Largest valid value of an integer attribute. */
    public int max() {
        return max;
    }

    /** Whether an integer attribute accepts this value; false for non-integer attributes. */
    public boolean inRange(long value) {
        return integer && value >= min && value <= max;
    }

    /** The attribute with this exact wire name; empty for unknown names (including {@code All}). */
    public static Optional<QueueAttributeName> fromWireName(String name) {
        return Optional.ofNullable(name == null ? null : BY_WIRE_NAME.get(name));
    }
}
