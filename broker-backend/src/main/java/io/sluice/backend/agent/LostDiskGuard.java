package io.sluice.backend.agent;

import io.sluice.common.Fsync;
import io.sluice.metadata.image.ClusterImage;
import io.sluice.metadata.image.ShardInfo;
import io.sluice.metadata.raft.CachedCatalog;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.stream.Collectors;

/**
 * Keeps a backend that lost its disk from rejoining its shards under its old node id. Its peers counted its
 * acknowledgements: an empty member back in a group could vote for a leader that lacks entries the group committed,
 * and lose them. A backend that starts on an empty data folder while the catalog lists its id as a replica records
 * those shard groups as forbidden (a marker file, written atomically, so restarts keep it) and never joins them under
 * this id. It still registers and heartbeats, serves its other shards, and asks the metadata group to give the
 * forbidden replicas to other backends ({@code ReleaseReplicas}); a shard with no other backend to take it stays
 * under-replicated (and this backend not ready) until one appears.
 */
public final class LostDiskGuard {
    static final String MARKER = "LOST-DISK-FORBIDDEN-GROUPS";

    private final Path marker;
    private final boolean freshDisk;
    /** Groups this id must never join again; null until decided against the catalog. */
    private volatile Set<String> forbidden;

    /** @param freshDisk the data folder had no Raft storage folder when the process started */
    public LostDiskGuard(Path dataDir, boolean freshDisk) {
        this.marker = dataDir.resolve(MARKER);
        this.freshDisk = freshDisk;
    }

    /** Decided: the forbidden groups are known (a fresh disk needs one fresh read of the catalog). */
    public boolean decided() {
        return forbidden != null;
    }

    /** Whether the backend may join this shard group: not one it lost its copy of, and only once decided. */
    public boolean mayJoin(String groupId) {
        Set<String> f = forbidden;
        return f != null && !f.contains(groupId);
    }

    /** Shards the catalog still gives this id although it lost their groups: to be released. */
    public List<String> listedForbidden(String nodeId, ClusterImage image) {
        Set<String> f = forbidden;
        if (f == null || f.isEmpty()) {
            return List.of();
        }
        return image.shards().values().stream().filter(s -> s.replicas().contains(nodeId) && f.contains(s.groupId()))
                .map(ShardInfo::shardId).sorted().toList();
    }

    /**
     * Makes the decision once: the marker's groups, plus, on a fresh disk, every group the catalog (read fresh, so a
     * metadata outage delays the decision, never skips it) lists this id in. Throws while the catalog is unreachable.
     */
    public void decide(String nodeId, CachedCatalog catalog) {
        if (forbidden != null) {
            return;
        }
        Set<String> groups = new TreeSet<>(readMarker());
        if (freshDisk) {
            catalog.refresh().shards().values().stream().filter(s -> s.replicas().contains(nodeId))
                    .map(ShardInfo::groupId).forEach(groups::add);
        }
        if (!groups.isEmpty()) {
            writeMarker(groups);
        }
        forbidden = Set.copyOf(groups);
    }

    public Set<String> forbidden() {
        Set<String> f = forbidden;
        return f == null ? Set.of() : f;
    }

    private Set<String> readMarker() {
        if (!Files.exists(marker)) {
            return Set.of();
        }
        try {
            return Files.readAllLines(marker).stream().map(String::trim).filter(LostDiskGuard::isGroupId)
                    .collect(Collectors.toSet());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + marker, e);
        }
    }

    private static boolean isGroupId(String line) {
        try {
            return !line.isEmpty() && !line.startsWith("#") && UUID.fromString(line).toString().equals(line);
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    /** Temp file, fsync, atomic rename, fsync of the folder: a crash leaves the old marker or the new one. */
    private void writeMarker(Set<String> groups) {
        try {
            Files.createDirectories(marker.getParent());
            Fsync.writeAtomically(marker, ("# This backend started on an empty data folder while a"
                    + " replica of these shard groups;\n# it never joins them again under its node id.\n"
                    + String.join("\n", groups) + "\n").getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + marker, e);
        }
    }
}
