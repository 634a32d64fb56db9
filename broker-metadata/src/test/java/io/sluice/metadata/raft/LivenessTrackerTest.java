package io.sluice.metadata.raft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.common.ManualClock;
import io.sluice.metadata.image.ShardReport;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class LivenessTrackerTest {
    private final ManualClock clock = new ManualClock(1_000_000);
    private final LivenessTracker tracker = new LivenessTracker(clock, 5_000);

    private static ShardReport report(String shard, String leader, int inSync) {
        return new ShardReport(shard, leader, List.of("b1", "b2", "b3"), inSync, Map.of("b2", 0L, "b3", 7L), false,
                42, 0);
    }

    @Test
    void keepsTheLatestReportOfEachShardWithItsAge() {
        tracker.report("b1", List.of(report("s1", "b1", 3), report("s2", "b1", 3)));
        clock.advanceMillis(1_000);
        tracker.report("b2", List.of(report("s2", "b2", 2))); // a new leader of s2
        clock.advanceMillis(500);
        List<ShardReport> reports = tracker.shardReports();
        assertEquals(List.of("s1", "s2"), reports.stream().map(ShardReport::shardId).toList());
        assertEquals(1_500, reports.get(0).ageMillis());
        assertEquals("b2", reports.get(1).leader());
        assertEquals(2, reports.get(1).inSync());
        assertEquals(500, reports.get(1).ageMillis());
    }

    @Test
    void aBackendSpeaksOnlyForTheShardsItLeads() {
        tracker.report("b3", List.of(report("s1", "b1", 3)));
        assertTrue(tracker.shardReports().isEmpty(), "b3 cannot report b1's leadership");
    }

    @Test
    void aLeaderThatStopsLeadingLeavesTheViewWithItsNextReport() {
        tracker.report("b1", List.of(report("s1", "b1", 3), report("s2", "b1", 3)));
        tracker.report("b2", List.of(report("s3", "b2", 3)));
        tracker.report("b1", List.of(report("s2", "b1", 3)));
        assertEquals(List.of("s2", "s3"), tracker.shardReports().stream().map(ShardReport::shardId).toList());
        tracker.report("b1", List.of()); // leads nothing now
        assertEquals(List.of("s3"), tracker.shardReports().stream().map(ShardReport::shardId).toList());
    }

    @Test
    void reportsAgeOutAfterSixSecondsAndANewTermStartsEmpty() {
        tracker.report("b1", List.of(report("s1", "b1", 3)));
        clock.advanceMillis(LivenessTracker.SHARD_REPORT_TTL_MILLIS - 1);
        assertEquals(1, tracker.shardReports().size());
        clock.advanceMillis(1);
        assertTrue(tracker.shardReports().isEmpty(), "a leader silent for 6 s reports nothing");

        tracker.report("b1", List.of(report("s1", "b1", 3)));
        tracker.becameLeader();
        assertTrue(tracker.shardReports().isEmpty(), "a new metadata leader waits for this term's reports");
    }
}
