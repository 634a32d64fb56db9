package io.sluice.backend.engine;

/**
 * How late messages arrive: arrival time minus {@code Sluice.ProducerTime}, for operators sizing a FIFO queue's
 * reorder window. Two views of the same observations (a producer clock ahead of the partition's counts as 0):
 *
 * <ul>
 *   <li>the 99th percentile over the last 5-10 minutes ({@code SluiceArrivalSkewP99Millis}): log-linear buckets
 *       (exact below 16 ms, then 8 per power of two, so the figure is at most 1/8 above the true value), in two
 *       five-minute windows aligned on the partition's clock, the current and the one before;</li>
 *   <li>a cumulative histogram with Prometheus' usual bounds, for {@code sluice_queue_arrival_skew_seconds}.</li>
 * </ul>
 *
 * <p>Kept in memory by each replica as it applies sends (not stored): a restart or a new primary starts afresh.
 * Applier thread only; {@link #snapshot} copies.
 */
public final class ArrivalSkew {
    static final long WINDOW_MILLIS = 5 * 60_000L;
    /** Upper bounds (seconds) of the exported histogram's buckets; +Inf follows. */
    static final double[] BOUNDS_SECONDS = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
    private static final int EXACT = 16;
    private static final int BUCKETS = EXACT + (31 - 4 + 1) * 8;

    private long windowId = Long.MIN_VALUE;
    private int[] current;
    private int[] previous;
    private final long[] cumulative = new long[BOUNDS_SECONDS.length + 1];
    private double sumSeconds;

    /** What the metrics export: per-bucket counts (not cumulative; the last is +Inf) and the sum. */
    public record Snapshot(double[] boundsSeconds, long[] counts, double sumSeconds) {
    }

    void record(long skewMillis, long nowMillis) {
        long v = Math.max(0, Math.min(skewMillis, Integer.MAX_VALUE));
        roll(nowMillis);
        current[bucket(v)]++;
        double seconds = v / 1000.0;
        int i = 0;
        while (i < BOUNDS_SECONDS.length && seconds > BOUNDS_SECONDS[i]) {
            i++;
        }
        cumulative[i]++;
        sumSeconds += seconds;
    }

    /** The 99th percentile in milliseconds over this window and the one before, or -1 with no observations. */
    long p99Millis(long nowMillis) {
        long id = Math.floorDiv(nowMillis, WINDOW_MILLIS);
        int[] cur = id == windowId ? current : null;
        int[] prev = id == windowId ? previous : id == windowId + 1 ? current : null;
        long total = 0;
        for (int i = 0; i < BUCKETS; i++) {
            total += at(cur, i) + at(prev, i);
        }
        if (total == 0) {
            return -1;
        }
        long rank = (total * 99 + 99) / 100; // ceil(0.99 n)
        long seen = 0;
        for (int i = 0; i < BUCKETS; i++) {
            seen += at(cur, i) + at(prev, i);
            if (seen >= rank) {
                return upperBound(i);
            }
        }
        return upperBound(BUCKETS - 1);
    }

    /** The cumulative histogram, or null when nothing was ever observed. */
    Snapshot snapshot() {
        return windowId == Long.MIN_VALUE ? null : new Snapshot(BOUNDS_SECONDS, cumulative.clone(), sumSeconds);
    }

    private static int at(int[] counts, int i) {
        return counts == null ? 0 : counts[i];
    }

    private void roll(long nowMillis) {
        long id = Math.floorDiv(nowMillis, WINDOW_MILLIS);
        if (id == windowId) {
            return;
        }
        previous = id == windowId + 1 ? current : null;
        current = new int[BUCKETS];
        windowId = id;
    }

    static int bucket(long v) {
        if (v < EXACT) {
            return (int) v;
        }
        int exponent = 63 - Long.numberOfLeadingZeros(v); // >= 4
        int sub = (int) (v >>> (exponent - 3)) & 7;
        return EXACT + (exponent - 4) * 8 + sub;
    }

    static long upperBound(int bucket) {
        if (bucket < EXACT) {
            return bucket;
        }
        int exponent = (bucket - EXACT) / 8 + 4;
        int sub = (bucket - EXACT) % 8;
        return ((8L + sub + 1) << (exponent - 3)) - 1;
    }
}
