package io.sluice.backend.agent;

import io.sluice.backend.engine.ConfigurationWaits;
import io.sluice.backend.engine.PartitionEngine;
import io.sluice.catalog.QueueMetadata;
import io.sluice.metadata.image.ClusterImage;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionId;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.BiFunction;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Configures a partition from the catalog as soon as a frontend waits for it (after CreateQueue, SetQueueAttributes or
 * a raised partition count: the frontend writes the catalog only), with the same plan as the periodic
 * {@link PartitionReconciler}, for that partition alone. Requests are coalesced on one thread: when the catalog copy
 * here is older than a request's version, one fetch from the metadata group serves every request waiting.
 */
public final class PromptReconciler implements ConfigurationWaits.Requests, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(PromptReconciler.class);

    /** Where a partition lives here, as its primary: its stored state and how to send it a command. */
    public record Placement(String shard, Optional<PartitionEngine.Stored> stored,
                            BiFunction<PartitionId, PartitionCommand, CompletableFuture<?>> submit) {
    }

    /** Finds the partition's placement in {@code image}, or empty when this process is not its primary. */
    @FunctionalInterface
    public interface Host {
        Optional<Placement> place(ClusterImage image, PartitionId partition);
    }

    private final Supplier<ClusterImage> image;
    private final Supplier<ClusterImage> fetch;
    private final Host host;
    private final int defaultMaxInflight;
    private final Map<PartitionId, Long> pending = new LinkedHashMap<>();
    private final ExecutorService worker = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "sluice-prompt-reconciler");
        t.setDaemon(true);
        return t;
    });

    /**
     * @param image the catalog copy held here
     * @param fetch fetches the catalog from the metadata group (a copy too old for a request)
     */
    public PromptReconciler(Supplier<ClusterImage> image, Supplier<ClusterImage> fetch, Host host,
                            int defaultMaxInflight) {
        this.image = image;
        this.fetch = fetch;
        this.host = host;
        this.defaultMaxInflight = defaultMaxInflight;
    }

    @Override
    public void configure(PartitionId partition, long configVersion) {
        boolean first;
        synchronized (pending) {
            first = pending.isEmpty();
            pending.merge(partition, configVersion, Math::max);
        }
        if (first) {
            try {
                worker.execute(this::drain);
            } catch (RejectedExecutionException closed) {
                // shutting down: the waits time out
            }
        }
    }

    private void drain() {
        Map<PartitionId, Long> batch;
        synchronized (pending) {
            batch = new LinkedHashMap<>(pending);
            pending.clear();
        }
        try {
            ClusterImage held = image.get();
            boolean stale = batch.entrySet().stream().anyMatch(e -> versionIn(held, e.getKey()) < e.getValue());
            ClusterImage current = stale ? fetch.get() : held;
            for (PartitionId p : batch.keySet()) {
                Optional<Placement> placement = host.place(current, p);
                if (placement.isEmpty()) {
                    continue; // not its primary (any more): the primary's own reconcile sees to it
                }
                for (PartitionReconciler.Action a : PartitionReconciler.plan(current, List.of(p),
                        placement.get().stored().stream().toList(), defaultMaxInflight)) {
                    LOG.debug("shard {}: partition {}: {}", placement.get().shard(), p, a.reason());
                    placement.get().submit().apply(p, a.command()).whenComplete((o, e) -> {
                        if (e != null) {
                            LOG.warn("shard {}: partition {}: {} failed (its periodic reconcile retries): {}",
                                    placement.get().shard(), p, a.command().getClass().getSimpleName(), e.toString());
                        }
                    });
                }
            }
        } catch (RuntimeException e) {
            LOG.warn("configuring partitions {} from the catalog failed (their periodic reconcile retries): {}",
                    batch.keySet(), e.toString());
        }
    }

    private static long versionIn(ClusterImage image, PartitionId p) {
        return image.queueById(p.queueId()).filter(q -> p.index() < q.partitions()).map(QueueMetadata::configVersion)
                .orElse(-1L);
    }

    @Override
    public void close() {
        worker.shutdownNow();
    }
}
