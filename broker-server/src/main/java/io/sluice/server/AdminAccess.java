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
    /** Host names answered besides IP literals and localhost (lower case). */
    private final java.util.Set<String> allowedHosts;

    private AdminAccess(String token, boolean metricsNeedToken, java.util.Set<String> allowedHosts) {
        this.token = token == null || token.isEmpty() ? null : token.getBytes(StandardCharsets.UTF_8);
        this.metricsNeedToken = metricsNeedToken;
        this.allowedHosts = allowedHosts;
    }

    /** For a cluster role: the configured token, if any. */
    static AdminAccess configured(ServerConfig config) {
        return new AdminAccess(config.get(ServerConfigKeys.ADMIN_TOKEN), config.get(ServerConfigKeys.ADMIN_METRICS_AUTH),
                allowedHosts(config));
    }

    private static java.util.Set<String> allowedHosts(ServerConfig config) {
        java.util.Set<String> names = new java.util.HashSet<>();
        for (String name : config.get(ServerConfigKeys.ADMIN_ALLOWED_HOSTS).split(",")) {
            if (!name.isBlank()) {
                names.add(name.trim().toLowerCase(java.util.Locale.ROOT));
            }
        }
        return java.util.Set.copyOf(names);
    }

    /**
     * Whether a request's {@code Host} header names this endpoint: an IP address (v4, or v6 in brackets), localhost,
     * or a configured name; any port. No header (HTTP/1.0) passes: DNS rebinding works through a browser, which
     * always sends one.
     */
    boolean hostAllowed(String hostHeader) {
        if (hostHeader == null) {
            return true;
        }
        String host = hostHeader.trim().toLowerCase(java.util.Locale.ROOT);
        if (host.startsWith("[")) {
            int end = host.indexOf(']');
            return end > 0 && (end == host.length() - 1 || host.charAt(end + 1) == ':')
                    && host.substring(1, end).matches("[0-9a-f:.]+") && host.substring(1, end).contains(":");
        }
        int colon = host.indexOf(':');
        if (colon >= 0) {
            if (!host.substring(colon + 1).matches("[0-9]{1,5}")) {
                return false;
            }
            host = host.substring(0, colon);
        }
        if (host.endsWith(".")) {
            host = host.substring(0, host.length() - 1);
        }
        return host.equals("localhost") || allowedHosts.contains(host)
                || host.matches("(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])(\\.(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])){3}");
    }

    /** For {@code sluice dev}: the configured token, else the one in {@code dataDir/admin-token} (made once). */
    static AdminAccess forDev(ServerConfig config, Path dataDir) {
        String configured = config.get(ServerConfigKeys.ADMIN_TOKEN);
        boolean metrics = config.get(ServerConfigKeys.ADMIN_METRICS_AUTH);
        if (!configured.isEmpty()) {
            return new AdminAccess(configured, metrics, allowedHosts(config));
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
            return new AdminAccess(Files.readString(file).trim(), metrics, allowedHosts(config));
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
