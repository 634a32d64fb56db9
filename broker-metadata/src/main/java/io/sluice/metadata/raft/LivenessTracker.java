package io.sluice.metadata.raft;

import io.sluice.common.Clock;
import io.sluice.metadata.image.ShardReport;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The metadata leader's view of which backends are alive: the time of each node's last heartbeat, in memory only.
 * Heartbeats are not replicated (they would fill the log); a new leader starts by giving every node a fresh grace
 * period, so a leader change never declares a healthy node dead. It also keeps the latest report of each shard's
 * leader that came with the heartbeats, for the operator's view; a report older than 6 s is dropped.
 */
final class LivenessTracker {
    private final Clock clock;
    private final long deadAfterMillis;
    private final Map<String, Long> lastBeat = new ConcurrentHashMap<>();
    private final Map<String, Received> shards = new ConcurrentHashMap<>();
    private volatile long leaderSinceMillis;

    private record Received(ShardReport report, long atMillis) {
    }

    LivenessTracker(Clock clock, long deadAfterMillis) {
        this.clock = clock;
        this.deadAfterMillis = deadAfterMillis;
    }

    void beat(String nodeId) {
        lastBeat.put(nodeId, clock.nowMillis());
    }

    /**
     * How long a shard report counts: backends report every 2 s ({@code BackendAgent.SHARD_REPORT_MILLIS}), so a
     * leader that stopped reporting (stepped down with no successor, or died) is gone from the view within 6 s.
     */
    static final long SHARD_REPORT_TTL_MILLIS = 6_000;

    /**
     * The reports of every shard {@code nodeId} leads now, as its heartbeat carried them: they replace what it
     * reported before, so a shard it no longer leads (an empty list: it leads none) leaves the view at once.
     */
    void report(String nodeId, List<ShardReport> reports) {
        long now = clock.nowMillis();
        shards.values().removeIf(r -> r.report().leader().equals(nodeId));
        for (ShardReport r : reports) {
            if (r.shardId() != null && nodeId.equals(r.leader())) { // a backend speaks for the shards it leads only
                shards.put(r.shardId(), new Received(r, now));
            }
        }
    }

    /**
     * The latest report of each shard received within {@link #SHARD_REPORT_TTL_MILLIS}, each with its age. Two
     * backends may both have reported leading a shard (an old leader not yet aware of the new one): the later report
     * is kept.
     */
    List<ShardReport> shardReports() {
        long now = clock.nowMillis();
        List<ShardReport> out = new ArrayList<>();
        shards.values().removeIf(r -> now - r.atMillis() >= SHARD_REPORT_TTL_MILLIS);
        new TreeMap<>(shards).values().forEach(r -> out.add(r.report().withAge(now - r.atMillis())));
        return out;
    }

    /** Called when this node becomes leader: everyone gets a full grace period from now. */
    void becameLeader() {
        leaderSinceMillis = clock.nowMillis();
        shards.clear(); // what an earlier term heard may be stale: wait for this term's reports
    }

    boolean isAlive(String nodeId) {
        long since = Math.max(lastBeat.getOrDefault(nodeId, 0L), leaderSinceMillis);
        return clock.nowMillis() - since < deadAfterMillis;
    }

    /** Among {@code known}, the nodes that are alive now, in the given order. */
    List<String> alive(Iterable<String> known) {
        List<String> out = new ArrayList<>();
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
