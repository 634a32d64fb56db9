package io.sluice.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.sluice.metadata.image.ClusterImage;
import io.sluice.metadata.image.MetadataRecord;
import io.sluice.metadata.image.ShardReport;
import io.sluice.metadata.raft.LeaderHealth;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The shards in {@code /admin/status}: what the metadata leader's reports say, set against the catalog. */
class ClusterStatusTest {
    private static final ClusterImage IMAGE = ClusterImage.EMPTY.replayAll(List.of(
            new MetadataRecord.NodeRegistered("b1", "127.0.0.1:1", 1),
            new MetadataRecord.NodeRegistered("b2", "127.0.0.1:2", 1),
            new MetadataRecord.NodeRegistered("b3", "127.0.0.1:3", 1),
            new MetadataRecord.ShardAssigned("s1", "g1", List.of("b1", "b2", "b3"), 1),
            new MetadataRecord.ShardAssigned("s2", "g2", List.of("b2", "b3", "b1"), 1),
            new MetadataRecord.ShardAssigned("s3", "g3", List.of("b3", "b1", "b2"), 1),
            new MetadataRecord.ShardAssigned("s4", "g4", List.of("b1", "b2", "b3"), 1)));
    private static final Map<String, String> PEERS = Map.of("m1", "127.0.0.1:9", "m2", "127.0.0.1:10");

    private static JsonNode shard(JsonNode status, String id) {
        for (JsonNode s : status.path("shards")) {
            if (s.path("shardId").asText().equals(id)) {
                return s;
            }
        }
        throw new AssertionError("no shard " + id + " in " + status);
    }

    @Test
    void aShardIsPendingWhileRaftAndTheCatalogDisagreeOrAChangeRuns() {
        LeaderHealth health = new LeaderHealth("m2", Set.of("b1", "b2"), List.of(
                new ShardReport("s1", "b1", List.of("b1", "b2", "b3"), 3, Map.of("b2", 0L, "b3", 2L), false, 10, 100),
                new ShardReport("s2", "b2", List.of("b2", "b3", "b4"), 2, Map.of(), false, 10, 100), // b4 not yet out
                new ShardReport("s3", "b3", List.of("b3", "b1", "b2"), 3, Map.of(), true, 10, 100))); // joint config
        JsonNode status = ClusterStatus.render(IMAGE, PEERS, "m2", health, 3);
        assertTrue(status.path("shardReportsKnown").asBoolean());
        assertEquals("b1", shard(status, "s1").path("leader").asText());
        assertEquals(3, shard(status, "s1").path("inSync").asInt());
        assertEquals(2, shard(status, "s1").path("followerLag").path("b3").asLong());
        assertFalse(shard(status, "s1").path("membershipPending").asBoolean(), "same members, no change running");
        assertTrue(shard(status, "s2").path("membershipPending").asBoolean(), "Raft members differ from the catalog");
        assertTrue(shard(status, "s3").path("membershipPending").asBoolean(), "a membership change under way");
        assertTrue(shard(status, "s4").path("leader").isNull(), "no report: no leader known");
        assertFalse(status.path("backends").get(2).path("alive").asBoolean(), "b3 is not among the alive");
        assertEquals("leader", status.path("metadata").get(1).path("role").asText());
        assertEquals("follower", status.path("metadata").get(0).path("role").asText());
    }

    @Test
    void withoutTheLeadersViewNothingIsClaimed() {
        JsonNode status = ClusterStatus.render(IMAGE, PEERS, null, null, 3);
        assertFalse(status.path("shardReportsKnown").asBoolean());
        assertFalse(status.path("livenessKnown").asBoolean());
        assertTrue(shard(status, "s1").path("leader").isNull());
        assertEquals("unknown", status.path("metadata").get(0).path("role").asText());
        assertTrue(status.path("backends").get(0).path("alive").asBoolean(), "listed alive where unknown");
    }
}
