package io.sluice.metadata.raft;

import io.sluice.common.Clock;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The metadata leader's view of which backends are alive: the time of each node's last heartbeat, in memory only.
 * Heartbeats are not replicated (they would fill the log); a new leader starts by giving every node a fresh grace
 * period, so a leader change never declares a healthy node dead.
 */
final class LivenessTracker {
    private final Clock clock;
    private final long deadAfterMillis;
    private final Map<String, Long> lastBeat = new ConcurrentHashMap<>();
    private volatile long leaderSinceMillis;

    LivenessTracker(Clock clock, long deadAfterMillis) {
        this.clock = clock;
        this.deadAfterMillis = deadAfterMillis;
    }

    void beat(String nodeId) {
        lastBeat.put(nodeId, clock.nowMillis());
    }

    /** Called when this node becomes leader: everyone gets a full grace period from now. */
    void becameLeader() {
        leaderSinceMillis = clock.nowMillis();
    }

    boolean isAlive(String nodeId) {
        long since = Math.max(lastBeat.getOrDefault(nodeId, 0L), leaderSinceMillis);
        return clock.nowMillis() - since < deadAfterMillis;
    }

    /** Among {@code known}, the nodes that are alive now, in the given order. */
    List<String> alive(Iterable<String> known) {
        List<String> out = new java.util.ArrayList<>();
        known.forEach(n -> {
            if (isAlive(n)) {
                out.add(n);
            }
        });
        return out;
    }

    long lastBeatMillis(String nodeId) {
        return lastBeat.getOrDefault(nodeId, -1L);
    }
}
