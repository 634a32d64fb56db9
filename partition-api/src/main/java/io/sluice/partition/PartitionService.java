package io.sluice.partition;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * The data plane as the frontend sees it: submit a command to a partition and get its outcome once it is
 * durable. broker-backend's {@code ShardedPartitionService} implements it over shards, a cluster's replicated
 * ones and {@code sluice dev}'s one local shard alike. Futures complete off the caller's thread; callers on a
 * Netty event loop must not block on them.
 */
public interface PartitionService {

    /** Applies a command; the outcome is released only after its mutations are on disk. */
    CompletableFuture<PartitionOutcome> submit(PartitionId partition, PartitionCommand command);

    /** Creates a partition (idempotent: an existing partition is reconfigured). */
    CompletableFuture<Void> createPartition(PartitionId partition, PartitionConfig config);

    /**
     * Completes with true once the partition exists configured from catalog version {@code configVersion} or later.
     * The shard's primary configures its partitions from the catalog (the frontend writes the catalog only); asked
     * here, it does so at once instead of at its next periodic reconcile. False if that did not happen within its
     * bound (a few seconds): the periodic reconcile still will.
     */
    CompletableFuture<Boolean> awaitConfigured(PartitionId partition, long configVersion);

    /** Counts as of now; a partition that does not exist has none. */
    CompletableFuture<QueueCounts> counts(PartitionId partition);

    /**
     * The counts of every partition in the cluster, one read per shard (the console's queue list and charts). A shard
     * that does not answer is left out: its partitions are missing from the map, not zero.
     */
    default CompletableFuture<Map<PartitionId, QueueCounts>> allCounts() {
        return CompletableFuture.failedFuture(new UnsupportedOperationException("allCounts"));
    }

    /**
     * The counts its shard's leader recorded for the partition from {@code fromMillis} to {@code toMillis}, a point
     * per minute in which they changed (and every few minutes when not), with the last point before the range.
     */
    default CompletableFuture<List<HistoryPoint>> history(PartitionId partition, long fromMillis, long toMillis) {
        return CompletableFuture.failedFuture(new UnsupportedOperationException("history"));
    }

    /** Messages visible right now (deadlines passed since the last command included), without leasing any. */
    CompletableFuture<Integer> visibleNow(PartitionId partition);

    /** When the next delayed or in-flight message becomes visible, or -1: when to look again for a parked poll. */
    CompletableFuture<Long> nextDeadlineMillis(PartitionId partition);

    /** The stored copy of a message, or null if it is gone. */
    CompletableFuture<StoredMessage> readMessage(PartitionId partition, long seq);

    /**
     * Up to {@code max} messages visible now, in delivery order, without leasing them or counting a receive (a
     * read-only query; a partition that does not exist has none). Messages past the in-memory window of a long
     * backlog are not seen, and on a FIFO queue a group's messages behind an in-flight one are listed too.
     */
    default CompletableFuture<List<PeekedMessage>> peek(PartitionId partition, int max) {
        return CompletableFuture.failedFuture(new UnsupportedOperationException("peek"));
    }

    /**
     * Whether the partition's primary runs in this process now, so that a command to it crosses no network (a combined
     * node's frontend and its local shard leaders; every partition in {@code sluice dev}). Where the choice of
     * partition is free (a standard queue's send) the frontend prefers such partitions. A hint, not a promise: the
     * leader may change before the command arrives.
     */
    default boolean ledHere(PartitionId partition) {
        return false;
    }

    /** The partition's message move tasks, newest first (none for a partition that does not exist). */
    CompletableFuture<List<MoveTask>> moveTasks(PartitionId partition);

    /** Registers for effects of every command applied here (called on the service's thread: do not block). */
    void addListener(EffectListener listener);

    @FunctionalInterface
    interface EffectListener {
        void onEffects(List<Effect> effects);
    }
}
