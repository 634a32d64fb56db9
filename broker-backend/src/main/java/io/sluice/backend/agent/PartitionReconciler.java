package io.sluice.backend.agent;

import io.sluice.backend.engine.PartitionEngine;
import io.sluice.catalog.QueueMetadata;
import io.sluice.common.validation.QueueAttributesValidator;
import io.sluice.metadata.image.ClusterImage;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionConfig;
import io.sluice.partition.PartitionId;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Brings a shard's stored partitions in line with the catalog. Frontends write the catalog first and then send the
 * partitions their commands; a crash in between, a race, or a catalog delete that removed the routes before the
 * partitions were retired leaves them behind. Run by each shard's primary (in a cluster the backend leading the
 * shard, in {@code sluice dev} the local shard), periodically, the same plan either way:
 *
 * <ul>
 *   <li>a partition whose queue is gone from the catalog is retired (its messages, deduplication records and
 *       pending hand-offs are dropped). Only a queue id the catalog has already allocated counts as gone: a catalog
 *       copy older than the queue has never seen it;</li>
 *   <li>a partition configured from an older catalog version of its queue's attributes than the catalog's is
 *       configured again (partition 0 included), keeping its own in-flight limit (a frontend setting);</li>
 *   <li>a partition the catalog places on this shard that the shard does not have is created.</li>
 * </ul>
 */
public final class PartitionReconciler {
    private static final Logger LOG = LoggerFactory.getLogger(PartitionReconciler.class);

    private PartitionReconciler() {
    }

    /** A command to send to one of the shard's partitions, and why. */
    public record Action(PartitionId partition, PartitionCommand command, String reason) {
    }

    /**
     * @param assigned           the catalog's partitions placed on this shard (dev: every partition)
     * @param stored             what the shard's store holds
     * @param defaultMaxInflight the in-flight limit of a partition created here
     */
    /**
     * Plans and submits; failures are logged (the next run retries).
     *
     * @param submit sends one command to the shard (its primary)
     * @return the actions submitted
     */
    public static List<Action> run(String shard, ClusterImage image, Collection<PartitionId> assigned,
                                   List<PartitionEngine.Stored> stored, int defaultMaxInflight,
                                   BiFunction<PartitionId, PartitionCommand,
                                           CompletableFuture<?>> submit) {
        List<Action> actions = plan(image, assigned, stored, defaultMaxInflight);
        for (Action a : actions) {
            LOG.info("shard {}: partition {}: {}: {}", shard, a.partition(), a.reason(),
                    a.command().getClass().getSimpleName());
            submit.apply(a.partition(), a.command()).whenComplete((o, e) -> {
                if (e != null) {
                    LOG.warn("shard {}: partition {}: {} failed (retried on the next run): {}", shard, a.partition(),
                            a.command().getClass().getSimpleName(), e.toString());
                }
            });
        }
        return actions;
    }

    public static List<Action> plan(ClusterImage image, Collection<PartitionId> assigned,
                                    List<PartitionEngine.Stored> stored, int defaultMaxInflight) {
        Map<Long, QueueMetadata> queues = new HashMap<>();
        image.queues().values().forEach(q -> queues.put(q.queueId(), q));
        List<Action> actions = new ArrayList<>();
        Set<PartitionId> present = new HashSet<>();
        for (PartitionEngine.Stored s : stored) {
            present.add(s.id());
            QueueMetadata queue = queues.get(s.id().queueId());
            if (queue == null) {
                if (!s.retired() && s.id().queueId() < image.nextQueueId()) {
                    actions.add(new Action(s.id(), new PartitionCommand.Retire(false), "its queue was deleted"));
                }
            } else if (!s.retired() && s.config().version() < queue.configVersion()) {
                configFor(queue, s.config().maxInflight()).ifPresent(c -> actions.add(new Action(s.id(),
                        new PartitionCommand.Configure(c), "configured from catalog version " + s.config().version()
                        + ", the catalog has " + queue.configVersion())));
            }
        }
        for (PartitionId id : assigned) {
            QueueMetadata queue = queues.get(id.queueId());
            if (!present.contains(id) && queue != null) {
                configFor(queue, defaultMaxInflight).ifPresent(c -> actions.add(new Action(id,
                        new PartitionCommand.Configure(c), "in the catalog, not yet created")));
            }
        }
        return actions;
    }

    private static Optional<PartitionConfig> configFor(QueueMetadata queue, int maxInflight) {
        var attributes = QueueAttributesValidator.forCreate(queue.name(), queue.attributes());
        if (!attributes.isOk()) {
            LOG.warn("queue {}: its catalog attributes do not parse ({}); its partitions are left as they are",
                    queue.name(), attributes.failure().orElse(null));
            return Optional.empty();
        }
        return Optional.of(PartitionConfig.forQueue(queue, attributes.value(), maxInflight));
    }
}
