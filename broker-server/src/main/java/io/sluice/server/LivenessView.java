package io.sluice.server;

import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which backends the metadata leader holds alive, as seen by a role that is not the leader (a frontend, or a combined
 * node whose metadata member follows): fetched every 2 seconds in the background, so a status request (served on an
 * event loop) only reads memory. Unknown when the last fetch failed or is older than 10 seconds (a leader of an earlier
 * version does not answer the query).
 */
final class LivenessView implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LivenessView.class);
    private static final long STALE_NANOS = TimeUnit.SECONDS.toNanos(10);

    private record Seen(Set<String> alive, long atNanos) {
    }

    private final Supplier<Set<String>> fetch;
    private final ScheduledExecutorService poller = Executors.newSingleThreadScheduledExecutor(
            DevServer.daemon("sluice-liveness-view"));
    private volatile Seen seen;

    LivenessView(Supplier<Set<String>> fetch) {
        this.fetch = fetch;
        poller.scheduleWithFixedDelay(this::poll, 0, 2, TimeUnit.SECONDS);
    }

    private void poll() {
        try {
            seen = new Seen(fetch.get(), System.nanoTime());
        } catch (RuntimeException e) { // a periodic task: an exception would cancel it for good
            LOG.debug("backend liveness not fetched: {}", e.toString());
        }
    }

    /** The backends alive at the last fetch, or null when that is not known. */
    Set<String> alive() {
        Seen s = seen;
        return s == null || System.nanoTime() - s.atNanos() > STALE_NANOS ? null : s.alive();
    }

    @Override
    public void close() {
        poller.shutdownNow();
    }
}
