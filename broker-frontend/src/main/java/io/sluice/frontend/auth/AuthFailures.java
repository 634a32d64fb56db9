package io.sluice.frontend.auth;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;

/**
 * Slows down secret guessing on the SQS port: failed signatures are counted per client address and access key id,
 * and per client address, in fixed one-minute windows. Past {@link #PER_KEY} failures for one key from one address, or
 * {@link #PER_ADDRESS} from one address whatever the key, that address's requests (for that key, or at all) are
 * refused before their signature is checked until the window ends. A real client elsewhere is never locked out: the
 * counts are per client address, so an attacker can only lock out its own address (and those sharing it, behind one
 * NAT or proxy). At most {@link #MAX_TRACKED} entries are kept; past that, a window's counts start over (a flood of
 * addresses gets less protection, never a refusal it did not earn).
 */
public final class AuthFailures {
    static final int PER_KEY = 10;
    static final int PER_ADDRESS = 100;
    static final long WINDOW_NANOS = 60_000_000_000L;
    static final int MAX_TRACKED = 100_000;

    private record Window(long startNanos, AtomicInteger failures) {
    }

    private final Map<String, Window> counts = new ConcurrentHashMap<>();
    private final LongSupplier nanoTime;

    public AuthFailures(LongSupplier nanoTime) {
        this.nanoTime = nanoTime;
    }

    /** Whether requests for {@code accessKeyId} (null: none named) from {@code address} are refused now. */
    public boolean blocked(String address, String accessKeyId) {
        return failures(address) >= PER_ADDRESS || accessKeyId != null && failures(address + " " + accessKeyId) >= PER_KEY;
    }

    /** A request from {@code address} for {@code accessKeyId} (null: none named) failed its signature check. */
    public void failed(String address, String accessKeyId) {
        if (counts.size() >= MAX_TRACKED) {
            counts.clear();
        }
        count(address);
        if (accessKeyId != null) {
            count(address + " " + accessKeyId);
        }
    }

    private int failures(String key) {
        Window w = counts.get(key);
        return w == null || nanoTime.getAsLong() - w.startNanos() >= WINDOW_NANOS ? 0 : w.failures().get();
    }

    private void count(String key) {
        long now = nanoTime.getAsLong();
        counts.compute(key, (k, w) -> w == null || now - w.startNanos() >= WINDOW_NANOS
                ? new Window(now, new AtomicInteger(1)) : incremented(w));
    }

    private static Window incremented(Window w) {
        w.failures().incrementAndGet();
        return w;
    }

    /**
     * The access key id a request names, before its signature is checked: the {@code Credential=} of its
     * {@code Authorization} header or its {@code X-Amz-Credential} query parameter (up to the first {@code /}); null
     * when it names none.
     */
    public static String accessKeyOf(String authorization, QueryLookup query) {
        String credential = null;
        if (authorization != null) {
            int at = authorization.indexOf("Credential=");
            if (at >= 0) {
                credential = authorization.substring(at + "Credential=".length());
            }
        } else {
            credential = query.get("X-Amz-Credential");
        }
        if (credential == null) {
            return null;
        }
        int slash = credential.indexOf('/');
        String id = slash < 0 ? credential : credential.substring(0, slash);
        return id.isEmpty() || id.length() > 128 ? null : id;
    }

    /** A query parameter's decoded value, or null. */
    @FunctionalInterface
    public interface QueryLookup {
        String get(String name);
    }
}
