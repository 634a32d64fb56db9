package io.sluice.metadata.raft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sluice.common.ManualClock;
import io.sluice.metadata.image.ClusterImage;
import io.sluice.metadata.image.MetadataBatch;
import io.sluice.metadata.image.MetadataCommand;
import io.sluice.metadata.image.MetadataJson;
import io.sluice.metadata.image.MetadataOperations;
import io.sluice.metadata.image.MetadataResult;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.function.BiFunction;
import org.apache.ratis.protocol.exceptions.StateMachineException;
import org.junit.jupiter.api.Test;

/**
 * The metadata log holds the leader's decisions (records), not commands: replay only applies them. A log recorded
 * in the older command format (2026-12-06) still replays to the image it gave then; a replica whose placement code
 * differs from the leader's replays the leader's log to the leader's image; a decision overtaken on its way to the
 * log is refused before it is appended and decided again.
 */
class MetadataRecordsLogTest {
    private static final List<String> NODES = List.of("b1", "b2", "b3", "b4");
    private static final String RECORDED = "/metadata-log/";

    /** The scenario: every command type, with the live nodes each saw (b4 found dead once). */
    private static List<MetadataCommand.Stamped> scenario() {
        List<MetadataCommand.Stamped> out = new ArrayList<>();
        long[] now = {1_765_000_000_000L};
        BiConsumer<MetadataCommand, List<String>> add = (c, live) ->
                out.add(new MetadataCommand.Stamped(c, now[0] += 1_000, live, 3));
        for (String n : NODES) {
            add.accept(new MetadataCommand.RegisterNode(n, n + ".example:7000"), NODES);
        }
        add.accept(new MetadataCommand.EnsureShards(4), NODES);
        add.accept(new MetadataCommand.InitReceiptSecret("c2VjcmV0LWZvci10ZXN0cw=="), NODES);
        add.accept(new MetadataCommand.SetAccessKey("AKIDRECORDED", "recorded-secret", List.of()), NODES);
        add.accept(new MetadataCommand.CreateQueue("orders", false, Map.of("VisibilityTimeout", "60"),
                Map.of("team", "x"), 2), NODES);
        add.accept(new MetadataCommand.CreateQueue("orders.fifo", true, Map.of(), Map.of(), 1), NODES);
        add.accept(new MetadataCommand.SetQueueAttributes("orders", Map.of("DelaySeconds", "5")), NODES);
        add.accept(new MetadataCommand.SetQueueTags("orders", Map.of("team", "y")), NODES);
        add.accept(new MetadataCommand.RaisePartitions("orders", 4), NODES);
        add.accept(new MetadataCommand.CreateQueue("tmp", false, Map.of(), Map.of(), 1), NODES);
        add.accept(new MetadataCommand.DeleteQueue("tmp"), NODES);
        add.accept(new MetadataCommand.ReplaceDeadNode("b4"), List.of("b1", "b2", "b3"));
        add.accept(new MetadataCommand.Rebalance(10), NODES);
        return out;
    }

    private static MetadataStateMachine machine(ManualClock clock,
            BiFunction<ClusterImage, MetadataCommand.Stamped, MetadataOperations.Outcome> decider) {
        LivenessTracker liveness = new LivenessTracker(clock, 10_000);
        NODES.forEach(liveness::beat);
        return new MetadataStateMachine(clock, liveness, 3, 1_000, decider);
    }

    /** The image's JSON without what only this release keeps (the last change's id). */
    private static JsonNode comparable(ClusterImage image) {
        ObjectNode tree = (ObjectNode) MetadataJson.readTree(MetadataJson.write(image)); // numbers as a file has them
        tree.remove("lastChange");
        return tree;
    }

    @Test
    void aLogRecordedInTheCommandFormatReplaysToTheImageItGaveThen() throws IOException {
        JsonNode log = MetadataJson.readTree(resource("commands-2026-12-06.json"));
        JsonNode recordedImage = MetadataJson.readTree(resource("image-2026-12-06.json"));
        MetadataStateMachine replica = machine(new ManualClock(0), MetadataOperations::execute);
        long index = 0;
        for (JsonNode entry : log) {
            replica.apply(++index, MetadataJson.write(entry));
        }
        assertEquals(scenario().size(), log.size(), "the recorded log is the scenario's");
        ObjectNode expected = (ObjectNode) recordedImage.deepCopy();
        expected.remove("lastChange");
        assertEquals(expected, comparable(replica.image()));
        assertEquals("entry-" + index, replica.image().lastChange(), "a command-format entry is a change too");
    }

    @Test
    void aReplicaWithOtherPlacementCodeReplaysTheLeadersLogToTheLeadersImage() throws StateMachineException {
        // another release's placement: it keeps b1 free of replicas while three other backends are alive
        BiFunction<ClusterImage, MetadataCommand.Stamped, MetadataOperations.Outcome> reversed = (image, s) -> {
            List<String> live = new ArrayList<>(s.liveNodes());
            if (live.size() > 3) {
                live.remove("b1");
            }
            return MetadataOperations.execute(image, new MetadataCommand.Stamped(s.command(), s.leaderTimeMillis(),
                    live, s.replicationFactor()));
        };
        MetadataStateMachine leader = machine(new ManualClock(1_000), MetadataOperations::execute);
        MetadataStateMachine follower = machine(new ManualClock(1_000), reversed);
        MetadataStateMachine otherLeader = machine(new ManualClock(1_000), reversed);
        long index = 0;
        for (MetadataCommand.Stamped s : scenario()) {
            MetadataStateMachine.Decision d = leader.decide(s.command());
            leader.appending(d.batch());
            index++;
            assertEquals(d.batch().result(), leader.apply(index, d.logData()));
            follower.apply(index, d.logData());
            MetadataStateMachine.Decision other = otherLeader.decide(s.command());
            otherLeader.appending(other.batch());
            otherLeader.apply(index, other.logData());
        }
        assertNotEquals(comparable(leader.image()).get("shards"), comparable(otherLeader.image()).get("shards"),
                "the other placement code decides differently: else this test shows nothing");
        assertEquals(MetadataJson.mapper().valueToTree(leader.image()),
                MetadataJson.mapper().valueToTree(follower.image()), "replay applies the leader's records only");
    }

    @Test
    void aDecisionOvertakenOnItsWayToTheLogIsRefusedAndDecidedAgain() throws StateMachineException {
        MetadataStateMachine leader = machine(new ManualClock(1_000), MetadataOperations::execute);
        MetadataStateMachine.Decision first = leader.decide(new MetadataCommand.CreateQueue("a", false, Map.of(),
                Map.of(), 1));
        MetadataStateMachine.Decision second = leader.decide(new MetadataCommand.CreateQueue("b", false, Map.of(),
                Map.of(), 1));
        assertEquals(first.batch().id(), second.batch().after(), "decided one after the other: b follows a");
        // appended in the other order (two request threads racing to Ratis' append)
        StateMachineException refused = assertThrows(StateMachineException.class,
                () -> leader.appending(second.batch()));
        assertTrue(refused.getMessage().startsWith(MetadataStateMachine.OVERTAKEN), refused.getMessage());
        assertTrue(!refused.leaderShouldStepDown(), "the leader stays");
        leader.appending(first.batch());
        leader.apply(1, first.logData());
        MetadataStateMachine.Decision again = leader.decide(new MetadataCommand.CreateQueue("b", false, Map.of(),
                Map.of(), 1));
        leader.appending(again.batch());
        assertEquals(MetadataResult.Status.OK, leader.apply(2, again.logData()).status());
        assertEquals(List.of("a", "b"), List.copyOf(leader.image().queues().keySet()));
        assertNotEquals(leader.image().queues().get("a").queueId(), leader.image().queues().get("b").queueId());
    }

    @Test
    void aBatchDecidedOnAViewThatDidNotHappenChangesNothingOnAnyReplica() {
        MetadataStateMachine replica = machine(new ManualClock(1_000), MetadataOperations::execute);
        MetadataStateMachine elsewhere = machine(new ManualClock(1_000), MetadataOperations::execute);
        MetadataStateMachine.Decision a = elsewhere.decide(new MetadataCommand.CreateQueue("a", false, Map.of(),
                Map.of(), 1));
        MetadataStateMachine.Decision b = elsewhere.decide(new MetadataCommand.CreateQueue("b", false, Map.of(),
                Map.of(), 1));
        ClusterImage before = replica.image();
        MetadataResult result = replica.apply(1, b.logData()); // b without the a it was decided after
        assertEquals(MetadataResult.Status.CONFLICT, result.status());
        assertEquals(before.queues(), replica.image().queues(), "nothing applied");
        assertEquals(1, replica.image().appliedIndex());
        assertEquals(MetadataResult.Status.OK, replica.apply(2, a.logData()).status());
    }

    @Test
    void aLeadersEntryCarriesTheCommandWhereAMemberOfTheOlderReleaseReadsIt() {
        MetadataStateMachine leader = machine(new ManualClock(1_000), MetadataOperations::execute);
        MetadataCommand command = new MetadataCommand.CreateQueue("q", false, Map.of(), Map.of(), 1);
        byte[] entry = leader.decide(command).logData();
        MetadataCommand.Stamped asOlderMembersReadIt = MetadataJson.read(entry, MetadataCommand.Stamped.class);
        assertEquals(command, asOlderMembersReadIt.command());
        assertEquals(3, asOlderMembersReadIt.replicationFactor());
        assertTrue(MetadataJson.read(entry, MetadataBatch.class).records().size() > 0);
    }

    /**
     * Writes the recorded log and image (today's command format) again: run once with {@code -Dsluice.metadata.record
     * =true} when the scenario changes; the committed files are what the replay test holds later releases to.
     */
    @Test
    void recordTheCommandFormatLog() throws IOException {
        if (!Boolean.getBoolean("sluice.metadata.record")) {
            return;
        }
        List<MetadataCommand.Stamped> log = scenario();
        ClusterImage image = ClusterImage.EMPTY;
        long index = 0;
        for (MetadataCommand.Stamped s : log) { // exactly what applyTransaction did with such an entry until then
            image = image.replayAll(MetadataOperations.execute(image, s).records()).withAppliedIndex(++index);
        }
        Path dir = Path.of("src/test/resources/metadata-log");
        Files.createDirectories(dir);
        Files.write(dir.resolve("commands-2026-12-06.json"), MetadataJson.mapper().writerWithDefaultPrettyPrinter()
                .writeValueAsBytes(log));
        Files.write(dir.resolve("image-2026-12-06.json"), MetadataJson.mapper().writerWithDefaultPrettyPrinter()
                .writeValueAsBytes(image));
    }

    private static byte[] resource(String name) throws IOException {
        try (InputStream in = MetadataRecordsLogTest.class.getResourceAsStream(RECORDED + name)) {
            assertTrue(in != null, "recorded file " + name);
            return in.readAllBytes();
        }
    }
}
