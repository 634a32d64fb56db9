package io.sluice.common.validation;

import io.sluice.common.SqsLimits;
import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The effective, validated, client-settable attributes of one queue, defaults applied (spec section 4). Read-only
 * attributes (ARN, timestamps, counters) are not part of this value; the caller adds them when answering
 * GetQueueAttributes.
 *
 * <p>{@code policy}, {@code redrivePolicy}, {@code redriveAllowPolicy}, {@code kmsMasterKeyId} and
 * {@code redeliveryBackoff} are {@code null}
 * when unset; {@code reorderWindowMillis} (FIFO) is 0 when unset. On standard queues the FIFO-only fields hold their defaults and are never rendered.
 */
public record QueueAttributes(
        boolean fifo,
        int delaySeconds,
        int maximumMessageSize,
        int messageRetentionPeriod,
        int receiveMessageWaitTimeSeconds,
        int visibilityTimeout,
        String policy,
        RedrivePolicy redrivePolicy,
        RedriveAllowPolicy redriveAllowPolicy,
        boolean contentBasedDeduplication,
        DeduplicationScope deduplicationScope,
        FifoThroughputLimit fifoThroughputLimit,
        String kmsMasterKeyId,
        int kmsDataKeyReusePeriodSeconds,
        boolean sqsManagedSseEnabled,
        int maxBacklog,
        boolean autoSplit,
        RedeliveryBackoff redeliveryBackoff,
        int reorderWindowMillis) {

    /** {@code DeduplicationScope}: FIFO deduplication per queue (default) or per message group. */
    public enum DeduplicationScope {
        QUEUE("queue"), MESSAGE_GROUP("messageGroup");

        private final String wireName;

        DeduplicationScope(String wireName) {
            this.wireName = wireName;
        }

        public String wireName() {
            return wireName;
        }

        public static Optional<DeduplicationScope> fromWireName(String name) {
            for (DeduplicationScope s : values()) {
                if (s.wireName.equals(name)) {
                    return Optional.of(s);
                }
            }
            return Optional.empty();
        }
    }

    /** {@code FifoThroughputLimit}: {@code perMessageGroupId} requires {@link DeduplicationScope#MESSAGE_GROUP}. */
    public enum FifoThroughputLimit {
        PER_QUEUE("perQueue"), PER_MESSAGE_GROUP_ID("perMessageGroupId");

        private final String wireName;

        FifoThroughputLimit(String wireName) {
            this.wireName = wireName;
        }

        public String wireName() {
            return wireName;
        }

        public static Optional<FifoThroughputLimit> fromWireName(String name) {
            for (FifoThroughputLimit l : values()) {
                if (l.wireName.equals(name)) {
                    return Optional.of(l);
                }
            }
            return Optional.empty();
        }
    }

    public QueueAttributes {
        Objects.requireNonNull(deduplicationScope, "deduplicationScope");
        Objects.requireNonNull(fifoThroughputLimit, "fifoThroughputLimit");
        requireRange(QueueAttributeName.DELAY_SECONDS, delaySeconds);
        requireRange(QueueAttributeName.MAXIMUM_MESSAGE_SIZE, maximumMessageSize);
        requireRange(QueueAttributeName.MESSAGE_RETENTION_PERIOD, messageRetentionPeriod);
        requireRange(QueueAttributeName.RECEIVE_MESSAGE_WAIT_TIME_SECONDS, receiveMessageWaitTimeSeconds);
        requireRange(QueueAttributeName.VISIBILITY_TIMEOUT, visibilityTimeout);
        requireRange(QueueAttributeName.KMS_DATA_KEY_REUSE_PERIOD_SECONDS, kmsDataKeyReusePeriodSeconds);
        requireRange(QueueAttributeName.SLUICE_REORDER_WINDOW_MILLIS, reorderWindowMillis);
        if (!fifo && (contentBasedDeduplication || reorderWindowMillis != 0 || deduplicationScope != DeduplicationScope.QUEUE
                || fifoThroughputLimit != FifoThroughputLimit.PER_QUEUE)) {
            throw new IllegalArgumentException("FIFO-only attributes set on a standard queue");
        }
        if (fifoThroughputLimit == FifoThroughputLimit.PER_MESSAGE_GROUP_ID
                && deduplicationScope != DeduplicationScope.MESSAGE_GROUP) {
            throw new IllegalArgumentException("perMessageGroupId requires DeduplicationScope messageGroup");
        }
    }

    /** A new queue's attributes when the request sets none. */
    public static QueueAttributes defaults(boolean fifo) {
        return new QueueAttributes(fifo, 0, SqsLimits.MAX_MESSAGE_SIZE_BYTES, SqsLimits.DEFAULT_RETENTION_SECONDS,
                0, SqsLimits.DEFAULT_VISIBILITY_TIMEOUT_SECONDS, null, null, null, false, DeduplicationScope.QUEUE,
                FifoThroughputLimit.PER_QUEUE, null, SqsLimits.DEFAULT_KMS_DATA_KEY_REUSE_PERIOD_SECONDS, true, 0, true,
                null, 0);
    }

    /** The redrive allow policy in force: an unset policy allows every source. */
    public RedriveAllowPolicy effectiveRedriveAllowPolicy() {
        return redriveAllowPolicy != null ? redriveAllowPolicy : RedriveAllowPolicy.ALLOW_ALL;
    }

    /**
     * The attributes as SQS renders them (all values strings), sorted by name: the always-present ones, the set
     * optional ones ({@code Policy}, {@code RedrivePolicy}, {@code RedriveAllowPolicy}, {@code KmsMasterKeyId}
     * with {@code KmsDataKeyReusePeriodSeconds}) and, on FIFO queues only, the four FIFO attributes.
     */
    public SortedMap<String, String> toStringMap() {
        SortedMap<String, String> map = new TreeMap<>();
        map.put(QueueAttributeName.DELAY_SECONDS.wireName(), Integer.toString(delaySeconds));
        map.put(QueueAttributeName.MAXIMUM_MESSAGE_SIZE.wireName(), Integer.toString(maximumMessageSize));
        map.put(QueueAttributeName.MESSAGE_RETENTION_PERIOD.wireName(), Integer.toString(messageRetentionPeriod));
        map.put(QueueAttributeName.RECEIVE_MESSAGE_WAIT_TIME_SECONDS.wireName(),
                Integer.toString(receiveMessageWaitTimeSeconds));
        map.put(QueueAttributeName.VISIBILITY_TIMEOUT.wireName(), Integer.toString(visibilityTimeout));
        map.put(QueueAttributeName.SQS_MANAGED_SSE_ENABLED.wireName(), Boolean.toString(sqsManagedSseEnabled));
        if (policy != null) {
            map.put(QueueAttributeName.POLICY.wireName(), policy);
        }
        if (redrivePolicy != null) {
            map.put(QueueAttributeName.REDRIVE_POLICY.wireName(), redrivePolicy.toJson());
        }
        if (redriveAllowPolicy != null) {
            map.put(QueueAttributeName.REDRIVE_ALLOW_POLICY.wireName(), redriveAllowPolicy.toJson());
        }
        if (kmsMasterKeyId != null) {
            map.put(QueueAttributeName.KMS_MASTER_KEY_ID.wireName(), kmsMasterKeyId);
            map.put(QueueAttributeName.KMS_DATA_KEY_REUSE_PERIOD_SECONDS.wireName(),
                    Integer.toString(kmsDataKeyReusePeriodSeconds));
        }
        if (maxBacklog > 0) {
            map.put(QueueAttributeName.SLUICE_MAX_BACKLOG.wireName(), Integer.toString(maxBacklog));
        }
        if (!autoSplit) {
            map.put(QueueAttributeName.SLUICE_AUTO_SPLIT.wireName(), "false");
        }
        if (redeliveryBackoff != null) {
            map.put(QueueAttributeName.SLUICE_REDELIVERY_BACKOFF.wireName(), redeliveryBackoff.toJson());
        }
        if (fifo) {
            map.put(QueueAttributeName.FIFO_QUEUE.wireName(), "true");
            map.put(QueueAttributeName.CONTENT_BASED_DEDUPLICATION.wireName(),
                    Boolean.toString(contentBasedDeduplication));
            map.put(QueueAttributeName.DEDUPLICATION_SCOPE.wireName(), deduplicationScope.wireName());
            map.put(QueueAttributeName.FIFO_THROUGHPUT_LIMIT.wireName(), fifoThroughputLimit.wireName());
            if (reorderWindowMillis > 0) {
                map.put(QueueAttributeName.SLUICE_REORDER_WINDOW_MILLIS.wireName(), Integer.toString(reorderWindowMillis));
            }
        }
        return Collections.unmodifiableSortedMap(map);
    }

    /**
     * The first attribute name (alphabetically) whose rendered value differs between the two, or that only one of
     * them has; empty when they are equivalent. Used for CreateQueue idempotency.
     */
    public Optional<String> firstDifference(QueueAttributes other) {
        Map<String, String> mine = toStringMap();
        Map<String, String> theirs = other.toStringMap();
        TreeSet<String> names = new TreeSet<>(mine.keySet());
        names.addAll(theirs.keySet());
        return names.stream().filter(n -> !Objects.equals(mine.get(n), theirs.get(n))).findFirst();
    }

    public Builder toBuilder() {
        return new Builder(this);
    }

    private static void requireRange(QueueAttributeName name, int value) {
        if (!name.inRange(value)) {
            throw new IllegalArgumentException(name.wireName() + " out of range: " + value);
        }
    }

    /** Mutable copy used to apply a request's changes; {@link #build()} re-checks the invariants. */
    public static final class Builder {
        private boolean fifo;
        private int delaySeconds;
        private int maximumMessageSize;
        private int messageRetentionPeriod;
        private int receiveMessageWaitTimeSeconds;
        private int visibilityTimeout;
        private String policy;
        private RedrivePolicy redrivePolicy;
        private RedriveAllowPolicy redriveAllowPolicy;
        private boolean contentBasedDeduplication;
        private DeduplicationScope deduplicationScope;
        private FifoThroughputLimit fifoThroughputLimit;
        private String kmsMasterKeyId;
        private int kmsDataKeyReusePeriodSeconds;
        private boolean sqsManagedSseEnabled;
        private int maxBacklog;
        private boolean autoSplit;
        private RedeliveryBackoff redeliveryBackoff;
        private int reorderWindowMillis;

        private Builder(QueueAttributes a) {
            fifo = a.fifo;
            delaySeconds = a.delaySeconds;
            maximumMessageSize = a.maximumMessageSize;
            messageRetentionPeriod = a.messageRetentionPeriod;
            receiveMessageWaitTimeSeconds = a.receiveMessageWaitTimeSeconds;
            visibilityTimeout = a.visibilityTimeout;
            policy = a.policy;
            redrivePolicy = a.redrivePolicy;
            redriveAllowPolicy = a.redriveAllowPolicy;
            contentBasedDeduplication = a.contentBasedDeduplication;
            deduplicationScope = a.deduplicationScope;
            fifoThroughputLimit = a.fifoThroughputLimit;
            kmsMasterKeyId = a.kmsMasterKeyId;
            kmsDataKeyReusePeriodSeconds = a.kmsDataKeyReusePeriodSeconds;
            sqsManagedSseEnabled = a.sqsManagedSseEnabled;
            maxBacklog = a.maxBacklog;
            autoSplit = a.autoSplit;
            redeliveryBackoff = a.redeliveryBackoff;
            reorderWindowMillis = a.reorderWindowMillis;
        }

        /** Sets one integer attribute ({@link QueueAttributeName#isInteger()}). */
        public Builder integer(QueueAttributeName name, int value) {
            switch (name) {
                case DELAY_SECONDS -> delaySeconds = value;
                case MAXIMUM_MESSAGE_SIZE -> maximumMessageSize = value;
                case MESSAGE_RETENTION_PERIOD -> messageRetentionPeriod = value;
                case RECEIVE_MESSAGE_WAIT_TIME_SECONDS -> receiveMessageWaitTimeSeconds = value;
                case VISIBILITY_TIMEOUT -> visibilityTimeout = value;
                case KMS_DATA_KEY_REUSE_PERIOD_SECONDS -> kmsDataKeyReusePeriodSeconds = value;
                case SLUICE_MAX_BACKLOG -> maxBacklog = value;
                case SLUICE_REORDER_WINDOW_MILLIS -> reorderWindowMillis = value;
                default -> throw new IllegalArgumentException("not an integer attribute: " + name);
            }
            return this;
        }

        public Builder policy(String value) {
            policy = value;
            return this;
        }

        public Builder redrivePolicy(RedrivePolicy value) {
            redrivePolicy = value;
            return this;
        }

        public Builder redriveAllowPolicy(RedriveAllowPolicy value) {
            redriveAllowPolicy = value;
            return this;
        }

        public Builder contentBasedDeduplication(boolean value) {
            contentBasedDeduplication = value;
            return this;
        }

        public Builder deduplicationScope(DeduplicationScope value) {
            deduplicationScope = value;
            return this;
        }

        public Builder fifoThroughputLimit(FifoThroughputLimit value) {
            fifoThroughputLimit = value;
            return this;
        }

        public Builder kmsMasterKeyId(String value) {
            kmsMasterKeyId = value;
            return this;
        }

        public Builder sqsManagedSseEnabled(boolean value) {
            sqsManagedSseEnabled = value;
            return this;
        }

        public Builder autoSplit(boolean value) {
            autoSplit = value;
            return this;
        }

        public Builder redeliveryBackoff(RedeliveryBackoff value) {
            redeliveryBackoff = value;
            return this;
        }

        DeduplicationScope deduplicationScope() {
            return deduplicationScope;
        }

        FifoThroughputLimit fifoThroughputLimit() {
            return fifoThroughputLimit;
        }

        public QueueAttributes build() {
            return new QueueAttributes(fifo, delaySeconds, maximumMessageSize, messageRetentionPeriod,
                    receiveMessageWaitTimeSeconds, visibilityTimeout, policy, redrivePolicy, redriveAllowPolicy,
                    contentBasedDeduplication, deduplicationScope, fifoThroughputLimit, kmsMasterKeyId,
                    kmsDataKeyReusePeriodSeconds, sqsManagedSseEnabled, maxBacklog, autoSplit, redeliveryBackoff,
                    reorderWindowMillis);
        }
    }
}
