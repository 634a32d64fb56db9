package io.sluice.metadata.raft;

import io.sluice.catalog.QueueCatalog;
import io.sluice.catalog.QueueMetadata;
import io.sluice.metadata.image.ClusterImage;
import io.sluice.metadata.image.MetadataCommand;
import io.sluice.metadata.image.MetadataDelta;
import io.sluice.metadata.image.MetadataResult;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A frontend's view of the catalog: the last image fetched from the metadata group.
 *
 * <p>Coherence rules:
 * <ul>
 *   <li><b>Reads</b> (resolving a queue for every data-plane request) come from the cached image, without a network
 *       round trip. Every {@code refreshMillis} the cache asks the leader its image's index (a few bytes) and, only
 *       when it moved, fetches what changed since its own index (a {@link MetadataDelta}: the records applied since,
 *       replayed here; the whole image only when the leader no longer keeps them), so it trails the group by at most
 *       that much plus one fetch: a queue deleted through another frontend stops being served here within that
 *       bound. A name
 *       the image lacks is fetched again first, so a queue created through another frontend is found at once.</li>
 *   <li><b>Writes</b> go through to the group and return only once committed; then this cache fetches the image, so
 *       the writer reads its own write.</li>
 *   <li><b>No leader:</b> writes fail ({@link MetadataUnavailableException}, a retryable 503 to the client); reads keep
 *       using the last image, so sends and receives to known queues go on.</li>
 * </ul>
 */
public final class CachedCatalog implements QueueCatalog, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(CachedCatalog.class);

    private final MetadataClient client;
    private final boolean withSecrets;
    private final ScheduledExecutorService refresher;
    private final Object missLock = new Object();
    private volatile ClusterImage image = ClusterImage.EMPTY;
    private volatile long lastFailedFetchNanos = System.nanoTime() - TimeUnit.SECONDS.toNanos(10);
    /** When the last fetch started. */
    private volatile long lastFetchNanos = System.nanoTime() - TimeUnit.SECONDS.toNanos(1);
    /** When the group last answered a refresh (its leader was reached); readiness asks how long ago. */
    private volatile long lastReachedNanos = System.nanoTime() - TimeUnit.DAYS.toNanos(1);
    private final AtomicLong imageFetches = new AtomicLong();
    private final AtomicLong deltaFetches = new AtomicLong();

    public CachedCatalog(MetadataClient client, long refreshMillis) {
        this(client, refreshMillis, true);
    }

    /**
     * @param withSecrets whether the cached image holds the access keys: only roles that verify signatures
     *                    (frontends) ask for them; a backend's copy has none
     */
    public CachedCatalog(MetadataClient client, long refreshMillis, boolean withSecrets) {
        this.client = client;
        this.withSecrets = withSecrets;
        this.refresher = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "sluice-catalog-refresh");
            t.setDaemon(true);
            return t;
        });
        refresher.scheduleWithFixedDelay(this::refreshQuietly, refreshMillis, refreshMillis, TimeUnit.MILLISECONDS);
    }

    /**
     * Brings the image up to the group's now: the changes since this copy's index when the leader still keeps them,
     * else the whole image. Throws if the group cannot answer.
     */
    public ClusterImage refresh() {
        lastFetchNanos = System.nanoTime();
        ClusterImage base = image;
        if (base.appliedIndex() > 0) {
            MetadataDelta delta;
            try {
                delta = client.fetchDelta(base.appliedIndex(), withSecrets);
            } catch (RuntimeException e) { // e.g. a leader of an older version, which knows no deltas (rolling upgrade)
                delta = MetadataDelta.unavailable(base.appliedIndex(), base.appliedIndex());
            }
            if (delta.complete()) {
                deltaFetches.incrementAndGet();
                accept(delta.applyTo(base));
                return image;
            }
        }
        imageFetches.incrementAndGet();
        accept(withSecrets ? client.fetchImage() : client.fetchImageWithoutSecrets());
        return image;
    }

    /** Whole images fetched so far. */
    public long imageFetches() {
        return imageFetches.get();
    }

    /** Deltas fetched and replayed so far. */
    public long deltaFetches() {
        return deltaFetches.get();
    }

    /** Takes a newer image (from a fetch or an in-process listener); older ones are ignored. */
    public synchronized void accept(ClusterImage fetched) {
        if (fetched.appliedIndex() >= image.appliedIndex()) {
            image = fetched;
        }
    }

    /** The periodic refresh: asks the leader's image index, and fetches the image only when it moved. */
    private void refreshQuietly() {
        try {
            lastFetchNanos = System.nanoTime(); // a check counts as a fetch for concurrent misses: it is as fresh
            if (image.appliedIndex() == 0 || client.imageIndex() > image.appliedIndex()) {
                refresh();
            }
            lastReachedNanos = System.nanoTime();
        } catch (RuntimeException e) {
            lastFailedFetchNanos = System.nanoTime();
            LOG.debug("catalog refresh failed; serving the cached image (index {})", image.appliedIndex(), e);
        }
    }

    public ClusterImage image() {
        return image;
    }

    /**
     * Whether the metadata group answered a refresh in the last {@code millis} (refreshes run every refresh interval,
     * and one blocked on an unreachable leader does not count): a frontend cut off from the group is not ready.
     */
    public boolean reachedWithin(long millis) {
        return System.nanoTime() - lastReachedNanos < TimeUnit.MILLISECONDS.toNanos(millis);
    }

    @Override
    public CreateResult create(String name, boolean fifo, Map<String, String> attributes, Map<String, String> tags,
                               int partitions, long nowMillis) {
        MetadataResult r = client.submit(new MetadataCommand.CreateQueue(name, fifo, attributes, tags, partitions));
        refreshAfterWrite();
        return switch (r.status()) {
            case OK -> new Created(r.queue());
            case ALREADY_EXISTS -> new AlreadyExists(r.queue());
            case DELETED_RECENTLY -> throw new QueueDeletedRecentlyException(name);
            default -> throw new IllegalArgumentException("create " + name + ": " + r.status() + " " + r.message());
        };
    }

    /**
     * A name the cached image does not know is looked up again in the group before the answer is "no such queue":
     * a queue just created through another frontend is then served at once, not after the next periodic refresh.
     * Concurrent misses share one fetch (any fetch that started after the miss will do), so unknown names cost at
     * most one fetch at a time.
     */
    @Override
    public Optional<QueueMetadata> get(String name) {
        QueueMetadata q = image.queues().get(name);
        if (q != null) {
            return Optional.of(q);
        }
        long missedAt = System.nanoTime();
        if (missedAt - lastFailedFetchNanos < TimeUnit.SECONDS.toNanos(1)) {
            return Optional.empty(); // the group did not answer just now: do not hold a worker per unknown name
        }
        synchronized (missLock) {
            if (lastFetchNanos - missedAt < 0) {
                refreshQuietly();
            }
        }
        return Optional.ofNullable(image.queues().get(name));
    }

    @Override
    public List<QueueMetadata> list(String prefix) {
        List<QueueMetadata> out = new ArrayList<>();
        for (QueueMetadata q : image.queues().tailMap(prefix == null ? "" : prefix).values()) {
            if (prefix != null && !q.name().startsWith(prefix)) {
                break;
            }
            out.add(q);
        }
        return out;
    }

    @Override
    public Optional<QueueMetadata> delete(String name, long nowMillis) {
        return write(new MetadataCommand.DeleteQueue(name));
    }

    @Override
    public Optional<QueueMetadata> setAttributes(String name, Map<String, String> attributes, long nowMillis) {
        return write(new MetadataCommand.SetQueueAttributes(name, attributes));
    }

    @Override
    public Optional<QueueMetadata> setTags(String name, Map<String, String> tags) {
        return write(new MetadataCommand.SetQueueTags(name, tags));
    }

    @Override
    public Optional<QueueMetadata> raisePartitions(String name, int partitions) {
        return write(new MetadataCommand.RaisePartitions(name, partitions));
    }

    private Optional<QueueMetadata> write(MetadataCommand command) {
        MetadataResult r = client.submit(command);
        refreshAfterWrite();
        return r.status() == MetadataResult.Status.OK ? Optional.ofNullable(r.queue()) : Optional.empty();
    }

    private void refreshAfterWrite() {
        try {
            refresh();
        } catch (RuntimeException e) {
            LOG.warn("catalog refresh after a committed write failed; the periodic refresh will catch up", e);
        }
    }

    @Override
    public void close() {
        refresher.shutdownNow();
    }
}
