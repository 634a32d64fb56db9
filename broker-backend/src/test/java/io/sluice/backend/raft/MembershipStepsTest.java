package io.sluice.backend.raft;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.apache.ratis.protocol.RaftPeer;
import org.junit.jupiter.api.Test;

/** The steps a shard's leader takes from its membership to the catalog's: never one Ratis refuses (RATIS-1912). */
class MembershipStepsTest {

    private static List<RaftPeer> peers(String... ids) {
        return Arrays.stream(ids).map(id -> RaftPeer.newBuilder().setId(id).setAddress("127.0.0.1:1").build())
                .toList();
    }

    private static Set<String> ids(List<RaftPeer> peers) {
        Set<String> ids = new TreeSet<>();
        peers.forEach(p -> ids.add(p.getId().toString()));
        return ids;
    }

    /** Follows the steps from {@code from} to {@code to}, returning each membership on the way. */
    private static List<Set<String>> walk(List<RaftPeer> from, List<RaftPeer> to) {
        List<Set<String>> steps = new java.util.ArrayList<>();
        List<RaftPeer> current = from;
        for (int i = 0; i < 10 && !ids(current).equals(ids(to)); i++) {
            current = ShardMembership.nextMembership(current, to);
            steps.add(ids(current));
        }
        return steps;
    }

    @Test
    void aReplicaReplacedInAThreeReplicaShardIsOneStep() {
        assertEquals(List.of(Set.of("b2", "b3", "b4")), walk(peers("b1", "b2", "b3"), peers("b2", "b3", "b4")));
    }

    @Test
    void aOneReplicaShardMovesByAddingThenRemoving() {
        assertEquals(List.of(Set.of("b1", "b2"), Set.of("b2")), walk(peers("b1"), peers("b2")));
    }

    @Test
    void aShardMovedToTwoNewReplicasAddsThemOneByOne() {
        assertEquals(List.of(Set.of("b1", "b2"), Set.of("b1", "b2", "b3"), Set.of("b2", "b3")),
                walk(peers("b1"), peers("b2", "b3")));
    }

    @Test
    void removalsAloneAreOneStep() {
        assertEquals(List.of(Set.of("b1", "b2")), walk(peers("b1", "b2", "b3"), peers("b1", "b2")));
    }
}
