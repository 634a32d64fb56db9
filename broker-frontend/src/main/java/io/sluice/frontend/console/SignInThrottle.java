package io.sluice.frontend.console;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * Failed console sign-ins, counted per client address in one-minute windows: once an address has failed
 * {@link #MAX_FAILURES} times in its window, every sign-in from it is refused until the window ends, so secrets cannot
 * be guessed through the form at speed (API requests are unaffected: each one is signed, nothing to guess). At most
 * {@link #MAX_ADDRESSES} addresses are tracked (IPv6 ones by their /64), the oldest windows dropped first. Clients
 * behind one proxy share its address, and its budget.
 */
final class SignInThrottle {
    static final int MAX_FAILURES = 10;
    static final long WINDOW_MILLIS = 60_000;
    static final int MAX_ADDRESSES = 10_000;

    private record Window(long startMillis, int failures) {
    }

    private final LongSupplier clockMillis;
    private final Map<String, Window> windows = new LinkedHashMap<>(); // insertion order: oldest window first

    SignInThrottle(LongSupplier clockMillis) {
        this.clockMillis = clockMillis;
    }

    /** Milliseconds until sign-ins from {@code address} are accepted again; 0 when they are now. */
    synchronized long blockedForMillis(String address) {
        Window w = current(client(address));
        return w == null || w.failures() < MAX_FAILURES ? 0
                : Math.max(1, WINDOW_MILLIS - (clockMillis.getAsLong() - w.startMillis()));
    }

    /** Whether sign-ins from {@code address} are refused now. */
    boolean blocked(String address) {
        return blockedForMillis(address) > 0;
    }

    /** Counts a failed sign-in from {@code address}. */
    synchronized void failed(String address) {
        address = client(address);
        Window w = current(address);
        if (w == null) {
            windows.put(address, new Window(clockMillis.getAsLong(), 1));
            Iterator<String> oldest = windows.keySet().iterator();
            while (windows.size() > MAX_ADDRESSES) {
                oldest.next();
                oldest.remove();
            }
        } else {
            windows.put(address, new Window(w.startMillis(), w.failures() + 1));
        }
    }

    /**
     * Whom an address stands for: itself for IPv4, its /64 network for IPv6 (one host is given a whole /64, so
     * counting single IPv6 addresses would let it rotate through them).
     */
    static String client(String address) {
        if (address.indexOf(':') < 0) {
            return address;
        }
        try {
            byte[] bytes = InetAddress.getByName(address).getAddress();
            if (bytes.length != 16) {
                return address;
            }
            return HexFormat.of().formatHex(bytes, 0, 8) + "::/64";
        } catch (UnknownHostException e) { // a literal always parses; whatever it is, count it as it is
            return address;
        }
    }

    private Window current(String address) {
        Window w = windows.get(address);
        if (w != null && clockMillis.getAsLong() - w.startMillis() >= WINDOW_MILLIS) {
            windows.remove(address);
            return null;
        }
        return w;
    }
}
