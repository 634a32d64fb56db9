package io.sluice.frontend.console;

import io.sluice.catalog.QueueMetadata;
import io.sluice.frontend.action.QueueAttributeActions;
import io.sluice.frontend.service.SqsServices;
import io.sluice.partition.PartitionId;
import io.sluice.partition.QueueCounts;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the console's queue list and charts show: every queue's depth (visible, in flight, delayed), the age of its
 * oldest message and its send and receive rates, sampled every {@link #EVERY_SECONDS} seconds with one counts read per
 * shard, in the memory of this node (a restart starts the charts again). The list reads the latest sample of every
 * queue (~100 bytes each); the charts keep the last hour of at most {@code maxQueues} queues (the first by name: 360
 * samples of four ints, two floats and a time, ~11.5 KB each). It samples only while the console is in use (a
 * signed-in request in the last hour), so a node nobody looks at pays nothing.
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
        static float rate(long before, long after, float seconds) {
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

    /** A queue's counts in the latest sample, and its rates since the one before (-1: not known). */
    record Latest(QueueCounts counts, float sentRate, float receivedRate) {
    }

    /** Every queue's counts at one time (a queue whose partitions did not all answer is missing). */
    record Snapshot(long atMillis, Map<Long, Latest> queues) {
    }

    private final SqsServices services;
    private final int maxQueues;
    private final Map<Long, Series> series = new ConcurrentHashMap<>();
    private volatile Snapshot latest;
    /** When a signed-in console request last came (ms); sampling stops an hour after it. */
    private volatile long lastUsedMillis = Long.MIN_VALUE / 2;

    /** @param maxQueues how many queues (the first by name) get charts; every queue gets the list's counts */
    public QueueHistory(SqsServices services, int maxQueues) {
        this.services = services;
        this.maxQueues = maxQueues;
    }

    /**
     * Samples every queue once, from one counts read per shard ({@code PartitionService.allCounts}), and adds the
     * charts' points; a periodic task calls it every {@link #EVERY_SECONDS} seconds. Samples are taken one at a time.
     */
    public synchronized void sample() {
        if (services.nowMillis() - lastUsedMillis > 3_600_000L) {
            if (!series.isEmpty() || latest != null) {
                series.clear(); // nobody looked for an hour: the charts start again when someone does
                latest = null;
            }
            return;
        }
        try {
            takeSample(true);
        } catch (RuntimeException e) { // a periodic task: an exception would cancel it for good
            LOG.warn("queue history sample failed", e);
        }
    }

    /**
     * The latest sample, taken now if it is older than {@link #FRESH_MILLIS} (a page shows what was just sent, and
     * pages asking together share one sample); null if none could be taken. May wait for the shards: never call it on
     * an event loop.
     */
    Snapshot fresh() {
        used();
        Snapshot s = latest;
        if (s != null && services.nowMillis() - s.atMillis() <= FRESH_MILLIS) {
            return s;
        }
        synchronized (this) {
            s = latest;
            if (s == null || services.nowMillis() - s.atMillis() > FRESH_MILLIS) {
                takeSample(false); // the charts keep their period: no point for them
                s = latest;
            }
            return s;
        }
    }

    /** How old a sample a page still shows without taking a new one. */
    static final long FRESH_MILLIS = 2_000;

    private void takeSample(boolean chart) {
        long now = services.nowMillis();
        Map<PartitionId, QueueCounts> all;
        try { // less than the period: runs never pile up
            all = services.partitions().allCounts().get(EVERY_SECONDS - 2, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        } catch (ExecutionException | TimeoutException e) {
            LOG.debug("queue counts not sampled: {}", e.toString());
            return;
        }
        List<QueueMetadata> queues = services.catalog().list("");
        Snapshot before = latest;
        float seconds = before == null ? 0 : (now - before.atMillis()) / 1000f;
        Map<Long, Latest> next = new HashMap<>(queues.size() * 2);
        Set<Long> charted = new HashSet<>();
        for (QueueMetadata q : queues) {
            List<QueueCounts> parts = new ArrayList<>(q.partitions());
            for (PartitionId id : services.partitionIds(q)) {
                QueueCounts c = all.get(id);
                if (c == null) {
                    break; // a shard that did not answer, or a partition not opened yet: not known, not zero
                }
                parts.add(c);
            }
            boolean charting = chart && charted.size() < maxQueues;
            if (charting) {
                charted.add(q.queueId());
            }
            if (parts.size() < q.partitions()) {
                continue;
            }
            QueueCounts c = QueueAttributeActions.sum(parts);
            Latest was = before == null ? null : before.queues().get(q.queueId());
            next.put(q.queueId(), new Latest(c, Series.rate(was == null ? -1 : was.counts().sentTotal(),
                    c.sentTotal(), seconds), Series.rate(was == null ? -1 : was.counts().receivedTotal(),
                    c.receivedTotal(), seconds)));
            if (charting) {
                series.computeIfAbsent(q.queueId(), k -> new Series()).add(now / 1000, c, now);
            }
        }
        if (chart) {
            series.keySet().retainAll(charted); // deleted queues' series go
        }
        latest = new Snapshot(now, next);
    }

    /** A signed-in console request came: keep sampling for the next hour. */
    void used() {
        lastUsedMillis = services.nowMillis();
    }


    /** The queue's samples as JSON, or null if it is not sampled (yet, or past the cap). */
    String json(long queueId) {
        Series s = series.get(queueId);
        return s == null ? null : s.json(services.nowMillis() / 1000);
    }
}
