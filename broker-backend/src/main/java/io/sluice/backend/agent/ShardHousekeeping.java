package io.sluice.backend.agent;

import io.sluice.backend.metrics.QueueMetrics;
import io.sluice.backend.shard.ShardCore;
import io.sluice.metadata.image.ClusterImage;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionId;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiFunction;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a shard's leader does for its partitions besides serving requests, the same for a cluster's replicated shards
 * ({@link BackendAgent}) and {@code sluice dev}'s one local shard: on each {@link #tick} it opens partitions idle
 * since a restart (a few per tick), sweeps (an {@code Expire} to each partition one would change now, nothing to the
 * others), and every {@link #RECONCILE_EVERY} ticks makes the shards' partitions agree with the catalog
 * ({@link PartitionReconciler}); it names the rows of the queue metrics ({@link #primaryPartitions}) and finds where a
 * partition waited for lives ({@link #placement}, for {@link PromptReconciler}).
 */
public final class ShardHousekeeping {
    private static final Logger LOG = LoggerFactory.getLogger(ShardHousekeeping.class);
    /** Ticks between two reconciliations with the catalog. */
    public static final int RECONCILE_EVERY = 10;
    /** Partitions idle since a restart opened per shard and tick. */
    static final int OPEN_PER_TICK = 64;

    /** A shard this process leads now: its name in the catalog, its core, and how its leader submits to it. */
    public record Led(String shardId, ShardCore core,
                      BiFunction<PartitionId, PartitionCommand, CompletableFuture<?>> submit) {
    }

    /** The shards this process leads, as the catalog places partitions on them. */
    public interface LedShards {
        /** The shards this process leads now and whose state is current (the leader has committed in its term). */
        List<Led> led(ClusterImage image);

        /** The partitions the catalog places on each shard, by shard name. */
        Map<String, List<PartitionId>> assigned(ClusterImage image);
    }

    private final LedShards shards;
    private final Supplier<ClusterImage> catalog;
    private final int defaultMaxInflight;
    private long ticks;

    /** @param defaultMaxInflight the in-flight limit of a partition it creates while reconciling */
    public ShardHousekeeping(LedShards shards, Supplier<ClusterImage> catalog, int defaultMaxInflight) {
        this.shards = shards;
        this.catalog = catalog;
        this.defaultMaxInflight = defaultMaxInflight;
    }

    /**
     * One round on the shards led now; called by one thread. It never throws (a periodic task): a shard's failure is
     * logged and leaves the others'.
     *
     * @return the {@code Expire} commands submitted
     */
    public int tick() {
        ClusterImage image;
        List<Led> led;
        try {
            image = catalog.get();
            led = shards.led(image);
        } catch (RuntimeException e) { // a periodic task: an exception would cancel it for good
            LOG.warn("housekeeping skipped: {}", e.toString());
            return 0;
        }
        int swept = 0;
        for (Led shard : led) {
            try {
                shard.core().openStored(OPEN_PER_TICK);
                for (PartitionId id : shard.core().partitionsToSweep(shard.core().now())) {
                    shard.submit().apply(id, new PartitionCommand.Expire(1000));
                    swept++;
                }
            } catch (RuntimeException e) {
                LOG.warn("housekeeping of shard {} failed", shard.shardId(), e);
            }
        }
        if (++ticks % RECONCILE_EVERY == 0) {
            reconcile(image, led);
        }
        return swept;
    }

    /** Makes the partitions of the shards led here agree with the catalog now ({@link PartitionReconciler}). */
    public void reconcile() {
        ClusterImage image = catalog.get();
        reconcile(image, shards.led(image));
    }

    private void reconcile(ClusterImage image, List<Led> led) {
        if (led.isEmpty()) {
            return;
        }
        Map<String, List<PartitionId>> assigned = shards.assigned(image);
        for (Led shard : led) {
            try {
                PartitionReconciler.run(shard.shardId(), image, assigned.getOrDefault(shard.shardId(), List.of()),
                        shard.core().storedPartitions(), defaultMaxInflight, shard.submit());
            } catch (RuntimeException e) {
                LOG.warn("reconciling shard {} with the catalog failed", shard.shardId(), e);
            }
        }
    }

    /** The partitions of the shards led here, for the queue metrics (each is exported by its primary only). */
    public List<QueueMetrics.Row> primaryPartitions() {
        ClusterImage image = catalog.get();
        List<Led> led = shards.led(image);
        if (led.isEmpty()) {
            return List.of();
        }
        Map<String, List<PartitionId>> assigned = shards.assigned(image);
        Map<Long, String> names = new HashMap<>();
        image.queues().values().forEach(q -> names.put(q.queueId(), q.name()));
        List<QueueMetrics.Row> rows = new ArrayList<>();
        for (Led shard : led) {
            List<PartitionId> ids = assigned.get(shard.shardId());
            if (ids == null) {
                continue;
            }
            try {
                for (var st : shard.core().stats(ids)) {
                    String name = names.get(st.id().queueId());
                    if (name != null) {
                        rows.add(new QueueMetrics.Row(name, st.id().index(), shard.shardId(), st.counts(),
                                st.totals(), st.arrivalSkew()));
                    }
                }
            } catch (RuntimeException e) { // one shard's failure must not empty the whole scrape
                LOG.warn("queue metrics of shard {} unavailable: {}", shard.shardId(), e.toString());
            }
        }
        return rows;
    }

    /** Where {@code partition} lives if a shard led here holds it ({@link PromptReconciler.Host}). */
    public Optional<PromptReconciler.Placement> placement(ClusterImage image, PartitionId partition) {
        List<Led> led = shards.led(image);
        if (led.isEmpty()) {
            return Optional.empty();
        }
        Map<String, List<PartitionId>> assigned = shards.assigned(image);
        for (Led shard : led) {
            if (assigned.getOrDefault(shard.shardId(), List.of()).contains(partition)) {
                return Optional.of(new PromptReconciler.Placement(shard.shardId(),
                        shard.core().storedPartition(partition), shard.submit()));
            }
        }
        return Optional.empty();
    }
}
