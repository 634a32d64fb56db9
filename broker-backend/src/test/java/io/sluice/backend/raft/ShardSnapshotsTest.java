package io.sluice.backend.raft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.TreeSet;
import org.apache.ratis.server.protocol.TermIndex;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Which snapshots a shard keeps: one may be on its way to a lagging follower while a newer one is taken. */
class ShardSnapshotsTest {
    @TempDir
    Path dir;

    @Test
    void theNewestTwoAndRecentlySupersededOnesAreKept() throws Exception {
        ShardSnapshots snapshots = new ShardSnapshots();
        snapshots.init(dir);
        Instant now = Instant.parse("2026-12-01T12:00:00Z");
        take(snapshots, 10, now.minus(Duration.ofMinutes(30)));
        take(snapshots, 20, now.minus(Duration.ofMinutes(20)));
        take(snapshots, 30, now.minus(Duration.ofMinutes(1))); // 20 superseded a minute ago: maybe being sent
        take(snapshots, 40, now.minus(Duration.ofSeconds(10)));
        Files.createDirectories(dir.resolve("snap_1_50.partial")); // a crash mid-checkpoint
        snapshots.deleteSuperseded(now);
        assertEquals(List.of("snap_1_20", "snap_1_30", "snap_1_40"), names());
        assertEquals(40, snapshots.getLatestSnapshot().getIndex());

        snapshots.deleteSuperseded(now.plus(Duration.ofMinutes(5)));
        assertEquals(List.of("snap_1_30", "snap_1_40"), names(), "the newest two stay however old");
    }

    @Test
    void whileAFollowerNeedsASnapshotSupersededOnesAreKeptUpToTheCap() throws Exception {
        java.util.concurrent.atomic.AtomicBoolean installing = new java.util.concurrent.atomic.AtomicBoolean(true);
        ShardSnapshots snapshots = new ShardSnapshots(installing::get);
        snapshots.init(dir);
        Instant now = Instant.parse("2026-12-01T12:00:00Z");
        take(snapshots, 10, now.minus(Duration.ofMinutes(50)));
        take(snapshots, 20, now.minus(Duration.ofMinutes(40))); // 10 superseded 40 minutes ago: past the cap
        take(snapshots, 30, now.minus(Duration.ofMinutes(10))); // 20 superseded 10 minutes ago: an install may read it
        take(snapshots, 40, now.minus(Duration.ofMinutes(5)));
        snapshots.deleteSuperseded(now);
        assertEquals(List.of("snap_1_20", "snap_1_30", "snap_1_40"), names(),
                "a slow install keeps its snapshot past the usual grace");

        installing.set(false); // the follower caught up: the usual grace again
        snapshots.deleteSuperseded(now);
        assertEquals(List.of("snap_1_30", "snap_1_40"), names());
    }

    @Test
    void theLatestSnapshotIsListedOnceUntilTheFolderChanges() throws Exception {
        ShardSnapshots snapshots = new ShardSnapshots();
        Path sm = dir.resolve("sm"); // under the test's folder, which is cleaned up
        snapshots.init(sm);
        assertNull(snapshots.getLatestSnapshot());
        Instant now = Instant.parse("2026-12-01T12:00:00Z");
        take(snapshots, 10, now);
        Files.setLastModifiedTime(sm, FileTime.from(now)); // the folder's time as a new snapshot's rename left it
        assertEquals(10, snapshots.getLatestSnapshot().getIndex());
        assertEquals(1, snapshots.getLatestSnapshot().getFiles().size());

        // A file appearing inside the snapshot (never done: a checkpoint is renamed into place whole) leaves the
        // folder's time alone: the listing is reused, not redone on every ask.
        Files.writeString(snapshots.dirOf(TermIndex.valueOf(1, 10)).resolve("000002.sst"), "data");
        assertEquals(1, snapshots.getLatestSnapshot().getFiles().size());

        take(snapshots, 20, now); // a new snapshot changes the folder
        Files.setLastModifiedTime(sm, FileTime.from(now.plusSeconds(1)));
        assertEquals(20, snapshots.getLatestSnapshot().getIndex(), "a new snapshot is seen");

        // Installed from the leader: Ratis renames a whole new folder into place (same time, another folder).
        Path installed = dir.resolve("installed");
        Files.createDirectories(installed.resolve("snap_2_30"));
        Files.writeString(installed.resolve("snap_2_30").resolve("000009.sst"), "data");
        Path old = dir.resolve("old");
        Files.move(sm, old);
        Files.move(installed, sm);
        Files.setLastModifiedTime(sm, FileTime.from(now.plusSeconds(1)));
        assertEquals(30, snapshots.getLatestSnapshot().getIndex(), "an installed folder is seen");

        snapshots.changed(); // this class's own change: listed again whatever the folder's time says
        Files.writeString(sm.resolve("snap_2_30").resolve("000010.sst"), "data");
        assertEquals(2, snapshots.getLatestSnapshot().getFiles().size());
    }

    private static void take(ShardSnapshots snapshots, long index, Instant at) throws Exception {
        Path d = snapshots.dirOf(TermIndex.valueOf(1, index));
        Files.createDirectories(d);
        Files.writeString(d.resolve("000001.sst"), "data");
        Files.setLastModifiedTime(d, FileTime.from(at));
    }

    private List<String> names() throws Exception {
        try (var entries = Files.list(dir)) {
            return List.copyOf(new TreeSet<>(entries.map(p -> p.getFileName().toString()).toList()));
        }
    }
}
