package io.sluice.backend.raft;

import io.sluice.common.Fsync;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
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
 * group. The newest and the one before are kept, and any older one whose successor was taken less than
 * {@link #SUPERSEDED_GRACE} ago: a leader may be sending one to a lagging follower, file by file, while a newer
 * snapshot is taken (checkpoints hard-link the store's files, so the extra copies cost little disk). While a follower
 * of this leader is behind the start of its log (it needs a snapshot, and one may be on its way however slowly),
 * superseded snapshots are kept up to {@link #SUPERSEDED_CAP}: deleting the files of an install in progress would make
 * it start over, and a slow one might never finish. The file list
 * uses absolute paths, which Ratis ships to a lagging follower relative
 * to the group's storage root, so they land in the follower's state-machine folder under the same names.
 */
final class ShardSnapshots implements StateMachineStorage {
    private static final Pattern NAME = Pattern.compile("snap_(\\d+)_(\\d+)");
    private volatile Path dir;
    /** Whether a follower of this replica (while it leads) needs a snapshot: one may be being sent. */
    private final BooleanSupplier installing;

    ShardSnapshots() {
        this(() -> false);
    }

    /** @param installing whether a follower of this replica needs a snapshot now (false while it does not lead) */
    ShardSnapshots(BooleanSupplier installing) {
        this.installing = installing;
    }

    /**
     * The latest snapshot as last listed, with the folder's identity and modification time then. Ratis asks for the
     * latest snapshot on hot paths (a leader's log appender before every append and heartbeat, in
     * {@code LogAppender.shouldInstallSnapshot}; a follower on every append it receives); listing the folder each time
     * was ~170 listings and ~2,500 system calls a second per appender under load. An installed snapshot replaces the
     * folder (a new identity), a new or deleted one changes its modification time, and each of this class's own
     * changes also counts a generation: a listing taken before a change never passes for one taken after it, even
     * when the folder's time did not tick between them.
     */
    private record Listed(long generation, Object folder, FileTime modified,
                          SnapshotInfo latest) {
    }

    private volatile Listed listed;
    private final AtomicLong generation = new AtomicLong();

    @Override
    public void init(RaftStorage storage) throws IOException {
        init(storage.getStorageDir().getStateMachineDir().toPath());
    }

    /** @param stateMachineDir the group's state-machine folder, where snapshots live */
    void init(Path stateMachineDir) throws IOException {
        changed();
        dir = stateMachineDir;
        Files.createDirectories(dir);
    }

    /** The folder was changed here: the next ask lists it again (as does one whose listing began before now). */
    void changed() {
        generation.incrementAndGet();
        listed = null;
    }

    Path dirOf(TermIndex termIndex) {
        return dir.resolve("snap_" + termIndex.getTerm() + "_" + termIndex.getIndex());
    }

    @Override
    public SnapshotInfo getLatestSnapshot() {
        long gen = generation.get(); // before the folder is looked at
        Path d = dir;
        if (d == null) {
            return null;
        }
        BasicFileAttributes folder;
        try {
            folder = Files.readAttributes(d, BasicFileAttributes.class);
        } catch (IOException e) {
            return null; // no folder: no snapshot
        }
        if (!folder.isDirectory()) {
            return null;
        }
        Listed last = listed;
        if (last != null && last.generation() == gen && Objects.equals(last.folder(), folder.fileKey())
                && last.modified().equals(folder.lastModifiedTime())) {
            return last.latest();
        }
        SnapshotInfo latest = list(d);
        listed = new Listed(gen, folder.fileKey(), folder.lastModifiedTime(), latest); // stale at once if changed since
        return latest;
    }

    private static SnapshotInfo list(Path d) {
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

    /** How long a superseded snapshot outlives its successor (beyond the newest two, which are always kept). */
    static final Duration SUPERSEDED_GRACE = Duration.ofMinutes(2);
    /**
     * How long a superseded snapshot outlives its successor at most while a follower needs a snapshot (one that is
     * down for good must not pin the disk for ever: a real install of a shard's store takes minutes, not this).
     */
    static final Duration SUPERSEDED_CAP = Duration.ofMinutes(30);

    /**
     * Deletes leftover partial checkpoints and the snapshots no longer needed: all but the newest two, except those
     * superseded less than {@link #SUPERSEDED_GRACE} before {@code now} (their successor folder's time), or less
     * than {@link #SUPERSEDED_CAP} while a follower needs a snapshot.
     */
    void deleteSuperseded(Instant now) throws IOException {
        try {
            deleteSupersededNow(now);
        } finally {
            changed();
        }
    }

    private void deleteSupersededNow(Instant now) throws IOException {
        List<Path> snapshots = new ArrayList<>();
        try (var entries = Files.list(dir)) {
            for (Path p : entries.toList()) {
                String name = p.getFileName().toString();
                if (NAME.matcher(name).matches() && Files.isDirectory(p)) {
                    snapshots.add(p);
                } else if (name.startsWith("snap_") && name.endsWith(".partial")) {
                    deleteRecursively(p);
                }
            }
        }
        snapshots.sort(Comparator.comparingLong(ShardSnapshots::indexOf));
        Duration keep = snapshots.size() > 2 && installing.getAsBoolean() ? SUPERSEDED_CAP : SUPERSEDED_GRACE;
        for (int i = 0; i < snapshots.size() - 2; i++) {
            Instant superseded = Files.getLastModifiedTime(snapshots.get(i + 1)).toInstant();
            if (superseded.plus(keep).isBefore(now)) {
                deleteRecursively(snapshots.get(i));
            }
        }
    }

    private static long indexOf(Path snapshot) {
        Matcher m = NAME.matcher(snapshot.getFileName().toString());
        return m.matches() ? Long.parseLong(m.group(2)) : -1;
    }

    /** Deletes a folder and everything in it; nothing if it does not exist. */
    /**
     * Makes the store a copy of a checkpoint, crash-safely: copy into a sibling folder, fsync the files, then swap
     * it in by renames. A crash leaves either the old store (and {@link ShardStateMachine#initialize} redoes this,
     * since the old store lags the snapshot) or the new one, never a half-copied store.
     */
    static void replaceStore(Path storeDir, Path checkpoint) throws IOException {
        Path fresh = storeDir.resolveSibling(storeDir.getFileName() + ".installing");
        Path old = storeDir.resolveSibling(storeDir.getFileName() + ".replaced");
        deleteRecursively(fresh);
        deleteRecursively(old);
        Files.createDirectories(fresh);
        try (var files = Files.list(checkpoint)) {
            for (Path f : files.toList()) {
                if (!f.getFileName().toString().endsWith(".md5")) { // Ratis' digests of the shipped files
                    Path copy = fresh.resolve(f.getFileName().toString());
                    Files.copy(f, copy);
                    Fsync.force(copy);
                }
            }
        }
        Fsync.force(fresh);
        if (Files.exists(storeDir)) {
            Files.move(storeDir, old, StandardCopyOption.ATOMIC_MOVE);
        }
        Files.move(fresh, storeDir, StandardCopyOption.ATOMIC_MOVE);
        Fsync.force(storeDir.getParent());
        deleteRecursively(old);
    }

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
            Files.walkFileTree(dir, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes a) {
                    total[0] += a.isRegularFile() ? a.size() : 0;
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFileFailed(Path file, IOException e) {
                    return FileVisitResult.CONTINUE; // compaction or purge removed it
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
        deleteSuperseded(Instant.now());
    }
}
