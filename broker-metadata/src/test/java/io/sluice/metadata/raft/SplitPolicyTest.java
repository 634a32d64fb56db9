package io.sluice.metadata.raft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.catalog.QueueMetadata;
import io.sluice.metadata.image.ClusterImage;
import io.sluice.metadata.image.PartitionLoad;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * The auto-split rules on made-up reports, 5 s apart: a hot standard queue doubles once its rate held for the whole
 * window, up to the cap and not again within the cool-down; quiet, FIFO and opted-out queues never split; an old
 * backlog splits only while consumers receive.
 */
class SplitPolicyTest {
    static final SplitPolicy.Settings SETTINGS = new SplitPolicy.Settings(true, 100, 60_000, 30_000, 8, 120_000);

    private final SplitPolicy policy = new SplitPolicy(SETTINGS);
    private final TreeMap<String, QueueMetadata> queues = new TreeMap<>();
    private long now = 1_000_000;

    private QueueMetadata queue(String name, long id, boolean fifo, int partitions, Map<String, String> attributes) {
        QueueMetadata q = new QueueMetadata(name, id, fifo, attributes, Map.of(), 100, 100, partitions, 1);
        queues.put(name, q);
        return q;
    }

    private ClusterImage image() {
        return new ClusterImage(1, 100, queues, new TreeMap<>(), new TreeMap<>(), new TreeMap<>(), new TreeMap<>(),
                new TreeMap<>(), null);
    }

    /** Runs {@code seconds} of 5 s reports in which each partition of {@code q} gets {@code perSecond} sends. */
    private List<SplitPolicy.Split> run(QueueMetadata q, int seconds, double perSecond, long received,
                                        long oldestMillis) {
        List<SplitPolicy.Split> splits = new ArrayList<>();
        for (int t = 0; t < seconds; t += 5) {
            now += 5_000;
            List<PartitionLoad> loads = new ArrayList<>();
            for (int i = 0; i < q.partitions(); i++) {
                loads.add(new PartitionLoad(q.queueId(), i, (long) (perSecond * (now - 1_000_000) / 1000),
                        received * (now - 1_000_000) / 1000, oldestMillis));
            }
            policy.observe(now, loads);
            splits.addAll(policy.decide(image(), now));
        }
        return splits;
    }

    @Test
    void aHotQueueDoublesOnceItsRateHeldForTheWindowThenCoolsDown() {
        QueueMetadata hot = queue("hot", 1, false, 1, Map.of());
        assertEquals(List.of(), run(hot, 30, 150, 0, 0), "not before the rate held for a whole window");
        List<SplitPolicy.Split> splits = run(hot, 10, 150, 0, 0);
        assertEquals(1, splits.size(), splits.toString());
        assertEquals(new SplitPolicy.Split("hot", 1, 2, splits.get(0).reason()), splits.get(0));
        assertTrue(splits.get(0).reason().contains("sends/s per partition"), splits.get(0).reason());
        QueueMetadata two = queue("hot", 1, false, 2, Map.of());
        assertEquals(List.of(), run(two, 105, 150, 0, 0), "not again within the cool-down (120 s)");
        assertEquals(4, run(two, 10, 150, 0, 0).get(0).to(), "after the cool-down, 2 -> 4");
        QueueMetadata eight = queue("hot", 1, false, 8, Map.of());
        now += 200_000;
        assertEquals(List.of(), run(eight, 60, 1_000, 0, 0), "never past the cap");
    }

    @Test
    void quietFifoAndOptedOutQueuesNeverSplit() {
        QueueMetadata quiet = queue("quiet", 1, false, 1, Map.of());
        QueueMetadata fifo = queue("f.fifo", 2, true, 1, Map.of());
        QueueMetadata out = queue("out", 3, false, 1, Map.of("SluiceAutoSplit", "false"));
        assertEquals(List.of(), run(quiet, 300, 99, 99, 0), "just under the threshold");
        assertEquals(List.of(), run(fifo, 300, 10_000, 0, 0));
        assertEquals(List.of(), run(out, 300, 10_000, 0, 0));
        queue("spread", 4, false, 2, Map.of());
        List<PartitionLoad> onlyOne = List.of(new PartitionLoad(4, 0, 0, 0, 0));
        policy.observe(now, onlyOne);
        for (int t = 5; t <= 60; t += 5) { // 150/s on one of two partitions: 75 per partition
            policy.observe(now + t * 1000L, List.of(new PartitionLoad(4, 0, 150L * t, 0, 0)));
            assertEquals(List.of(), policy.decide(image(), now + t * 1000L), "at " + t + " s");
        }
    }

    @Test
    void anOldBacklogSplitsOnlyWhileConsumersReceive() {
        QueueMetadata backlog = queue("backlog", 1, false, 1, Map.of());
        long oldest = now - 120_000; // two minutes old already, threshold one
        assertEquals(List.of(), run(backlog, 120, 1, 0, oldest), "nobody receives: more partitions would not help");
        List<SplitPolicy.Split> splits = run(backlog, 40, 1, 5, oldest);
        assertEquals(1, splits.size(), splits.toString());
        assertTrue(splits.get(0).reason().contains("oldest message"), splits.get(0).reason());
        QueueMetadata young = queue("young", 2, false, 1, Map.of());
        assertEquals(List.of(), run(young, 40, 1, 5, now), "a young backlog is no reason");
    }

    @Test
    void disabledDecidesNothing() {
        SplitPolicy off = new SplitPolicy(SplitPolicy.Settings.DISABLED);
        queue("hot", 1, false, 1, Map.of());
        for (int t = 0; t < 120; t += 5) {
            off.observe(now + t * 1000L, List.of(new PartitionLoad(1, 0, 10_000L * t, 0, 0)));
            assertEquals(List.of(), off.decide(image(), now + t * 1000L));
        }
    }
}
