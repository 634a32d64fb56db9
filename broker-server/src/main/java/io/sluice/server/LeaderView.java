package io.sluice.server;

import io.sluice.metadata.raft.LeaderHealth;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What only the metadata leader knows (which backends are alive, the shard leaders' reports), as seen by a role that is
 * not the leader (a frontend, or a metadata member that follows): fetched every 2 seconds in the background, so a
 * status request (served on an event loop) only reads memory. Unknown when the last fetch failed or is older than 10
 * seconds (a leader of an earlier version does not answer the query).
 */
final class LeaderView implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LeaderView.class);
    private static final long STALE_NANOS = TimeUnit.SECONDS.toNanos(10);

    private record Seen(LeaderHealth health, long atNanos) {
    }

    private final Supplier<LeaderHealth> fetch;
    private final ScheduledExecutorService poller = Executors.newSingleThreadScheduledExecutor(
            DevServer.daemon("sluice-leader-view"));
    private volatile Seen seen;

    LeaderView(Supplier<LeaderHealth> fetch) {
        this.fetch = fetch;
        poller.scheduleWithFixedDelay(this::poll, 0, 2, TimeUnit.SECONDS);
    }

    private void poll() {
        try {
            seen = new Seen(fetch.get(), System.nanoTime());
        } catch (RuntimeException e) { // a periodic task: an exception would cancel it for good
            LOG.debug("metadata leader's health not fetched: {}", e.toString());
        }
    }

    /** The leader's answer at the last fetch, or null when that is not known. */
    LeaderHealth health() {
        Seen s = seen;
        return s == null || System.nanoTime() - s.atNanos() > STALE_NANOS ? null : s.health();
    }

    @Override
    public void close() {
        poller.shutdownNow();
    }
}
