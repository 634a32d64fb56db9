package io.sluice.metadata.raft;

import io.sluice.catalog.QueueMetadata;
import io.sluice.common.validation.QueueAttributeName;
import io.sluice.common.validation.RedrivePolicy;
import io.sluice.common.validation.Validated;
import io.sluice.metadata.image.ClusterImage;
import io.sluice.metadata.image.PartitionLoad;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * When a hot standard queue gets more partitions by itself (the metadata leader's call; {@link MetadataServer} asks
 * it every few seconds, raises the counts it returns and reports each one done).
 *
 * <p>At every check the policy measures each queue over the last {@value #MEASURED_MILLIS} ms that reports cover
 * (ending {@value #REPORT_LAG_MILLIS} ms ago, so every partition has reported since). A queue splits (its partition
 * count doubles, up to {@link Settings#maxPartitions}) when, at every check for {@link Settings#sustainMillis}:
 * <ul>
 *   <li>its messages sent per second per partition (all its partitions counted, reported or not) were at or above
 *       {@link Settings#sendsPerSecondPerPartition}, or</li>
 *   <li>a partition's oldest message was older than {@link Settings#oldestAgeMillis} while consumers received from
 *       the queue (consumers falling behind; a queue nobody reads gains nothing from more partitions).</li>
 * </ul>
 * A burst shorter than the window never splits a queue: its streak ends with it. Never a FIFO queue (a message group's order
 * lives on the partition its id hashes to), never a dead-letter queue (a retried hand-off must reach the partition
 * that deduplicates it, and copies are routed by the partition count), never one whose {@code SluiceAutoSplit} is
 * {@code false}, and not again within {@link Settings#cooldownMillis} of its last split. A member that becomes leader
 * does not know when its predecessor split: it treats every queue that already has more than one partition as just
 * split. The figures come from the partitions' primaries ({@link #observe}); a partition that does not report moved
 * nothing. Not thread-safe: {@link MetadataServer} synchronizes.
 */
public final class SplitPolicy {
    /** Cluster-wide thresholds ({@code sluice.autosplit.*}). */
    public record Settings(boolean enabled, double sendsPerSecondPerPartition, long oldestAgeMillis, long sustainMillis,
                           int maxPartitions, long cooldownMillis) {
        public static final Settings DISABLED = new Settings(false, 0, 0, 0, 1, 0);
    }

    /** One split: the queue and its partition counts before and after, and why. */
    public record Split(long queueId, String queue, int from, int to, String reason) {
    }

    private record Sample(long atMillis, long sent, long received, long oldestMillis) {
    }

    /** Why a queue is hot now, and since when that has held at every check. */
    private record Finding(String reason, long sinceMillis) {
    }

    /** The span each check measures. */
    static final long MEASURED_MILLIS = 10_000;
    /** How far back the measured span ends: primaries report every 5 s. */
    static final long REPORT_LAG_MILLIS = 5_000;

    private final Settings settings;
    private final Map<String, ArrayDeque<Sample>> samples = new HashMap<>();
    private final Map<Long, Long> hotSince = new HashMap<>();
    private final Map<Long, Long> oldSince = new HashMap<>();
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
            samples.computeIfAbsent(l.key(), k -> new ArrayDeque<>())
                    .addLast(new Sample(nowMillis, l.sent(), l.received(), l.oldestMillis()));
        }
    }

    /** This member just became leader: forget what it measured before, and start multi-partition queues cooled. */
    public void becameLeader(ClusterImage image, long nowMillis) {
        samples.clear();
        hotSince.clear();
        oldSince.clear();
        lastSplitMillis.clear();
        for (QueueMetadata q : image.queues().values()) {
            if (q.partitions() > 1) {
                lastSplitMillis.put(q.queueId(), nowMillis);
            }
        }
    }

    /** The split was committed: the queue cools down, and its new layout is measured afresh. */
    public void splitDone(Split split, long nowMillis) {
        lastSplitMillis.put(split.queueId(), nowMillis);
        hotSince.remove(split.queueId());
        oldSince.remove(split.queueId());
        for (int i = 0; i < split.from(); i++) {
            samples.remove(split.queueId() + "/" + i);
        }
    }

    /** The queues to split now, given the catalog. Call {@link #splitDone} for each one committed. */
    public List<Split> decide(ClusterImage image, long nowMillis) {
        List<Split> splits = new ArrayList<>();
        if (!settings.enabled()) {
            return splits;
        }
        long from = nowMillis - REPORT_LAG_MILLIS - MEASURED_MILLIS;
        forgetBefore(from);
        Set<String> deadLetterQueues = deadLetterTargets(image);
        Set<Long> present = new HashSet<>();
        for (QueueMetadata q : image.queues().values()) {
            present.add(q.queueId());
            if (q.fifo() || q.partitions() >= settings.maxPartitions() || deadLetterQueues.contains(q.name())
                    || "false".equalsIgnoreCase(q.attributes().get(QueueAttributeName.SLUICE_AUTO_SPLIT.wireName()))) {
                continue;
            }
            Finding finding = measure(q, from, nowMillis);
            if (finding == null || nowMillis - finding.sinceMillis() < settings.sustainMillis()) {
                continue;
            }
            Long last = lastSplitMillis.get(q.queueId());
            if (last != null && nowMillis - last < settings.cooldownMillis()) {
                continue;
            }
            splits.add(new Split(q.queueId(), q.name(), q.partitions(),
                    Math.min(settings.maxPartitions(), q.partitions() * 2),
                    finding.reason() + " for " + (nowMillis - finding.sinceMillis()) / 1000 + " s"));
        }
        hotSince.keySet().retainAll(present);
        oldSince.keySet().retainAll(present);
        lastSplitMillis.keySet().retainAll(present);
        return splits;
    }

    /** Keeps, per partition, the samples from the last one at or before {@code from} on; drops silent partitions. */
    private void forgetBefore(long from) {
        for (Iterator<ArrayDeque<Sample>> it = samples.values().iterator(); it.hasNext(); ) {
            ArrayDeque<Sample> s = it.next();
            while (s.size() > 1) {
                Sample head = s.pollFirst();
                if (s.peekFirst().atMillis() > from) {
                    s.addFirst(head);
                    break;
                }
            }
            if (s.peekLast().atMillis() < from - settings.sustainMillis()) {
                it.remove(); // silent for a long while: idle
            }
        }
    }

    /**
     * Measures {@code q} over [from, from + {@value #MEASURED_MILLIS}], updates its streaks, and returns what holds
     * now (its rate first), or null.
     */
    private Finding measure(QueueMetadata q, long from, long nowMillis) {
        long to = from + MEASURED_MILLIS;
        double sent = 0;
        double received = 0;
        boolean old = false;
        for (int i = 0; i < q.partitions(); i++) {
            ArrayDeque<Sample> s = samples.get(q.queueId() + "/" + i);
            if (s == null) {
                continue;
            }
            sent += valueAt(s, to, true) - valueAt(s, from, true);
            received += valueAt(s, to, false) - valueAt(s, from, false);
            Sample latest = s.peekLast();
            old |= latest.atMillis() >= from && latest.oldestMillis() > 0
                    && latest.atMillis() - latest.oldestMillis() >= settings.oldestAgeMillis();
        }
        double perPartition = sent * 1000.0 / MEASURED_MILLIS / q.partitions();
        boolean hot = perPartition >= settings.sendsPerSecondPerPartition();
        boolean behind = settings.oldestAgeMillis() > 0 && old && received > 0;
        streak(hotSince, q.queueId(), hot, nowMillis);
        streak(oldSince, q.queueId(), behind, nowMillis);
        if (hot) {
            return new Finding(String.format("sends %.0f/s per partition (threshold %.0f)", perPartition,
                    settings.sendsPerSecondPerPartition()), hotSince.get(q.queueId()));
        }
        return behind ? new Finding("oldest message older than " + settings.oldestAgeMillis() / 1000
                + " s while consumers receive", oldSince.get(q.queueId())) : null;
    }

    private static void streak(Map<Long, Long> since, long queueId, boolean holds, long nowMillis) {
        if (holds) {
            since.putIfAbsent(queueId, nowMillis);
        } else {
            since.remove(queueId);
        }
    }

    /** A partition's sent (or received) total at {@code t}, interpolated between its reports. */
    private static double valueAt(ArrayDeque<Sample> s, long t, boolean sent) {
        Sample before = null;
        for (Sample sample : s) {
            long v = sent ? sample.sent() : sample.received();
            if (sample.atMillis() >= t) {
                if (before == null) {
                    return v; // nothing reported before t: count from the first report
                }
                long bv = sent ? before.sent() : before.received();
                return bv + (v - bv) * (double) (t - before.atMillis()) / (sample.atMillis() - before.atMillis());
            }
            before = sample;
        }
        return sent ? before.sent() : before.received(); // no report since: it moved nothing
    }

    private static Set<String> deadLetterTargets(ClusterImage image) {
        Set<String> names = new HashSet<>();
        for (QueueMetadata q : image.queues().values()) {
            String policy = q.attributes().get(QueueAttributeName.REDRIVE_POLICY.wireName());
            if (policy != null) {
                Validated<RedrivePolicy> parsed = RedrivePolicy.parse(policy);
                if (parsed.isOk()) {
                    parsed.value().targetArn().ifPresent(arn -> names.add(arn.queueName()));
                }
            }
        }
        return names;
    }
}
