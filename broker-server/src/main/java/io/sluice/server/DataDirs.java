package io.sluice.server;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.util.EnumSet;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A role's data folder holds message bodies, the catalog's key secrets and the receipt secret: no other local user may
 * read it. At start the folder is created owner-only ({@code rwx------}) if it does not exist; an existing one that
 * other users may enter or read is made owner-only when the process owns it, and refused otherwise unless
 * {@code sluice.data-dir.allow-shared} says so (a volume mounted with a group for the pod, say): then every folder
 * inside it that the process owns is made owner-only, so the data in them stays its own. Files and folders already
 * inside (written by a release before this, under a 022 umask) are tightened too: folders {@code rwx------}, files
 * {@code rw-------}. Files created later inherit nothing from their folder, but sit in owner-only folders.
 */
final class DataDirs {
    private static final Logger LOG = LoggerFactory.getLogger(DataDirs.class);
    private static final Set<PosixFilePermission> OWNER_DIR = PosixFilePermissions.fromString("rwx------");
    private static final Set<PosixFilePermission> OTHERS = EnumSet.of(PosixFilePermission.GROUP_READ,
            PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_EXECUTE, PosixFilePermission.OTHERS_READ,
            PosixFilePermission.OTHERS_WRITE, PosixFilePermission.OTHERS_EXECUTE);

    private DataDirs() {
    }

    /** Creates or checks {@code dir} as described above; throws IllegalStateException when it may not be used. */
    static void prepare(Path dir, boolean allowShared) {
        try {
            if (!Files.getFileStore(dir.getRoot()).supportsFileAttributeView("posix")) {
                Files.createDirectories(dir);
                return; // a file system without POSIX permissions: its own access rules apply
            }
            if (!Files.exists(dir)) {
                Files.createDirectories(dir, PosixFilePermissions.asFileAttribute(OWNER_DIR));
                Files.setPosixFilePermissions(dir, OWNER_DIR); // the umask may have masked the attribute
                return;
            }
            UserPrincipal me = currentUser(dir);
            Set<PosixFilePermission> mode = Files.getPosixFilePermissions(dir);
            boolean shared = mode.stream().anyMatch(OTHERS::contains);
            if (shared && Files.getOwner(dir).equals(me)) {
                Files.setPosixFilePermissions(dir, OWNER_DIR);
                LOG.warn("data folder {} was {}: made owner-only (rwx------)", dir, PosixFilePermissions.toString(mode));
            } else if (shared && !allowShared) {
                throw new IllegalStateException("the data folder " + dir + " is open to other users ("
                        + PosixFilePermissions.toString(mode) + ") and not this process's to change: make it owner-only"
                        + " (chmod 700), or set sluice.data-dir.allow-shared=true to keep the data in owner-only folders"
                        + " inside it");
            }
            tightenInside(dir, me);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot prepare the data folder " + dir, e);
        }
    }

    /** The process's user: by name, or (a user without one, as in some containers) as the owner of a new file. */
    private static UserPrincipal currentUser(Path dir) throws IOException {
        try {
            return dir.getFileSystem().getUserPrincipalLookupService()
                    .lookupPrincipalByName(System.getProperty("user.name"));
        } catch (IOException | RuntimeException unknownName) {
            Path probe = Files.createTempFile("sluice-owner", ".probe");
            try {
                return Files.getOwner(probe);
            } finally {
                Files.deleteIfExists(probe);
            }
        }
    }

    /** Everything inside {@code dir} that the process owns: folders owner-only, files owner read-write. */
    private static void tightenInside(Path dir, UserPrincipal me) throws IOException {
        int[] changed = {0};
        Files.walkFileTree(dir, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path d, BasicFileAttributes a) throws IOException {
                if (!d.equals(dir)) {
                    tighten(d, OWNER_DIR);
                }
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path f, BasicFileAttributes a) throws IOException {
                if (a.isRegularFile()) {
                    tighten(f, EnumSet.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE));
                }
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFileFailed(Path f, IOException e) {
                return FileVisitResult.CONTINUE; // gone meanwhile, or not ours to read: left as it is
            }

            private void tighten(Path p, Set<PosixFilePermission> most) throws IOException {
                Set<PosixFilePermission> mode = Files.getPosixFilePermissions(p);
                if (mode.stream().anyMatch(OTHERS::contains) && Files.getOwner(p).equals(me)) {
                    Set<PosixFilePermission> kept = EnumSet.noneOf(PosixFilePermission.class);
                    mode.stream().filter(most::contains).forEach(kept::add);
                    Files.setPosixFilePermissions(p, kept);
                    changed[0]++;
                }
            }
        });
        if (changed[0] > 0) {
            LOG.warn("data folder {}: {} files and folders inside were open to other users, made owner-only", dir,
                    changed[0]);
        }
    }
}
