package io.sluice.frontend.console;

import io.sluice.catalog.QueueMetadata;
import io.sluice.frontend.action.QueueAttributeActions;
import io.sluice.frontend.service.SqsServices;
import io.sluice.partition.QueueCounts;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the console's charts draw: each queue's depth (visible, in flight, delayed) and the age of its oldest message,
 * sampled every {@link #EVERY_SECONDS} seconds and kept for the last hour, in the memory of this node (a restart
 * starts the charts again). It samples only while the console is in use (a signed-in request in the last hour), so a
 * node nobody looks at pays nothing. At most {@code maxQueues} queues are sampled (the first by name); each costs 360
 * samples (four ints, two floats and a time: ~11.5 KB) and one count query per partition every 10 seconds.
 */
public final class QueueHistory {
    private static final Logger LOG = LoggerFactory.getLogger(QueueHistory.class);
    public static final int EVERY_SECONDS = 10;
    static final int POINTS = 3600 / EVERY_SECONDS;

    /** One queue's ring of samples. */
    static final class Series {
        final long[] at = new long[POINTS];
        final int[] visible = new int[POINTS];
        final int[] inflight = new int[POINTS];
        final int[] delayed = new int[POINTS];
        final int[] oldestSeconds = new int[POINTS];
        /** Messages sent and received per second since the previous sample (-1: not known). */
        final float[] sentRate = new float[POINTS];
        final float[] receivedRate = new float[POINTS];
        long lastAt = -1;
        long lastSent = -1;
        long lastReceived = -1;
        int next;
        int size;

        synchronized void add(long atSeconds, QueueCounts c, long nowMillis) {
            at[next] = atSeconds;
            visible[next] = c.visible();
            inflight[next] = c.inflight();
            delayed[next] = c.delayed();
            long base = c.oldestRetentionBaseMillis();
            oldestSeconds[next] = base < 0 ? 0 : (int) Math.min(Integer.MAX_VALUE, Math.max(0, (nowMillis - base) / 1000));
            long seconds = lastAt < 0 ? 0 : atSeconds - lastAt;
            sentRate[next] = rate(lastSent, c.sentTotal(), seconds);
            receivedRate[next] = rate(lastReceived, c.receivedTotal(), seconds);
            lastAt = atSeconds;
            lastSent = c.sentTotal();
            lastReceived = c.receivedTotal();
            next = (next + 1) % POINTS;
            size = Math.min(POINTS, size + 1);
        }

        /** A total's growth per second, or -1 when either total is unknown (or it went back: a partition moved). */
        private static float rate(long before, long after, long seconds) {
            return before < 0 || after < before || seconds <= 0 ? -1 : (float) (after - before) / seconds;
        }

        /** Sent and received per second over the last interval, or null before two samples. */
        synchronized float[] latestRates() {
            if (size < 2) {
                return null;
            }
            int p = (next - 1 + POINTS) % POINTS;
            return new float[] {sentRate[p], receivedRate[p]};
        }

        /** The samples, oldest first, as a JSON object of arrays (numbers only); {@code now}: the chart's right edge. */
        synchronized String json(long nowSeconds) {
            StringBuilder t = new StringBuilder();
            StringBuilder v = new StringBuilder();
            StringBuilder i = new StringBuilder();
            StringBuilder d = new StringBuilder();
            StringBuilder o = new StringBuilder();
            StringBuilder sr = new StringBuilder();
            StringBuilder rr = new StringBuilder();
            for (int k = 0; k < size; k++) {
                int p = (next - size + k + POINTS) % POINTS;
                String sep = k == 0 ? "" : ",";
                t.append(sep).append(at[p]);
                v.append(sep).append(visible[p]);
                i.append(sep).append(inflight[p]);
                d.append(sep).append(delayed[p]);
                o.append(sep).append(oldestSeconds[p]);
                sr.append(sep).append(sentRate[p] < 0 ? "null" : String.format(Locale.ROOT, "%.1f", sentRate[p]));
                rr.append(sep).append(receivedRate[p] < 0 ? "null"
                        : String.format(Locale.ROOT, "%.1f", receivedRate[p]));
            }
            return "{\"now\":" + nowSeconds + ",\"t\":[" + t + "],\"visible\":[" + v + "],\"inflight\":[" + i + "],\"delayed\":[" + d
                    + "],\"oldest\":[" + o + "],\"sent\":[" + sr + "],\"received\":[" + rr + "]}";
        }
    }

    private final SqsServices services;
    private final int maxQueues;
    private final Map<Long, Series> series = new ConcurrentHashMap<>();
    private volatile boolean sampling;
    /** When a signed-in console request last came (ms); sampling stops an hour after it. */
    private volatile long lastUsedMillis = Long.MIN_VALUE / 2;

    public QueueHistory(SqsServices services, int maxQueues) {
        this.services = services;
        this.maxQueues = maxQueues;
    }

    /** Samples every queue (up to the cap) once; a periodic task calls it. A sample still running is not doubled. */
    public void sample() {
        if (sampling || maxQueues <= 0 || services.nowMillis() - lastUsedMillis > 3_600_000L) {
            if (!sampling && !series.isEmpty() && services.nowMillis() - lastUsedMillis > 3_600_000L) {
                series.clear(); // nobody looked for an hour: the charts start again when someone does
            }
            return;
        }
        sampling = true;
        try {
            long now = services.nowMillis();
            List<QueueMetadata> queues = services.catalog().list("");
            Set<Long> live = new HashSet<>();
            Map<Long, CompletableFuture<QueueCounts>> counts = new HashMap<>();
            for (QueueMetadata q : queues.subList(0, Math.min(maxQueues, queues.size()))) {
                live.add(q.queueId());
                counts.put(q.queueId(), QueueAttributeActions.counts(services, q));
            }
            series.keySet().retainAll(live); // deleted queues' series go
            try { // one deadline for the whole batch: a stuck shard costs one interval, not one per queue
                CompletableFuture.allOf(counts.values().toArray(CompletableFuture[]::new))
                        .get(EVERY_SECONDS - 2, TimeUnit.SECONDS); // less than the period: runs never pile up
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (ExecutionException | TimeoutException e) {
                LOG.debug("some history samples missing: {}", e.toString()); // those that did finish are kept
            }
            counts.forEach((id, f) -> {
                if (f.isDone() && !f.isCompletedExceptionally()) {
                    series.computeIfAbsent(id, k -> new Series()).add(now / 1000, f.join(), now);
                } else {
                    f.cancel(false);
                }
            });
        } catch (RuntimeException e) { // a periodic task: an exception would cancel it for good
            LOG.warn("queue history sample failed", e);
        } finally {
            sampling = false;
        }
    }

    /** A signed-in console request came: keep sampling for the next hour. */
    void used() {
        lastUsedMillis = services.nowMillis();
    }

    /** The queue's sent and received messages per second over the last 10 s, or null when not known. */
    float[] rates(long queueId) {
        Series s = series.get(queueId);
        float[] r = s == null ? null : s.latestRates();
        return r == null || r[0] < 0 || r[1] < 0 ? null : r;
    }

    /** The queue's samples as JSON, or null if it is not sampled (yet, or past the cap). */
    String json(long queueId) {
        Series s = series.get(queueId);
        return s == null ? null : s.json(services.nowMillis() / 1000);
    }
}
