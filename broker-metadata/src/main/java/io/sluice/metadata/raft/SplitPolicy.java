package io.sluice.metadata.raft;

import io.sluice.catalog.QueueMetadata;
import io.sluice.metadata.image.ClusterImage;
import io.sluice.metadata.image.PartitionLoad;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * When a hot standard queue gets more partitions by itself (the metadata leader's call; {@link MetadataServer} asks
 * it every few seconds and raises the counts it returns).
 *
 * <p>A queue splits (its partition count doubles, up to {@link Settings#maxPartitions}) when, over the last
 * {@link Settings#sustainMillis}:
 * <ul>
 *   <li>its messages sent per second per partition (all its partitions counted, reported or not) stayed above
 *       {@link Settings#sendsPerSecondPerPartition}, or</li>
 *   <li>its oldest message stayed older than {@link Settings#oldestAgeMillis} while consumers were receiving from it
 *       (consumers falling behind; a queue nobody reads gains nothing from more partitions).</li>
 * </ul>
 * Never a FIFO queue (a message group's order lives on the partition its id hashes to), never one whose
 * {@code SluiceAutoSplit} attribute is {@code false}, and not again within {@link Settings#cooldownMillis} of its last
 * split. The figures come from the partitions' primaries ({@link #observe}); a partition not reported for a window
 * counts as idle. Not thread-safe: the leader task alone calls it (and the heartbeat path through
 * {@link MetadataServer}, which synchronizes).
 */
public final class SplitPolicy {
    /** Cluster-wide thresholds ({@code sluice.autosplit.*}). */
    public record Settings(boolean enabled, double sendsPerSecondPerPartition, long oldestAgeMillis, long sustainMillis,
                           int maxPartitions, long cooldownMillis) {
        public static final Settings DISABLED = new Settings(false, 0, 0, 0, 1, 0);
    }

    /** One split: the queue and its partition counts before and after, and why. */
    public record Split(String queue, int from, int to, String reason) {
    }

    private record Sample(long atMillis, long sent, long received, long oldestMillis) {
    }

    private final Settings settings;
    private final Map<String, ArrayDeque<Sample>> samples = new HashMap<>();
    private final Map<Long, Long> lastSplitMillis = new HashMap<>();

    public SplitPolicy(Settings settings) {
        this.settings = settings;
    }

    public Settings settings() {
        return settings;
    }

    /** Takes the partitions' latest figures, reported at {@code nowMillis}. */
    public void observe(long nowMillis, Collection<PartitionLoad> loads) {
        if (!settings.enabled()) {
            return;
        }
        for (PartitionLoad l : loads) {
            ArrayDeque<Sample> s = samples.computeIfAbsent(l.key(), k -> new ArrayDeque<>());
            s.addLast(new Sample(nowMillis, l.sent(), l.received(), l.oldestMillis()));
        }
    }

    /** The queues to split now, given the catalog; forgets figures older than the window. */
    public List<Split> decide(ClusterImage image, long nowMillis) {
        List<Split> splits = new ArrayList<>();
        if (!settings.enabled()) {
            return splits;
        }
        long windowStart = nowMillis - settings.sustainMillis();
        for (ArrayDeque<Sample> s : samples.values()) {
            while (s.size() > 1) { // keep the last sample at or before the window's start: rates count from it
                Sample head = s.pollFirst();
                if (s.peekFirst().atMillis() > windowStart) {
                    s.addFirst(head);
                    break;
                }
            }
        }
        samples.values().removeIf(s -> s.peekLast().atMillis() < windowStart);
        for (QueueMetadata q : image.queues().values()) {
            if (q.fifo() || q.partitions() >= settings.maxPartitions()
                    || "false".equalsIgnoreCase(q.attributes().get("SluiceAutoSplit"))
                    || nowMillis - lastSplitMillis.getOrDefault(q.queueId(), Long.MIN_VALUE / 2)
                            < settings.cooldownMillis()) {
                continue;
            }
            String reason = reason(q, windowStart, nowMillis);
            if (reason != null) {
                int to = Math.min(settings.maxPartitions(), q.partitions() * 2);
                splits.add(new Split(q.name(), q.partitions(), to, reason));
                lastSplitMillis.put(q.queueId(), nowMillis);
                for (int i = 0; i < q.partitions(); i++) {
                    samples.remove(q.queueId() + "/" + i); // the next decision measures the new layout afresh
                }
            }
        }
        return splits;
    }

    /** Why {@code q} should split, or null. */
    private String reason(QueueMetadata q, long windowStart, long nowMillis) {
        double sendsPerSecond = 0;
        boolean covered = false;
        boolean received = false;
        boolean oldAllAlong = false; // some partition's oldest message was old at every report in the window
        for (int i = 0; i < q.partitions(); i++) {
            ArrayDeque<Sample> s = samples.get(q.queueId() + "/" + i);
            if (s == null || s.size() < 2 || s.peekFirst().atMillis() > windowStart) {
                continue;
            }
            covered = true;
            Sample first = s.peekFirst();
            Sample last = s.peekLast();
            // to now, not to the last report: a partition reports only when its totals move
            sendsPerSecond += (last.sent() - first.sent()) * 1000.0 / Math.max(1, nowMillis - first.atMillis());
            received |= last.received() > first.received();
            boolean old = true;
            for (Sample sample : s) {
                if (sample.atMillis() > windowStart) {
                    old &= sample.oldestMillis() > 0
                            && sample.atMillis() - sample.oldestMillis() >= settings.oldestAgeMillis();
                }
            }
            oldAllAlong |= old;
        }
        if (!covered) {
            return null; // not observed for a whole window yet
        }
        double perPartition = sendsPerSecond / q.partitions();
        if (perPartition >= settings.sendsPerSecondPerPartition()) {
            return String.format("%.0f sends/s per partition over %d s (threshold %.0f)", perPartition,
                    settings.sustainMillis() / 1000, settings.sendsPerSecondPerPartition());
        }
        if (settings.oldestAgeMillis() > 0 && oldAllAlong && received) {
            return String.format("oldest message older than %d s for %d s while consumers receive",
                    settings.oldestAgeMillis() / 1000, settings.sustainMillis() / 1000);
        }
        return null;
    }
}
