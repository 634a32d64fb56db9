package io.sluice.metadata.raft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.catalog.QueueMetadata;
import io.sluice.metadata.image.ClusterImage;
import io.sluice.metadata.image.PartitionLoad;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * The auto-split rules on made-up reports and checks, both every 5 s: a hot standard queue doubles once its rate held
 * at every check for the whole window, up to the cap and not again within the cool-down (nor after a leader change);
 * a burst, quiet, FIFO, dead-letter and opted-out queues never split; an old backlog splits only while consumers
 * receive; a refused split is tried again.
 */
class SplitPolicyTest {
    static final SplitPolicy.Settings SETTINGS = new SplitPolicy.Settings(true, 100, 60_000, 30_000, 8, 120_000);

    private SplitPolicy policy = new SplitPolicy(SETTINGS);
    private final TreeMap<String, QueueMetadata> queues = new TreeMap<>();
    /** Each partition's running totals: sent, received. */
    private final Map<String, long[]> totals = new HashMap<>();
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

    /**
     * {@code seconds} of 5 s steps in which each partition of {@code q} gets {@code sendsPerSecond} sends and
     * {@code receivesPerSecond} receives, reports, and the policy checks; splits are reported done.
     */
    private List<SplitPolicy.Split> run(QueueMetadata q, int seconds, long sendsPerSecond, long receivesPerSecond,
                                        long oldestMillis) {
        List<SplitPolicy.Split> splits = new ArrayList<>();
        for (int t = 0; t < seconds; t += 5) {
            now += 5_000;
            List<PartitionLoad> loads = new ArrayList<>();
            for (int i = 0; i < q.partitions(); i++) {
                long[] sr = totals.computeIfAbsent(q.queueId() + "/" + i, k -> new long[2]);
                sr[0] += sendsPerSecond * 5;
                sr[1] += receivesPerSecond * 5;
                loads.add(new PartitionLoad(q.queueId(), i, sr[0], sr[1], oldestMillis));
            }
            policy.observe(now, loads);
            for (SplitPolicy.Split s : policy.decide(image(), now)) {
                policy.splitDone(s, now);
                splits.add(s);
            }
        }
        return splits;
    }

    @Test
    void aHotQueueDoublesOnceItsRateHeldForTheWindowThenCoolsDown() {
        QueueMetadata hot = queue("hot", 1, false, 1, Map.of());
        assertEquals(List.of(), run(hot, 45, 150, 0, 0), "not before the rate held for a whole window");
        List<SplitPolicy.Split> splits = run(hot, 15, 150, 0, 0);
        assertEquals(1, splits.size(), splits.toString());
        assertEquals(1, splits.get(0).from());
        assertEquals(2, splits.get(0).to());
        assertTrue(splits.get(0).reason().startsWith("sends 150/s per partition"), splits.get(0).reason());
        QueueMetadata two = queue("hot", 1, false, 2, Map.of());
        assertEquals(List.of(), run(two, 105, 150, 0, 0), "not again within the cool-down (120 s)");
        assertEquals(4, run(two, 10, 150, 0, 0).get(0).to(), "after the cool-down, 2 -> 4");
        QueueMetadata eight = queue("hot", 1, false, 8, Map.of());
        now += 200_000;
        assertEquals(List.of(), run(eight, 120, 1_000, 0, 0), "never past the cap");
    }

    @Test
    void aBurstShorterThanTheWindowDoesNotSplit() {
        QueueMetadata bursty = queue("bursty", 1, false, 1, Map.of());
        for (int round = 0; round < 4; round++) { // 20 s at 7,000/s, then 40 s quiet: the average is way above 100/s
            assertEquals(List.of(), run(bursty, 20, 7_000, 0, 0));
            assertEquals(List.of(), run(bursty, 40, 0, 0, 0));
        }
    }

    @Test
    void quietFifoDeadLetterAndOptedOutQueuesNeverSplit() {
        QueueMetadata quiet = queue("quiet", 1, false, 1, Map.of());
        QueueMetadata fifo = queue("f.fifo", 2, true, 1, Map.of());
        QueueMetadata out = queue("out", 3, false, 1, Map.of("SluiceAutoSplit", "false"));
        QueueMetadata dlq = queue("dlq", 4, false, 1, Map.of());
        queue("source", 5, false, 1, Map.of("RedrivePolicy",
                "{\"deadLetterTargetArn\":\"arn:aws:sqs:us-east-1:000000000000:dlq\",\"maxReceiveCount\":3}"));
        assertEquals(List.of(), run(quiet, 300, 99, 99, 0), "just under the threshold");
        assertEquals(List.of(), run(fifo, 300, 10_000, 0, 0));
        assertEquals(List.of(), run(out, 300, 10_000, 0, 0));
        assertEquals(List.of(), run(dlq, 300, 10_000, 0, 0), "a dead-letter queue keeps its copies' routing");
        queue("out", 3, false, 1, Map.of());
        assertEquals(1, run(out, 60, 10_000, 0, 0).size(), "the same flood splits it once it opts back in");
    }

    @Test
    void halfTheQueuesPartitionsHotIsHalfTheRate() {
        QueueMetadata spread = queue("spread", 6, false, 2, Map.of());
        for (int t = 0; t < 120; t += 5) { // 150/s on one of two partitions: 75 per partition
            now += 5_000;
            long[] sr = totals.computeIfAbsent("6/0", k -> new long[2]);
            sr[0] += 750;
            policy.observe(now, List.of(new PartitionLoad(spread.queueId(), 0, sr[0], 0, 0)));
            assertEquals(List.of(), policy.decide(image(), now), "at " + t + " s");
        }
    }

    @Test
    void anOldBacklogSplitsOnlyWhileConsumersReceive() {
        QueueMetadata backlog = queue("backlog", 1, false, 1, Map.of());
        long oldest = now - 120_000; // two minutes old already, threshold one
        assertEquals(List.of(), run(backlog, 120, 1, 0, oldest), "nobody receives: more partitions would not help");
        List<SplitPolicy.Split> splits = run(backlog, 60, 1, 5, oldest);
        assertEquals(1, splits.size(), splits.toString());
        assertTrue(splits.get(0).reason().startsWith("oldest message"), splits.get(0).reason());
        QueueMetadata young = queue("young", 2, false, 1, Map.of());
        assertEquals(List.of(), run(young, 55, 1, 5, now), "a backlog younger than a minute is no reason");
    }

    @Test
    void aNewLeaderTreatsSplitQueuesAsJustSplitAndARefusedSplitIsTriedAgain() {
        QueueMetadata split = queue("split", 1, false, 2, Map.of()); // split by the previous leader, maybe just now
        QueueMetadata single = queue("single", 2, false, 1, Map.of());
        policy.becameLeader(image(), now);
        assertEquals(List.of(), run(split, 115, 1_000, 0, 0), "within the cool-down from the leader change");
        assertEquals(1, run(split, 10, 1_000, 0, 0).size());
        List<SplitPolicy.Split> refused = new ArrayList<>();
        for (int t = 0; t < 120 && refused.size() < 2; t += 5) { // decisions never reported done: submit refused
            now += 5_000;
            long[] sr = totals.computeIfAbsent("2/0", k -> new long[2]);
            sr[0] += 5_000;
            policy.observe(now, List.of(new PartitionLoad(single.queueId(), 0, sr[0], 0, 0)));
            refused.addAll(policy.decide(image(), now));
        }
        assertEquals(2, refused.size(), "a split that was not committed is decided again at the next check");
    }

    @Test
    void disabledDecidesNothing() {
        policy = new SplitPolicy(SplitPolicy.Settings.DISABLED);
        QueueMetadata hot = queue("hot", 1, false, 1, Map.of());
        assertEquals(List.of(), run(hot, 120, 10_000, 0, 0));
    }
}
