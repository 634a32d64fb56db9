package io.sluice.common;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/** Making files and renames durable: what a crash (power loss) must not undo once a caller relies on it. */
public final class Fsync {
    private Fsync() {
    }

    /** Forces a file's content, or a directory's entries (renames and creations in it), to disk. */
    public static void force(Path path) throws IOException {
        try (FileChannel ch = Files.isDirectory(path)
                ? FileChannel.open(path, StandardOpenOption.READ)
                : FileChannel.open(path, StandardOpenOption.WRITE)) {
            ch.force(true);
        }
    }

    /**
     * Writes {@code target} whole or not at all, durably: the bytes go to a sibling temporary file, which is forced,
     * renamed over the target, and the rename is forced by forcing the folder.
     */
    public static void writeAtomically(Path target, byte[] bytes) throws IOException {
        Path tmp = target.resolveSibling(target.getFileName() + ".tmp");
        Files.write(tmp, bytes);
        force(tmp);
        Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE);
        force(target.toAbsolutePath().getParent());
    }
}
