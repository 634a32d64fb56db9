package io.sluice.partition;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * A partition's counts at one minute, as its shard's replicas record them for the console's charts (the figures
 * stay until the next point).
 *
 * @param minute the minute (milliseconds since the epoch / 60,000)
 */
public record HistoryPoint(long minute, int visible, int inflight, int delayed, long oldestRetentionBaseMillis,
                           long sentTotal, long receivedTotal) {
    private static final int BYTES = 8 + 4 * 3 + 8 * 3;

    public static HistoryPoint of(long minute, QueueCounts c) {
        return new HistoryPoint(minute, c.visible(), c.inflight(), c.delayed(), c.oldestRetentionBaseMillis(),
                c.sentTotal(), c.receivedTotal());
    }

    /** Whether the figures (all but the minute) are the same. */
    public boolean sameFigures(HistoryPoint o) {
        return visible == o.visible && inflight == o.inflight && delayed == o.delayed
                && oldestRetentionBaseMillis == o.oldestRetentionBaseMillis && sentTotal == o.sentTotal
                && receivedTotal == o.receivedTotal;
    }

    public static byte[] encodeList(List<HistoryPoint> points) {
        ByteBuffer b = ByteBuffer.allocate(4 + BYTES * points.size()).putInt(points.size());
        for (HistoryPoint p : points) {
            b.putLong(p.minute).putInt(p.visible).putInt(p.inflight).putInt(p.delayed)
                    .putLong(p.oldestRetentionBaseMillis).putLong(p.sentTotal).putLong(p.receivedTotal);
        }
        return b.array();
    }

    public static List<HistoryPoint> decodeList(byte[] bytes) {
        ByteBuffer b = ByteBuffer.wrap(bytes);
        int n = b.getInt();
        if (n < 0 || b.remaining() != (long) n * BYTES) {
            throw new IllegalArgumentException("malformed history of " + n + " points");
        }
        List<HistoryPoint> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(new HistoryPoint(b.getLong(), b.getInt(), b.getInt(), b.getInt(), b.getLong(), b.getLong(),
                    b.getLong()));
        }
        return out;
    }
}
