package io.sluice.frontend.service;

import io.sluice.catalog.QueueMetadata;
import io.sluice.common.validation.QueueAttributes;
import io.sluice.partition.Effect;
import io.sluice.partition.NewMessage;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionId;
import io.sluice.partition.PartitionResponse;
import io.sluice.partition.PartitionService;
import io.sluice.partition.StoredMessage;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Completes dead-letter hand-offs: copies the message into the queue's dead-letter queue with its history, and only
 * once that send is durable acknowledges the hand-off, which removes the source copy. A crash in between leaves
 * the hand-off pending; {@link #resumePending()} re-executes it (at least once: the dead-letter queue may then hold
 * the message twice, never zero times). Every copy carries the hand-off's key (source partition and seq): the
 * dead-letter queue stores one copy per key within its deduplication window, however many frontends execute the
 * same hand-off at once. A hand-off is acknowledged only after its copy is stored, never when its body cannot be
 * read. A hand-off whose target does not exist stays pending until it does, or until the source's retention period
 * has passed since the hand-off (the source's primary then drops it); removing the redrive policy returns pending
 * hand-offs to the source queue.
 */
public final class DeadLetterMover implements PartitionService.EffectListener {
    private static final Logger LOG = LoggerFactory.getLogger(DeadLetterMover.class);

    private final SqsServices services;
    private final Executor executor;
    private final Set<String> inProgress = ConcurrentHashMap.newKeySet();

    public DeadLetterMover(SqsServices services, Executor executor) {
        this.services = services;
        this.executor = executor;
    }

    @Override
    public void onEffects(List<Effect> effects) {
        for (Effect e : effects) {
            if (e instanceof Effect.DeadLetter d) {
                executor.execute(() -> move(d));
            }
        }
    }

    /** Re-executes every unacknowledged hand-off (at start-up and periodically). */
    public CompletableFuture<Void> resumePending() {
        return services.partitions().pendingDeadLetters().thenAccept(list -> list.forEach(d -> executor.execute(() -> move(d))));
    }

    private void move(Effect.DeadLetter d) {
        String key = d.partition() + "/" + d.seq();
        if (!inProgress.add(key)) {
            return;
        }
        try {
            Optional<QueueMetadata> source = queueById(d.partition().queueId());
            QueueAttributes attributes = source.map(services::attributes).orElse(null);
            if (attributes == null || attributes.redrivePolicy() == null) {
                inProgress.remove(key);
                return;
            }
            Optional<QueueMetadata> target = services.queueByArn(attributes.redrivePolicy().deadLetterTargetArn());
            if (target.isEmpty()) {
                inProgress.remove(key);
                return;
            }
            String sourceArn = services.arn(source.get().name());
            services.partitions().readMessage(d.partition(), d.seq())
                    .thenCompose(m -> {
                        if (m == null) { // gone (acknowledged meanwhile), or a replica behind: never acknowledge
                            throw new IllegalStateException("its body could not be read");
                        }
                        return send(target.get(), m, d, sourceArn);
                    })
                    .thenCompose(v -> services.partitions().submit(d.partition(),
                            new PartitionCommand.AcknowledgeDeadLetters(List.of(d.seq()))))
                    .whenComplete((o, e) -> {
                        inProgress.remove(key);
                        if (e != null) {
                            LOG.warn("dead-letter hand-off {} failed; it stays pending", key, e);
                        }
                    });
        } catch (RuntimeException e) {
            inProgress.remove(key);
            LOG.warn("dead-letter hand-off {} failed; it stays pending", key, e);
        }
    }

    private CompletableFuture<Void> send(QueueMetadata target, StoredMessage m, Effect.DeadLetter d, String sourceArn) {
        NewMessage copy = new NewMessage(m.messageId(), m.body(), m.attributes(), m.systemAttributes(), 0, m.groupId(),
                m.deduplicationId(), m.senderId(), new NewMessage.Provenance(m.sentTimestampMillis(), d.receiveCount(),
                d.firstReceiveTimestampMillis(), sourceArn, NewMessage.Provenance.handOffKey(d.partition(), d.seq())));
        int partition = target.fifo() && m.groupId() != null && target.partitions() > 1
                ? Math.floorMod(m.groupId().hashCode(), target.partitions()) : 0;
        return services.partitions().submit(new PartitionId(target.queueId(), partition),
                new PartitionCommand.Send(List.of(copy))).thenAccept(o -> {
                    if (o.response() instanceof PartitionResponse.Rejected r) {
                        throw new IllegalStateException("dead-letter queue refused the copy: " + r.failure());
                    }
                });
    }

    private Optional<QueueMetadata> queueById(long queueId) {
        return services.catalog().list("").stream().filter(q -> q.queueId() == queueId).findFirst();
    }
}
