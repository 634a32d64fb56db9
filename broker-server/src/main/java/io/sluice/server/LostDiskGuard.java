package io.sluice.server;

import io.sluice.metadata.image.ClusterImage;
import io.sluice.metadata.image.ShardInfo;
import io.sluice.metadata.raft.CachedCatalog;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps a backend that lost its disk from rejoining its shards under its old node id. Its peers counted its
 * acknowledgements: an empty member back in a group could vote for a leader that lacks entries the group committed,
 * and lose them. A backend that starts on an empty data folder while the catalog lists its id as a replica records
 * those shard groups as forbidden (in a marker file, so restarts keep it) and, as long as the catalog lists it in any
 * of them, neither registers, heartbeats nor joins: the metadata group declares it dead and replaces it (given a live
 * backend to take its place). After that it serves as an empty backend, and never joins a forbidden group under this
 * id again, even if its Raft membership still named it or the catalog assigned it back later.
 */
final class LostDiskGuard {
    private static final Logger LOG = LoggerFactory.getLogger(LostDiskGuard.class);
    static final String MARKER = "LOST-DISK-FORBIDDEN-GROUPS";

    private final Path marker;
    private final boolean freshDisk;
    /** Groups this id must never join again; null until decided against the catalog. */
    private volatile Set<String> forbidden;
    private volatile boolean refusing = true;
    private long lastWarnNanos;

    /** @param freshDisk the data folder had no Raft storage when the process started */
    LostDiskGuard(Path dataDir, boolean freshDisk) {
        this.marker = dataDir.resolve(MARKER);
        this.freshDisk = freshDisk;
    }

    /** Waiting to be replaced (or not yet decided): not ready, not registered. */
    boolean refusing() {
        return refusing;
    }

    /** Whether the backend may join this shard group (one it lost its copy of may never be joined again). */
    boolean mayJoin(String groupId) {
        Set<String> f = forbidden;
        return f != null && !f.contains(groupId);
    }

    /**
     * Whether the backend may register, heartbeat and join its (other) shards now. The first decision reads a fresh
     * copy of the catalog, so a metadata outage delays it, never skips it.
     */
    boolean allowsJoining(String nodeId, CachedCatalog catalog) {
        if (forbidden == null) {
            decide(nodeId, catalog);
        }
        if (forbidden.isEmpty()) {
            refusing = false;
            return true;
        }
        ClusterImage image = catalog.image();
        Set<String> stillListed = image.shards().values().stream()
                .filter(s -> s.replicas().contains(nodeId) && forbidden.contains(s.groupId()))
                .map(ShardInfo::shardId).collect(Collectors.toCollection(TreeSet::new));
        if (refusing && stillListed.isEmpty()) {
            LOG.info("backend {} is no longer a replica of the shards it lost ({} groups): serving as a new backend",
                    nodeId, forbidden.size());
        }
        refusing = !stillListed.isEmpty();
        if (refusing && (lastWarnNanos == 0 || System.nanoTime() - lastWarnNanos > 30_000_000_000L)) {
            lastWarnNanos = System.nanoTime();
            LOG.error("backend {} lost its data but the catalog still lists it as a replica of shards {}: it will not"
                    + " rejoin them under this id (the others counted its acknowledgements). The metadata group"
                    + " replaces it after sluice.backend-dead-after-ms if another live backend can take its place;"
                    + " then it serves as a new backend. Or start it with a new --node-id. See docs/operations.md,"
                    + " Backup and restore.", nodeId, stillListed);
        }
        return !refusing;
    }

    private void decide(String nodeId, CachedCatalog catalog) {
        try {
            if (Files.exists(marker)) {
                forbidden = Set.copyOf(Files.readAllLines(marker).stream().map(String::trim)
                        .filter(l -> !l.isEmpty() && !l.startsWith("#")).toList());
                return;
            }
            if (!freshDisk) {
                forbidden = Set.of();
                return;
            }
            Set<String> listed = catalog.refresh().shards().values().stream()
                    .filter(s -> s.replicas().contains(nodeId)).map(ShardInfo::groupId)
                    .collect(Collectors.toCollection(TreeSet::new));
            if (!listed.isEmpty()) {
                Files.createDirectories(marker.getParent());
                Files.writeString(marker, "# This backend started on an empty data folder while a replica of these"
                        + " shard groups;\n# it never joins them again under its node id.\n"
                        + String.join("\n", listed) + "\n");
            }
            forbidden = Set.copyOf(listed);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
