package io.sluice.server;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Who may use the admin port: whoever presents the admin token ({@code Authorization: Bearer <token>}, compared in
 * constant time) may write ({@code POST /admin/...}) and read; whoever presents the read token may only read
 * {@code GET /metrics} and {@code GET /admin/status}, which name queues and access key ids and so need a token
 * ({@code sluice.admin.read-auth}, on by default except in {@code sluice dev}). The admin token comes from
 * {@code sluice.admin.token}; {@code sluice dev} without one generates a random token into
 * {@code DATA_DIR/admin-token} (owner-only), which {@code sluice admin --token-file} reads. A cluster role without a
 * token refuses every admin write, and every read that needs a token. Neither token is ever logged; a token from the
 * documentation's examples is refused where the admin port binds beyond loopback.
 */
final class AdminAccess {
    static final String TOKEN_FILE = "admin-token";

    private static final Logger LOG = LoggerFactory.getLogger(AdminAccess.class);

    private final byte[] token; // null: admin writes are refused
    private final byte[] readToken; // null: only the admin token reads what needs a token
    private final boolean readsNeedToken;
    /** Host names answered besides IP literals and localhost (lower case). */
    private final Set<String> allowedHosts;

    private AdminAccess(String token, ServerConfig config, boolean readsNeedToken) {
        this.token = bytes(token);
        this.readToken = bytes(readToken(config));
        this.readsNeedToken = readsNeedToken;
        this.allowedHosts = allowedHosts(config);
        String host = config.get(ServerConfigKeys.ADMIN_HOST);
        if (!ClusterTransport.isLoopback(host)) {
            for (byte[] t : new byte[][] {this.token, this.readToken}) {
                if (t != null && ConfiguredKeys.PLACEHOLDER_SECRETS.contains(new String(t, StandardCharsets.UTF_8))) {
                    throw new IllegalArgumentException("an admin token (sluice.admin.token or sluice.admin.read-token)"
                            + " is an example from the documentation, and the admin port binds " + host + ": give it"
                            + " a value of its own (e.g. openssl rand -hex 24)");
                }
            }
        }
    }

    private static byte[] bytes(String token) {
        return token == null || token.isEmpty() ? null : token.getBytes(StandardCharsets.UTF_8);
    }

    private static String readToken(ServerConfig config) {
        String token = config.get(ServerConfigKeys.ADMIN_READ_TOKEN);
        String file = config.get(ServerConfigKeys.ADMIN_READ_TOKEN_FILE);
        if (!token.isEmpty() || file.isEmpty()) {
            return token;
        }
        try {
            String read = Files.readString(Path.of(file)).trim();
            if (read.isEmpty()) {
                throw new IllegalArgumentException("sluice.admin.read-token-file " + file + " is empty");
            }
            return read;
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read sluice.admin.read-token-file " + file + ": " + e, e);
        }
    }

    /** Whether reads need a token: sluice.admin.read-auth, else the deprecated metrics-auth, else the role's default. */
    private static boolean readsNeedToken(ServerConfig config, boolean roleDefault) {
        if (config.isSet(ServerConfigKeys.ADMIN_READ_AUTH)) {
            return config.get(ServerConfigKeys.ADMIN_READ_AUTH);
        }
        if (config.isSet(ServerConfigKeys.ADMIN_METRICS_AUTH)) {
            return config.get(ServerConfigKeys.ADMIN_METRICS_AUTH);
        }
        return roleDefault;
    }

    /** For a cluster role: the configured tokens, if any; reads need one unless sluice.admin.read-auth is off. */
    static AdminAccess configured(ServerConfig config) {
        AdminAccess access = new AdminAccess(config.get(ServerConfigKeys.ADMIN_TOKEN), config,
                readsNeedToken(config, true));
        if (access.readsNeedToken && access.token == null && access.readToken == null) {
            LOG.warn("GET /metrics and GET /admin/status will answer 403: they need a token and none is configured"
                    + " (set sluice.admin.read-token for Prometheus, or sluice.admin.read-auth=false where the admin"
                    + " port is reachable only by those who may read them)");
        }
        return access;
    }

    private static Set<String> allowedHosts(ServerConfig config) {
        Set<String> names = new HashSet<>();
        for (String name : config.get(ServerConfigKeys.ADMIN_ALLOWED_HOSTS).split(",")) {
            if (!name.isBlank()) {
                names.add(name.trim().toLowerCase(Locale.ROOT));
            }
        }
        return Set.copyOf(names);
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
        String host = hostHeader.trim().toLowerCase(Locale.ROOT);
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
        boolean reads = readsNeedToken(config, false);
        if (!configured.isEmpty()) {
            return new AdminAccess(configured, config, reads);
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
                Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE);
            }
            return new AdminAccess(Files.readString(file).trim(), config, reads);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the admin token file " + file, e);
        }
    }

    /** Whether admin writes are possible at all (a token is configured). */
    boolean writesEnabled() {
        return token != null;
    }

    /** Whether GET /metrics and GET /admin/status need a token. */
    boolean readsNeedToken() {
        return readsNeedToken;
    }

    /** Whether any token could read them (else a read that needs one is refused outright: 403, not 401). */
    boolean readsEnabled() {
        return token != null || readToken != null;
    }

    /** Whether an {@code Authorization} header value carries the admin token. */
    boolean permits(String authorization) {
        return carries(authorization, token);
    }

    /** Whether an {@code Authorization} header value carries the read token or the admin token. */
    boolean permitsRead(String authorization) {
        return carries(authorization, readToken) | carries(authorization, token);
    }

    private static boolean carries(String authorization, byte[] expected) {
        if (expected == null || authorization == null || !authorization.startsWith("Bearer ")) {
            return false;
        }
        byte[] presented = authorization.substring("Bearer ".length()).trim().getBytes(StandardCharsets.UTF_8);
        return MessageDigest.isEqual(presented, expected);
    }
}
