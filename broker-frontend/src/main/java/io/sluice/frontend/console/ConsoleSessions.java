package io.sluice.frontend.console;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * The console's signed-in sessions, in memory on the node that signed them in (a restart signs everyone out). A
 * session is a random 256-bit id (the cookie), who it is (an access key, or the admin token), and its CSRF token.
 * It ends after {@link #IDLE_MILLIS} without a request or {@link #MAX_AGE_MILLIS} after sign-in, at sign-out, or
 * when {@link #MAX_SESSIONS} newer ones push it out.
 */
final class ConsoleSessions {
    static final long IDLE_MILLIS = 30 * 60_000L;
    static final long MAX_AGE_MILLIS = 8 * 3600_000L;
    static final int MAX_SESSIONS = 1_000;
    static final int MAX_SESSIONS_PER_KEY = 20;

    /**
     * @param accessKeyId  the signed-in key, or null for the admin token
     * @param secretDigest SHA-256 of the secret it signed in with: a session ends when the key's secret changes
     */
    record Session(String id, String accessKeyId, String secretDigest, String csrf, long createdMillis,
                   long lastSeenMillis) {
        boolean admin() {
            return accessKeyId == null;
        }

        /** Who the session acts as, in access logs and usage metrics. */
        String principal() {
            return accessKeyId == null ? "admin-token" : accessKeyId;
        }
    }

    private static final SecureRandom RANDOM = new SecureRandom();
    private final Map<String, Session> sessions = new ConcurrentHashMap<>();
    private final LongSupplier clock;

    ConsoleSessions(LongSupplier clock) {
        this.clock = clock;
    }

    static String randomToken() {
        byte[] b = new byte[32];
        RANDOM.nextBytes(b);
        return HexFormat.of().formatHex(b);
    }

    /** Whether two tokens are equal, in time that does not depend on where they differ. */
    static boolean same(String a, String b) {
        return a != null && b != null
                && MessageDigest.isEqual(a.getBytes(StandardCharsets.UTF_8), b.getBytes(StandardCharsets.UTF_8));
    }

    /** SHA-256 of a secret, hex. */
    static String digest(String secret) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                    .digest(secret.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    Session open(String accessKeyId, String secretDigest) {
        long now = clock.getAsLong();
        expire(now);
        // one key cannot push everyone else out: past its own share, its least recently seen session goes first
        List<Session> own = sessions.values().stream()
                .filter(s -> Objects.equals(s.accessKeyId(), accessKeyId)).toList();
        if (own.size() >= MAX_SESSIONS_PER_KEY) {
            own.stream().min(Comparator.comparingLong(Session::lastSeenMillis))
                    .ifPresent(s -> sessions.remove(s.id()));
        }
        if (sessions.size() >= MAX_SESSIONS) { // the least recently seen goes
            sessions.values().stream().min(Comparator.comparingLong(Session::lastSeenMillis))
                    .ifPresent(s -> sessions.remove(s.id()));
        }
        Session s = new Session(randomToken(), accessKeyId, secretDigest, randomToken(), now, now);
        sessions.put(s.id(), s);
        return s;
    }

    /** The live session with this id (its idle time restarts), or null. */
    Session find(String id) {
        if (id == null) {
            return null;
        }
        long now = clock.getAsLong();
        Session s = sessions.get(id);
        if (s == null) {
            return null;
        }
        if (now - s.lastSeenMillis() > IDLE_MILLIS || now - s.createdMillis() > MAX_AGE_MILLIS) {
            sessions.remove(id);
            return null;
        }
        Session seen = new Session(s.id(), s.accessKeyId(), s.secretDigest(), s.csrf(), s.createdMillis(), now);
        sessions.replace(id, s, seen);
        return seen;
    }

    void close(String id) {
        if (id != null) {
            sessions.remove(id);
        }
    }

    private void expire(long now) {
        for (Iterator<Session> it = sessions.values().iterator(); it.hasNext(); ) {
            Session s = it.next();
            if (now - s.lastSeenMillis() > IDLE_MILLIS || now - s.createdMillis() > MAX_AGE_MILLIS) {
                it.remove();
            }
        }
    }
}
