package io.sluice.frontend.auth;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;

/**
 * Slows down secret guessing on the SQS port: failed signatures are counted per client address and access key id,
 * and per client address, in fixed one-minute windows. Past {@link #PER_KEY} failures for one key from one address, or
 * {@link #PER_ADDRESS} from one address whatever the key, each further wrong signature from there is answered only
 * after {@link #DELAY_MILLIS} (a tarpit) until the window ends: a guesser gets one answer a second per connection,
 * and connections are capped per address. A right signature is never delayed nor refused, so no one is locked out,
 * not even behind a proxy that gives every client its address (blocking by address would let one bad client there
 * lock out all the others). At most {@link #MAX_TRACKED} entries are kept; past that, a window's counts start over.
 */
public final class AuthFailures {
    static final int PER_KEY = 10;
    /** How long the answer to a wrong signature waits once its address is past a limit. */
    public static final long DELAY_MILLIS = 1_000;
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

    /** Whether a wrong signature for {@code accessKeyId} (null: none named) from {@code address} is slowed now. */
    public boolean slowed(String address, String accessKeyId) {
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
