package io.sluice.server;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.HexFormat;

/**
 * Who may use the admin port's state-changing endpoints: whoever presents the admin token
 * ({@code Authorization: Bearer <token>}, compared in constant time). The token comes from
 * {@code sluice.admin.token}; {@code sluice dev} without one generates a random token into
 * {@code DATA_DIR/admin-token} (owner-only), which {@code sluice admin --token-file} reads. A cluster role without a
 * token refuses every admin write. The token is never logged.
 */
final class AdminAccess {
    static final String TOKEN_FILE = "admin-token";

    private final byte[] token; // null: admin writes are refused
    private final boolean metricsNeedToken;

    private AdminAccess(String token, boolean metricsNeedToken) {
        this.token = token == null || token.isEmpty() ? null : token.getBytes(StandardCharsets.UTF_8);
        this.metricsNeedToken = metricsNeedToken;
    }

    /** For a cluster role: the configured token, if any. */
    static AdminAccess configured(ServerConfig config) {
        return new AdminAccess(config.get(ServerConfigKeys.ADMIN_TOKEN), config.get(ServerConfigKeys.ADMIN_METRICS_AUTH));
    }

    /** For {@code sluice dev}: the configured token, else the one in {@code dataDir/admin-token} (made once). */
    static AdminAccess forDev(ServerConfig config, Path dataDir) {
        String configured = config.get(ServerConfigKeys.ADMIN_TOKEN);
        boolean metrics = config.get(ServerConfigKeys.ADMIN_METRICS_AUTH);
        if (!configured.isEmpty()) {
            return new AdminAccess(configured, metrics);
        }
        Path file = dataDir.resolve(TOKEN_FILE);
        try {
            if (!Files.exists(file)) {
                byte[] random = new byte[24];
                new SecureRandom().nextBytes(random);
                Path tmp = dataDir.resolve(TOKEN_FILE + ".tmp");
                Files.deleteIfExists(tmp);
                try {
                    Files.createFile(tmp, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
                } catch (UnsupportedOperationException notPosix) {
                    Files.createFile(tmp); // a file system without POSIX permissions: its own access rules apply
                }
                Files.writeString(tmp, HexFormat.of().formatHex(random));
                Files.move(tmp, file, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
            }
            return new AdminAccess(Files.readString(file).trim(), metrics);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the admin token file " + file, e);
        }
    }

    /** Whether admin writes are possible at all (a token is configured). */
    boolean writesEnabled() {
        return token != null;
    }

    boolean metricsNeedToken() {
        return metricsNeedToken;
    }

    /** Whether an {@code Authorization} header value carries the admin token. */
    boolean permits(String authorization) {
        if (token == null || authorization == null || !authorization.startsWith("Bearer ")) {
            return false;
        }
        byte[] presented = authorization.substring("Bearer ".length()).trim().getBytes(StandardCharsets.UTF_8);
        return MessageDigest.isEqual(presented, token);
    }
}
