package io.sluice.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Issue 42, item 2: message bodies, the catalog's key secrets and the receipt secret are on disk; no other local user
 * may read them. A data folder written by a release before (a 022 umask: folders 0755, files 0644) is made owner-only
 * at start; a folder that is open to others and not the process's to change is refused unless allowed.
 */
class DataAtRestIT {
    @Test
    void aDataFolderOpenToOthersIsMadeOwnerOnlyAtStart() throws Exception {
        SluiceProcess server = SluiceProcess.start("at-rest");
        try {
            SqsClients.client(server.endpoint()).createQueue(b -> b.queueName("at-rest"));
            Path data = server.dataDir();
            assertEquals("rwx------", mode(data), "created owner-only");
            server.stop();
            // as an older release left it
            Files.setPosixFilePermissions(data, PosixFilePermissions.fromString("rwxr-xr-x"));
            java.util.Map<Path, Object> inside = new java.util.HashMap<>(); // path -> its file (inode) then
            try (var walk = Files.walk(data)) {
                walk.filter(p -> !p.equals(data)).forEach(p -> inside.put(p, fileKey(p)));
            }
            for (Path p : inside.keySet()) {
                Files.setPosixFilePermissions(p, PosixFilePermissions.fromString(Files.isDirectory(p) ? "rwxr-xr-x"
                        : "rw-r--r--"));
            }
            server.restart();
            SqsClients.client(server.endpoint()).getQueueUrl(b -> b.queueName("at-rest"));
            assertEquals("rwx------", mode(data), "nothing inside is reachable by another user");
            int checked = 0;
            for (var e : inside.entrySet()) { // those still there, not replaced since (Ratis rewrites some files)
                Path p = e.getKey();
                if (Files.exists(p) && e.getValue().equals(fileKey(p))) {
                    assertTrue(mode(p).endsWith("------"), p + " is still " + mode(p));
                    checked++;
                }
            }
            assertTrue(checked > 10, "the store's files were checked: " + checked);
        } finally {
            server.close();
        }
    }

    @Test
    void aFolderOpenToOthersAndNotOursIsRefusedUnlessAllowed() throws Exception {
        Path data = Files.createTempDirectory(SluiceProcess.itDir(), "shared-");
        Files.setPosixFilePermissions(data, PosixFilePermissions.fromString("rwxr-xr-x"));
        Files.setOwner(data, data.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("nobody"));
        Process refused = dev(data, false);
        String out = new String(refused.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(refused.waitFor(60, TimeUnit.SECONDS), "still running");
        assertNotEquals(0, refused.exitValue(), out);
        assertTrue(out.contains("open to other users"), out);

        Process allowed = dev(data, true);
        try {
            java.io.BufferedReader lines = new java.io.BufferedReader(new java.io.InputStreamReader(
                    allowed.getInputStream(), StandardCharsets.UTF_8));
            String line;
            boolean running = false;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
            while (!running && System.nanoTime() < deadline && (line = lines.readLine()) != null) {
                running = line.contains("Sluice dev is running");
            }
            assertTrue(running, "allowed: it starts");
        } finally {
            allowed.destroy();
            allowed.waitFor(30, TimeUnit.SECONDS);
        }
    }

    private static Process dev(Path data, boolean allowShared) throws Exception {
        ProcessBuilder b = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-jar", SluiceProcess.jar(), "dev", "--port", "0", "--admin-port", "0", "--data-dir", data.toString())
                .redirectErrorStream(true);
        try (java.net.ServerSocket free = new java.net.ServerSocket(0)) {
            b.environment().put("SLUICE_METADATA_PORT", Integer.toString(free.getLocalPort()));
        }
        b.environment().put("SLUICE_DATA_DIR_ALLOW_SHARED", Boolean.toString(allowShared));
        return b.start();
    }

    private static Object fileKey(Path p) {
        try {
            return Files.readAttributes(p, java.nio.file.attribute.BasicFileAttributes.class).fileKey();
        } catch (java.io.IOException gone) {
            return "gone";
        }
    }

    private static String mode(Path p) throws Exception {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(p));
    }
}
