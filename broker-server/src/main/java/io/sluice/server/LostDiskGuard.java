package io.sluice.server;

import io.sluice.metadata.image.ClusterImage;
import io.sluice.metadata.raft.CachedCatalog;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps a backend that lost its disk from rejoining its shards under its old node id. Its peers counted its
 * acknowledgements: an empty member back in a group could vote for a leader that lacks entries the group committed,
 * and lose them. A backend that starts on an empty data folder while the catalog still lists its id as a replica
 * therefore neither registers, heartbeats nor joins; the metadata group declares it dead and replaces it in its
 * shards (given a live backend to take its place), after which it starts over as a new, empty backend. The decision
 * is kept in a marker file, so a restart meanwhile does not forget it.
 */
final class LostDiskGuard {
    private static final Logger LOG = LoggerFactory.getLogger(LostDiskGuard.class);
    static final String MARKER = "LOST-DISK-REFUSED-TO-REJOIN";

    private enum State { UNKNOWN, REFUSING, CLEAR }

    private final Path marker;
    private final boolean freshDisk;
    private volatile State state = State.UNKNOWN;
    private long lastWarnNanos;

    /** @param freshDisk the data folder had no Raft storage when the process started */
    LostDiskGuard(Path dataDir, boolean freshDisk) {
        this.marker = dataDir.resolve(MARKER);
        this.freshDisk = freshDisk;
    }

    boolean refusing() {
        return state != State.CLEAR;
    }

    /**
     * Whether the backend may register and join its shards now. Decided against a fresh copy of the catalog (so
     * a metadata outage delays the decision, never skips it); once clear, it stays clear.
     */
    boolean allowsJoining(String nodeId, CachedCatalog catalog) {
        if (state == State.CLEAR) {
            return true;
        }
        if (state == State.UNKNOWN && !freshDisk && !Files.exists(marker)) {
            state = State.CLEAR;
            return true;
        }
        ClusterImage image = catalog.refresh();
        boolean listed = image.shards().values().stream().anyMatch(s -> s.replicas().contains(nodeId));
        if (!listed) {
            if (state == State.REFUSING) {
                LOG.info("backend {} no longer holds a replica of any shard: starting over as an empty backend", nodeId);
            }
            deleteMarker();
            state = State.CLEAR;
            return true;
        }
        if (state != State.REFUSING) {
            writeMarker();
            state = State.REFUSING;
        }
        if (System.nanoTime() - lastWarnNanos > 30_000_000_000L || lastWarnNanos == 0) {
            lastWarnNanos = System.nanoTime();
            LOG.error("backend {} started on an empty data folder but the catalog still lists it as a replica of shards:"
                    + " it will not rejoin them under this id (the others counted its acknowledgements). The metadata"
                    + " group replaces it after sluice.backend-dead-after-ms if another live backend can take its"
                    + " place; then this process starts over as a new backend. Or start it with a new --node-id."
                    + " See docs/operations.md, Backup and restore.", nodeId);
        }
        return false;
    }

    private void writeMarker() {
        try {
            Files.createDirectories(marker.getParent());
            Files.writeString(marker, "This backend started on an empty data folder while still a shard replica;"
                    + " it waits to be replaced before joining anything.\n");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void deleteMarker() {
        try {
            Files.deleteIfExists(marker);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
