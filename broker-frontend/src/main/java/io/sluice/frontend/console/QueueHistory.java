package io.sluice.frontend.console;

import io.sluice.catalog.QueueMetadata;
import io.sluice.frontend.action.QueueAttributeActions;
import io.sluice.frontend.service.SqsServices;
import io.sluice.partition.HistoryPoint;
import io.sluice.partition.PartitionId;
import io.sluice.partition.QueueCounts;
import java.util.ArrayList;
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

        /** Appends the samples at or after {@code fromSeconds}, oldest first. */
        synchronized void appendTo(ChartData chart, long fromSeconds) {
            for (int k = 0; k < size; k++) {
                int p = (next - size + k + POINTS) % POINTS;
                if (at[p] >= fromSeconds) {
                    chart.add(at[p], visible[p], inflight[p], delayed[p], oldestSeconds[p], sentRate[p],
                            receivedRate[p]);
                }
            }
        }

        /** When the oldest sample kept was taken (seconds), or -1 with none. */
        synchronized long firstAtSeconds() {
            return size == 0 ? -1 : at[(next - size + POINTS) % POINTS];
        }
    }

    /** A chart's points, oldest first, rendered as the JSON object of arrays the charts' script draws. */
    static final class ChartData {
        private final StringBuilder t = new StringBuilder();
        private final StringBuilder v = new StringBuilder();
        private final StringBuilder i = new StringBuilder();
        private final StringBuilder d = new StringBuilder();
        private final StringBuilder o = new StringBuilder();
        private final StringBuilder sr = new StringBuilder();
        private final StringBuilder rr = new StringBuilder();
        private int points;

        void add(long atSeconds, long visible, long inflight, long delayed, long oldestSeconds, float sent,
                 float received) {
            String sep = points++ == 0 ? "" : ",";
            t.append(sep).append(atSeconds);
            v.append(sep).append(visible);
            i.append(sep).append(inflight);
            d.append(sep).append(delayed);
            o.append(sep).append(oldestSeconds);
            sr.append(sep).append(sent < 0 ? "null" : String.format(Locale.ROOT, "%.1f", sent));
            rr.append(sep).append(received < 0 ? "null" : String.format(Locale.ROOT, "%.1f", received));
        }

        int points() {
            return points;
        }

        /** The JSON: the range's ends ({@code from}, {@code now}, seconds) and the arrays (numbers only). */
        String json(long fromSeconds, long nowSeconds) {
            return "{\"from\":" + fromSeconds + ",\"now\":" + nowSeconds + ",\"t\":[" + t + "],\"visible\":[" + v
                    + "],\"inflight\":[" + i + "],\"delayed\":[" + d + "],\"oldest\":[" + o + "],\"sent\":["
                    + sr + "],\"received\":[" + rr + "]}";
        }
    }

    /**
     * Recorded minutes summed over a queue's partitions, appended to {@code chart}: for each minute in
     * {@code [fromMinute, toMinute)} each partition's figures are its last point at or before it, if that point is
     * at most the keep-alive old (else the minute is a gap: a replica was not recording then); rates are the totals'
     * growth since the previous minute shown.
     */
    static void appendRecorded(ChartData chart, List<List<HistoryPoint>> partitions, long fromMinute, long toMinute) {
        int[] cursor = new int[partitions.size()];
        long lastSent = -1;
        long lastReceived = -1;
        long lastMinute = -1;
        for (long m = fromMinute; m < toMinute; m++) {
            long visible = 0;
            long inflight = 0;
            long delayed = 0;
            long oldest = -1;
            long sent = 0;
            long received = 0;
            boolean known = true;
            for (int p = 0; p < partitions.size() && known; p++) {
                List<HistoryPoint> points = partitions.get(p);
                while (cursor[p] + 1 < points.size() && points.get(cursor[p] + 1).minute() <= m) {
                    cursor[p]++;
                }
                HistoryPoint h = points.isEmpty() ? null : points.get(cursor[p]);
                if (h == null || h.minute() > m || m - h.minute() > KEEPALIVE_MINUTES) {
                    known = false;
                    break;
                }
                visible += h.visible();
                inflight += h.inflight();
                delayed += h.delayed();
                if (h.oldestRetentionBaseMillis() >= 0 && (oldest < 0 || h.oldestRetentionBaseMillis() < oldest)) {
                    oldest = h.oldestRetentionBaseMillis();
                }
                sent = sent < 0 || h.sentTotal() < 0 ? -1 : sent + h.sentTotal();
                received = received < 0 || h.receivedTotal() < 0 ? -1 : received + h.receivedTotal();
            }
            if (!known || partitions.isEmpty()) {
                lastMinute = -1;
                continue;
            }
            long seconds = lastMinute < 0 ? 0 : (m - lastMinute) * 60;
            chart.add(m * 60, visible, inflight, delayed, oldest < 0 ? 0 : Math.max(0, (m * 60_000 - oldest) / 1000),
                    Series.rate(lastSent, sent, seconds), Series.rate(lastReceived, received, seconds));
            lastSent = sent;
            lastReceived = received;
            lastMinute = m;
        }
    }

    /** The replicas write a point at least this often ({@code ShardHistory}'s keep-alive). */
    static final int KEEPALIVE_MINUTES = 10;

    /** The ranges the charts offer, in seconds: 15 minutes, an hour, 6 hours, a day. */
    static final List<Integer> RANGES = List.of(900, 3_600, 21_600, 86_400);

    /**
     * A queue's chart over the last {@code rangeSeconds}: this node's 10-second samples where it has them, and before
     * them the minutes its partitions' replicas recorded (kept across restarts and leader changes); the JSON the
     * charts' script draws.
     */
    CompletableFuture<String> chart(QueueMetadata queue, int rangeSeconds) {
        long now = services.nowMillis();
        long from = now - rangeSeconds * 1000L;
        Series s = series.get(queue.queueId());
        long firstSampled = s == null || s.firstAtSeconds() < 0 ? Long.MAX_VALUE : s.firstAtSeconds() * 1000;
        long recordedTo = Math.min(now, firstSampled);
        CompletableFuture<List<List<HistoryPoint>>> recorded;
        if (recordedTo <= from) {
            recorded = CompletableFuture.completedFuture(List.of());
        } else {
            List<CompletableFuture<List<HistoryPoint>>> parts = services.partitionIds(queue).stream()
                    .map(id -> services.partitions().history(id, from, recordedTo)
                            .exceptionally(e -> List.of())) // a shard that cannot answer leaves a gap
                    .toList();
            recorded = CompletableFuture.allOf(parts.toArray(CompletableFuture[]::new))
                    .thenApply(v -> parts.stream().map(CompletableFuture::join).toList());
        }
        return recorded.thenApply(parts -> {
            ChartData chart = new ChartData();
            if (!parts.isEmpty()) { // up to the minute of the first sample here, or this minute when there is none
                appendRecorded(chart, parts, Math.floorDiv(from, 60_000) + 1,
                        Math.floorDiv(recordedTo, 60_000) + (s == null || s.firstAtSeconds() < 0 ? 1 : 0));
            }
            if (s != null) {
                s.appendTo(chart, Math.max(from, Math.min(firstSampled, now)) / 1000);
            }
            return chart.json(from / 1000, now / 1000);
        });
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
}
