package io.sluice.backend.raft;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.storage.FileInfo;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.SnapshotInfo;
import org.apache.ratis.statemachine.SnapshotRetentionPolicy;
import org.apache.ratis.statemachine.StateMachineStorage;
import org.apache.ratis.statemachine.impl.FileListSnapshotInfo;

/**
 * A shard's snapshots: RocksDB checkpoint folders {@code snap_<term>_<index>} in Ratis' state-machine folder of the
 * group. Only the newest is kept. The file list uses absolute paths, which Ratis ships to a lagging follower relative
 * to the group's storage root, so they land in the follower's state-machine folder under the same names.
 */
final class ShardSnapshots implements StateMachineStorage {
    private static final Pattern NAME = Pattern.compile("snap_(\\d+)_(\\d+)");
    private volatile Path dir;

    @Override
    public void init(RaftStorage storage) throws IOException {
        dir = storage.getStorageDir().getStateMachineDir().toPath();
        Files.createDirectories(dir);
    }

    Path dirOf(TermIndex termIndex) {
        return dir.resolve("snap_" + termIndex.getTerm() + "_" + termIndex.getIndex());
    }

    @Override
    public SnapshotInfo getLatestSnapshot() {
        Path d = dir;
        if (d == null || !Files.isDirectory(d)) {
            return null;
        }
        try (var entries = Files.list(d)) {
            Path latest = null;
            TermIndex latestTermIndex = null;
            for (Path p : entries.toList()) {
                Matcher m = NAME.matcher(p.getFileName().toString());
                if (Files.isDirectory(p) && m.matches()) {
                    TermIndex ti = TermIndex.valueOf(Long.parseLong(m.group(1)), Long.parseLong(m.group(2)));
                    if (latestTermIndex == null || ti.getIndex() > latestTermIndex.getIndex()) {
                        latest = p;
                        latestTermIndex = ti;
                    }
                }
            }
            if (latest == null) {
                return null;
            }
            List<FileInfo> files = new ArrayList<>();
            try (var content = Files.list(latest)) {
                for (Path f : content.sorted().toList()) {
                    if (Files.isRegularFile(f) && !f.getFileName().toString().endsWith(".md5")) {
                        files.add(new FileInfo(f.toAbsolutePath(), null)); // Ratis digests it while sending
                    }
                }
            }
            return new FileListSnapshotInfo(files, latestTermIndex);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list snapshots in " + d, e);
        }
    }

    /** Removes every snapshot folder (and leftover partial checkpoint) except {@code keep}. */
    void deleteAllBut(Path keep) throws IOException {
        try (var entries = Files.list(dir)) {
            for (Path p : entries.toList()) {
                String name = p.getFileName().toString();
                if (!p.equals(keep) && name.startsWith("snap_")) {
                    deleteRecursively(p);
                }
            }
        }
    }

    /** Deletes a folder and everything in it; nothing if it does not exist. */
    static void deleteRecursively(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (var walk = Files.walk(dir)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }

    /** Bytes of the regular files under {@code dir} (0 if it does not exist; files vanishing meanwhile are skipped). */
    static long sizeOf(Path dir) {
        if (!Files.exists(dir)) {
            return 0;
        }
        long[] total = {0};
        try {
            Files.walkFileTree(dir, new java.nio.file.SimpleFileVisitor<>() {
                @Override
                public java.nio.file.FileVisitResult visitFile(Path file, java.nio.file.attribute.BasicFileAttributes a) {
                    total[0] += a.isRegularFile() ? a.size() : 0;
                    return java.nio.file.FileVisitResult.CONTINUE;
                }

                @Override
                public java.nio.file.FileVisitResult visitFileFailed(Path file, IOException e) {
                    return java.nio.file.FileVisitResult.CONTINUE; // compaction or purge removed it
                }
            });
        } catch (IOException e) {
            return total[0];
        }
        return total[0];
    }

    @Override
    public void format() {
        // nothing before the first snapshot
    }

    @Override
    public void cleanupOldSnapshots(SnapshotRetentionPolicy policy) throws IOException {
        SnapshotInfo latest = getLatestSnapshot();
        if (latest != null) {
            deleteAllBut(dirOf(latest.getTermIndex()));
        }
    }
}
