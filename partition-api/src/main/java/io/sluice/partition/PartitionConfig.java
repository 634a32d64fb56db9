package io.sluice.partition;

import io.sluice.catalog.QueueMetadata;
import io.sluice.common.SqsLimits;
import io.sluice.common.validation.QueueAttributes;
import io.sluice.common.validation.RedeliveryBackoff;

/**
 * The queue attributes a partition's engine needs, replicated through the log (the {@code Configure} command)
 * so every replica applies the same rules.
 *
 * @param fifo                       FIFO queue: group ordering, deduplication, receive attempts
 * @param contentBasedDeduplication  FIFO: a send without a deduplication id is deduplicated by body hash
 * @param deduplicationPerGroup      FIFO {@code DeduplicationScope=messageGroup}; otherwise queue-wide
 * @param delaySeconds               queue default delay; retroactive on FIFO queues
 * @param visibilityTimeoutSeconds   default lease for receives that do not name one
 * @param retentionSeconds           messages older than this (from their retention base) are expired
 * @param maxReceiveCount            0 = no redrive policy; otherwise a receive that would exceed it hands the
 *                                   message off to the dead-letter queue instead of delivering it
 * @param deadLetterOnExpiry         Sluice extension: expired messages go to the dead-letter queue (needs a
 *                                   redrive policy) instead of being dropped
 * @param maxInflight                in-flight limit; standard queues answer OverLimit, FIFO queues return none
 * @param maxBacklog                 Sluice extension (load shedding): 0 = none; otherwise a send that would take the
 *                                   partition past this many stored messages is refused with the retryable
 *                                   {@code RequestThrottled} (dead-letter hand-offs are never refused)
 * @param version                    the catalog's version of the queue's attributes this config was made from
 *                                   ({@code QueueMetadata.configVersion}); a partition ignores a {@code Configure}
 *                                   older than the one it has (two racing SetQueueAttributes cannot leave it on
 *                                   the older); 0 = unversioned
 * @param redeliveryBackoff          Sluice extension, null = none: a lapsed lease's message waits this backoff
 *                                   before it is visible again (see {@link RedeliveryBackoff})
 * @param reorderWindowMillis        Sluice extension, FIFO, 0 = off: a message group delivers in producer order
 *                                   ({@code Sluice.ProducerTime}), each message waiting this long for stragglers
 */
public record PartitionConfig(
        boolean fifo,
        boolean contentBasedDeduplication,
        boolean deduplicationPerGroup,
        int delaySeconds,
        int visibilityTimeoutSeconds,
        int retentionSeconds,
        int maxReceiveCount,
        boolean deadLetterOnExpiry,
        int maxInflight,
        int maxBacklog,
        long version,
        RedeliveryBackoff redeliveryBackoff,
        int reorderWindowMillis) {

    public static final PartitionConfig STANDARD_DEFAULTS = new PartitionConfig(false, false, false, 0,
            SqsLimits.DEFAULT_VISIBILITY_TIMEOUT_SECONDS, SqsLimits.DEFAULT_RETENTION_SECONDS, 0, false,
            SqsLimits.DEFAULT_MAX_INFLIGHT_STANDARD);

    public static final PartitionConfig FIFO_DEFAULTS = new PartitionConfig(true, false, false, 0,
            SqsLimits.DEFAULT_VISIBILITY_TIMEOUT_SECONDS, SqsLimits.DEFAULT_RETENTION_SECONDS, 0, false,
            SqsLimits.DEFAULT_MAX_INFLIGHT_FIFO);

    public PartitionConfig {
        requireRange("delaySeconds", delaySeconds, 0, SqsLimits.MAX_DELAY_SECONDS);
        requireRange("visibilityTimeoutSeconds", visibilityTimeoutSeconds, 0, SqsLimits.MAX_VISIBILITY_TIMEOUT_SECONDS);
        requireRange("retentionSeconds", retentionSeconds, 1, SqsLimits.MAX_RETENTION_SECONDS);
        requireRange("maxReceiveCount", maxReceiveCount, 0, SqsLimits.MAX_MAX_RECEIVE_COUNT);
        requireRange("maxInflight", maxInflight, 1, Integer.MAX_VALUE);
        requireRange("maxBacklog", maxBacklog, 0, Integer.MAX_VALUE);
        requireRange("reorderWindowMillis", reorderWindowMillis, 0, SqsLimits.MAX_REORDER_WINDOW_MILLIS);
        if (version < 0) {
            throw new IllegalArgumentException("version must not be negative: " + version);
        }
    }

    /** Unversioned. */
    public PartitionConfig(boolean fifo, boolean contentBasedDeduplication, boolean deduplicationPerGroup,
                           int delaySeconds, int visibilityTimeoutSeconds, int retentionSeconds, int maxReceiveCount,
                           boolean deadLetterOnExpiry, int maxInflight, int maxBacklog) {
        this(fifo, contentBasedDeduplication, deduplicationPerGroup, delaySeconds, visibilityTimeoutSeconds,
                retentionSeconds, maxReceiveCount, deadLetterOnExpiry, maxInflight, maxBacklog, 0, null, 0);
    }

    /** Without a backlog limit. */
    public PartitionConfig(boolean fifo, boolean contentBasedDeduplication, boolean deduplicationPerGroup,
                           int delaySeconds, int visibilityTimeoutSeconds, int retentionSeconds, int maxReceiveCount,
                           boolean deadLetterOnExpiry, int maxInflight) {
        this(fifo, contentBasedDeduplication, deduplicationPerGroup, delaySeconds, visibilityTimeoutSeconds,
                retentionSeconds, maxReceiveCount, deadLetterOnExpiry, maxInflight, 0);
    }

    public PartitionConfig withMaxBacklog(int limit) {
        return new PartitionConfig(fifo, contentBasedDeduplication, deduplicationPerGroup, delaySeconds,
                visibilityTimeoutSeconds, retentionSeconds, maxReceiveCount, deadLetterOnExpiry, maxInflight, limit,
                version, redeliveryBackoff, reorderWindowMillis);
    }

    public PartitionConfig withVersion(long v) {
        return new PartitionConfig(fifo, contentBasedDeduplication, deduplicationPerGroup, delaySeconds,
                visibilityTimeoutSeconds, retentionSeconds, maxReceiveCount, deadLetterOnExpiry, maxInflight, maxBacklog,
                v, redeliveryBackoff, reorderWindowMillis);
    }

    public PartitionConfig withRedeliveryBackoff(RedeliveryBackoff backoff) {
        return new PartitionConfig(fifo, contentBasedDeduplication, deduplicationPerGroup, delaySeconds,
                visibilityTimeoutSeconds, retentionSeconds, maxReceiveCount, deadLetterOnExpiry, maxInflight, maxBacklog,
                version, backoff, reorderWindowMillis);
    }

    public PartitionConfig withReorderWindowMillis(int millis) {
        return new PartitionConfig(fifo, contentBasedDeduplication, deduplicationPerGroup, delaySeconds,
                visibilityTimeoutSeconds, retentionSeconds, maxReceiveCount, deadLetterOnExpiry, maxInflight, maxBacklog,
                version, redeliveryBackoff, millis);
    }

    public boolean hasDeadLetterQueue() {
        return maxReceiveCount > 0;
    }

    public PartitionConfig withDelaySeconds(int seconds) {
        return new PartitionConfig(fifo, contentBasedDeduplication, deduplicationPerGroup, seconds,
                visibilityTimeoutSeconds, retentionSeconds, maxReceiveCount, deadLetterOnExpiry, maxInflight, maxBacklog,
                version, redeliveryBackoff, reorderWindowMillis);
    }

    public PartitionConfig withRetentionSeconds(int seconds) {
        return new PartitionConfig(fifo, contentBasedDeduplication, deduplicationPerGroup, delaySeconds,
                visibilityTimeoutSeconds, seconds, maxReceiveCount, deadLetterOnExpiry, maxInflight, maxBacklog,
                version, redeliveryBackoff, reorderWindowMillis);
    }

    public PartitionConfig withMaxReceiveCount(int count) {
        return new PartitionConfig(fifo, contentBasedDeduplication, deduplicationPerGroup, delaySeconds,
                visibilityTimeoutSeconds, retentionSeconds, count, deadLetterOnExpiry, maxInflight, maxBacklog,
                version, redeliveryBackoff, reorderWindowMillis);
    }

    public PartitionConfig withDeadLetterOnExpiry(boolean enabled) {
        return new PartitionConfig(fifo, contentBasedDeduplication, deduplicationPerGroup, delaySeconds,
                visibilityTimeoutSeconds, retentionSeconds, maxReceiveCount, enabled, maxInflight, maxBacklog, version,
                redeliveryBackoff, reorderWindowMillis);
    }

    public PartitionConfig withMaxInflight(int limit) {
        return new PartitionConfig(fifo, contentBasedDeduplication, deduplicationPerGroup, delaySeconds,
                visibilityTimeoutSeconds, retentionSeconds, maxReceiveCount, deadLetterOnExpiry, limit, maxBacklog,
                version, redeliveryBackoff, reorderWindowMillis);
    }

    public PartitionConfig withContentBasedDeduplication(boolean enabled) {
        return new PartitionConfig(fifo, enabled, deduplicationPerGroup, delaySeconds,
                visibilityTimeoutSeconds, retentionSeconds, maxReceiveCount, deadLetterOnExpiry, maxInflight, maxBacklog,
                version, redeliveryBackoff, reorderWindowMillis);
    }

    public PartitionConfig withDeduplicationPerGroup(boolean perGroup) {
        return new PartitionConfig(fifo, contentBasedDeduplication, perGroup, delaySeconds,
                visibilityTimeoutSeconds, retentionSeconds, maxReceiveCount, deadLetterOnExpiry, maxInflight, maxBacklog,
                version, redeliveryBackoff, reorderWindowMillis);
    }

    private static void requireRange(String name, int value, int min, int max) {
        if (value < min || value > max) {
            throw new IllegalArgumentException(name + " must be in [" + min + ", " + max + "]: " + value);
        }
    }

    /**
     * The rules a queue's partitions enforce, from its catalog entry and parsed attributes, stamped with its
     * {@code configVersion}. The one mapping, used by frontends (create, SetQueueAttributes) and by the shard
     * leaders' repair alike.
     */
    public static PartitionConfig forQueue(QueueMetadata queue, QueueAttributes a, int maxInflight) {
        PartitionConfig pc = fromAttributes(a, maxInflight).withVersion(queue.configVersion());
        int parts = Math.max(1, queue.partitions());
        return a.maxBacklog() == 0 ? pc : pc.withMaxBacklog((int) ((a.maxBacklog() + (long) parts - 1) / parts));
    }

    /** The rules the engine enforces, from the queue's attributes (without the backlog limit, which is per queue). */
    private static PartitionConfig fromAttributes(QueueAttributes a, int maxInflight) {
        return new PartitionConfig(a.fifo(), a.contentBasedDeduplication(),
                a.deduplicationScope() == QueueAttributes.DeduplicationScope.MESSAGE_GROUP, a.delaySeconds(),
                a.visibilityTimeout(), a.messageRetentionPeriod(),
                a.redrivePolicy() == null ? 0 : a.redrivePolicy().maxReceiveCount(), false, maxInflight)
                .withRedeliveryBackoff(a.redeliveryBackoff()).withReorderWindowMillis(a.reorderWindowMillis());
    }
}
