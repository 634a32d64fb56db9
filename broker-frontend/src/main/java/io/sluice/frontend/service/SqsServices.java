package io.sluice.frontend.service;

import io.sluice.catalog.QueueCatalog;
import io.sluice.catalog.QueueMetadata;
import io.sluice.common.Clock;
import io.sluice.common.SqsError;
import io.sluice.common.validation.QueueArn;
import io.sluice.common.validation.QueueAttributes;
import io.sluice.common.validation.QueueAttributesValidator;
import io.sluice.frontend.FrontendConfig;
import io.sluice.frontend.action.ActionContext;
import io.sluice.frontend.action.Params;
import io.sluice.frontend.protocol.Protocol;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionId;
import io.sluice.partition.PartitionOutcome;
import io.sluice.partition.PartitionResponse;
import io.sluice.partition.PartitionService;
import io.sluice.partition.PeekedMessage;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What every action needs: the catalog, the partitions, the clock, and the queue-level rules that connect them
 * (URLs and ARNs, resolving a request's queue, turning queue attributes into a partition configuration).
 */
public final class SqsServices {
    private static final Logger LOG = LoggerFactory.getLogger(SqsServices.class);
    private final QueueCatalog catalog;
    private final PartitionService partitions;
    private final Clock clock;
    private final FrontendConfig config;
    private final ReceiptHandleSeal receiptHandles;
    /** Parsed attributes per queue incarnation and modification time: parsing on every request is waste. */
    private final Map<Long, Parsed> parsed = new ConcurrentHashMap<>();

    private record Parsed(long modifiedSeconds, Map<String, String> raw, QueueAttributes attributes) {
    }

    /** @param receiptHandles seals the receipt handles handed out and opens those clients send back */
    public SqsServices(QueueCatalog catalog, PartitionService partitions, Clock clock, FrontendConfig config,
                       ReceiptHandleSeal receiptHandles) {
        this.catalog = catalog;
        this.partitions = partitions;
        this.clock = clock;
        this.config = config;
        this.receiptHandles = receiptHandles;
    }

    public ReceiptHandleSeal receiptHandles() {
        return receiptHandles;
    }

    public QueueCatalog catalog() {
        return catalog;
    }

    public PartitionService partitions() {
        return partitions;
    }

    public Clock clock() {
        return clock;
    }

    public FrontendConfig config() {
        return config;
    }

    // ---- names, URLs, ARNs ---------------------------------------------------------------------------------

    public String queueUrl(ActionContext ctx, String name) {
        String base = config.publicBaseUrl() != null ? config.publicBaseUrl()
                : (config.https() ? "https://" : "http://") + (ctx.host() == null || ctx.host().isBlank() ? "localhost" : ctx.host());
        if (base.endsWith("/")) {
            base = base.substring(0, base.length() - 1);
        }
        return base + "/" + config.accountId() + "/" + name;
    }

    public String arn(String queueName) {
        return "arn:aws:sqs:" + config.region() + ":" + config.accountId() + ":" + queueName;
    }

    /** The queue an ARN names, if it is in this account and region. */
    public Optional<QueueMetadata> queueByArn(String arn) {
        return QueueArn.parse(arn)
                .filter(a -> a.accountId().equals(config.accountId()) && a.region().equals(config.region()))
                .flatMap(a -> catalog.get(a.queueName()));
    }

    /**
     * The request's queue: the one its {@code QueueUrl} (or path) names, as resolved once before authorization
     * ({@code RequestResources}, carried in {@link ActionContext#queueName()}), so the action touches exactly the
     * queue the key was checked for.
     */
    public QueueMetadata resolveQueue(ActionContext ctx, Params params) {
        if (ctx.queueName() == null) {
            throw Params.missing("QueueUrl");
        }
        return catalog.get(ctx.queueName()).orElseThrow(ctx::queueDoesNotExist);
    }

    // ---- attributes and partitions -------------------------------------------------------------------------

    /** Drops parsed attributes of queues no longer in the catalog, so the cache is bounded by the live queues. */
    public void forgetDeletedQueues() {
        Set<Long> live = new HashSet<>();
        catalog.list("").forEach(q -> live.add(q.queueId()));
        parsed.keySet().retainAll(live);
    }

    /** The queue's attributes, parsed from the catalog's string map. */
    public QueueAttributes attributes(QueueMetadata queue) {
        Parsed p = parsed.get(queue.queueId());
        if (p == null || p.modifiedSeconds() != queue.lastModifiedTimestampSeconds() || !p.raw().equals(queue.attributes())) {
            QueueAttributes attrs = QueueAttributesValidator.forCreate(queue.name(), queue.attributes())
                    .orElseThrow();
            p = new Parsed(queue.lastModifiedTimestampSeconds(), queue.attributes(), attrs);
            parsed.put(queue.queueId(), p);
        }
        return p.attributes();
    }

    /**
     * Up to {@code max} messages visible now across the queue's partitions (each partition's next ones in its
     * delivery order, one partition after the other in turn), leasing nothing and counting no receive (the console's peek; the
     * caller checked the key may receive from the queue).
     */
    public CompletableFuture<List<PeekedMessage>> peek(String queueName, int max) {
        Optional<QueueMetadata> queue = catalog.get(queueName);
        if (queue.isEmpty()) {
            return CompletableFuture.failedFuture(
                    ActionContext.queueDoesNotExist(Protocol.JSON));
        }
        // each partition's share (at least one), so a queue of many partitions reads about max bodies, not max each;
        // when some hold fewer than their share, the ones that filled theirs are asked once more for up to max
        List<PartitionId> ids = partitionIds(queue.get());
        int share = Math.max(1, (max + ids.size() - 1) / ids.size());
        return peekEach(ids, share).thenCompose(first -> {
            int total = first.stream().mapToInt(List::size).sum();
            List<Integer> full = new ArrayList<>();
            for (int i = 0; i < ids.size(); i++) {
                if (first.get(i).size() == share) {
                    full.add(i);
                }
            }
            if (total >= max || full.isEmpty() || share >= max) {
                return CompletableFuture.completedFuture(joined(first, max));
            }
            // no partition can add more than what is missing on top of its share: bodies read stay near max
            int enough = max - total + share;
            return peekEach(full.stream().map(ids::get).toList(), enough).handle((more, e) -> {
                if (e != null) {
                    return joined(first, max); // what the first round found is still an answer
                }
                List<List<PeekedMessage>> merged = new ArrayList<>(first);
                for (int k = 0; k < full.size(); k++) {
                    merged.set(full.get(k), more.get(k));
                }
                return joined(merged, max);
            });
        });
    }

    private CompletableFuture<List<List<PeekedMessage>>> peekEach(List<PartitionId> ids, int n) {
        List<CompletableFuture<List<PeekedMessage>>> parts = ids.stream()
                .map(id -> partitions.peek(id, n)).toList();
        return CompletableFuture.allOf(parts.toArray(CompletableFuture[]::new))
                .thenApply(v -> parts.stream().map(CompletableFuture::join).toList());
    }

    /** Up to {@code max}, one from each partition in turn (each partition's own in its delivery order). */
    private static List<PeekedMessage> joined(List<List<PeekedMessage>> parts,
                                                                 int max) {
        List<PeekedMessage> out = new ArrayList<>();
        for (int round = 0; out.size() < max; round++) {
            boolean any = false;
            for (List<PeekedMessage> part : parts) {
                if (round < part.size() && out.size() < max) {
                    out.add(part.get(round));
                    any = true;
                }
            }
            if (!any) {
                break;
            }
        }
        return out;
    }

    /**
     * The partition a standard queue's send request goes to, all its messages together (one command, one entry at one
     * shard, where a partition per message would split a batch of ten into up to ten commands at as many shards). Three
     * requests in four go to one of the partitions led in this process if there are any (a combined node: the command
     * crosses no network), the fourth, and all when none is, to any partition: at random, so every partition still
     * takes sends even from a client that talks to one node only. A FIFO queue's messages go where their group hashes.
     */
    public int sendPartition(QueueMetadata queue) {
        int n = queue.partitions();
        if (n == 1 || queue.fifo()) { // a FIFO queue's messages go where their group hashes: nothing to choose
            return 0;
        }
        int[] local = new int[n];
        int count = 0;
        for (int i = 0; i < n; i++) {
            if (partitions.ledHere(new PartitionId(queue.queueId(), i))) {
                local[count++] = i;
            }
        }
        ThreadLocalRandom random = ThreadLocalRandom.current();
        return count > 0 && random.nextInt(4) != 0 ? local[random.nextInt(count)] : random.nextInt(n);
    }

    public List<PartitionId> partitionIds(QueueMetadata queue) {
        List<PartitionId> ids = new ArrayList<>(queue.partitions());
        for (int i = 0; i < queue.partitions(); i++) {
            ids.add(new PartitionId(queue.queueId(), i));
        }
        return ids;
    }

    /**
     * Every command to a partition goes through here (sends, receives, deletes, visibility changes, purges, move
     * tasks; {@code FrontendRulesTest} keeps it so): a partition the catalog lists but whose shard has no state for yet (its queue just
     * created or its partition count raised, and the shard's primary not yet done configuring it from the catalog)
     * answers "no such queue"; then this waits until the primary has configured it (asking it to do so now) and
     * submits once more. The frontend never configures a partition itself. A partition still not there after that
     * wait (its primary slow or unreachable) is answered {@code ServiceUnavailable}, which clients retry, not
     * "no such queue", which they do not: the queue exists.
     */
    public CompletableFuture<PartitionOutcome> submitToQueue(QueueMetadata queue,
            PartitionId id, PartitionCommand command) {
        return partitions.submit(id, command).thenCompose(o -> {
            if (o.response() instanceof PartitionResponse.Rejected r
                    && r.failure().error() == SqsError.QUEUE_DOES_NOT_EXIST
                    && catalog.get(queue.name()).filter(q -> q.queueId() == queue.queueId()).isPresent()) {
                return partitions.awaitConfigured(id, queue.configVersion())
                        .thenCompose(configured -> configured ? partitions.submit(id, command)
                                : CompletableFuture.completedFuture(notReady(queue, id, o)));
            }
            return CompletableFuture.completedFuture(o);
        });
    }

    /** A partition the catalog lists that its shard has not created yet: retryable, unless the queue went meanwhile. */
    private PartitionOutcome notReady(QueueMetadata queue, PartitionId id,
                                                           PartitionOutcome missing) {
        if (catalog.get(queue.name()).filter(q -> q.queueId() == queue.queueId()).isEmpty()) {
            return missing; // deleted while we waited: it does not exist
        }
        return new PartitionOutcome(new PartitionResponse.Rejected(
                SqsError.SERVICE_UNAVAILABLE.withMessage("Partition " + id.index() + " of queue " + queue.name()
                        + " is not ready yet (just added); retry.")), List.of(), List.of());
    }

    /**
     * Waits (a few seconds at most) until every partition of a queue is configured from its catalog version: after
     * CreateQueue and SetQueueAttributes, so that the next request sees the queue as written. The catalog is written
     * already and is what counts: a partition that is not configured in time (its shard's primary unreachable) is
     * configured by the primary's periodic reconcile, and the answer does not wait for it.
     */
    public CompletableFuture<Void> awaitPartitionsConfigured(QueueMetadata queue) {
        List<CompletableFuture<Boolean>> waits = partitionIds(queue).stream()
                .map(id -> partitions.awaitConfigured(id, queue.configVersion()).exceptionally(e -> false)).toList();
        return CompletableFuture.allOf(waits.toArray(CompletableFuture[]::new)).thenRun(() -> {
            long late = waits.stream().filter(w -> !w.join()).count();
            if (late > 0) {
                LOG.warn("queue {}: {} of its {} partitions not yet configured from catalog version {}; their shards'"
                        + " primaries will see to it", queue.name(), late, waits.size(), queue.configVersion());
            }
        });
    }

    public long nowMillis() {
        return clock.nowMillis();
    }
}
