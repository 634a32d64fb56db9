package io.sluice.frontend.console;

import java.util.Locale;

/** Figures as an operator reads them: counts with thousands separators, durations and sizes in their units. */
final class Units {
    private Units() {
    }

    /** 1234567 -> "1,234,567". */
    static String count(long n) {
        return String.format(Locale.ROOT, "%,d", n);
    }

    /**
     * Seconds in the two largest units that matter: 45 -> "45 s", 330 -> "5 min 30 s", 345600 -> "4 d", 90000 ->
     * "1 d 1 h"; 0 -> "0 s".
     */
    static String duration(long seconds) {
        long[] sizes = {86_400, 3_600, 60, 1};
        String[] names = {"d", "h", "min", "s"};
        StringBuilder b = new StringBuilder();
        long left = Math.max(0, seconds);
        int shown = 0;
        for (int i = 0; i < sizes.length && shown < 2; i++) {
            long n = left / sizes[i];
            left %= sizes[i];
            if (n > 0) {
                b.append(b.length() == 0 ? "" : " ").append(n).append(' ').append(names[i]);
                shown++;
            } else if (shown > 0) {
                break; // "1 h" rather than "1 h 0 min"; "1 d 1 h", never "1 d 0 h 5 min"
            }
        }
        return b.length() == 0 ? "0 s" : b.toString();
    }

    /** How long ago, in words: "just now" under a second, else the duration and "ago". */
    static String ago(long millis) {
        return millis < 1_000 ? "just now" : duration(millis / 1000) + " ago";
    }

    /** Bytes in binary units: 262144 -> "256 KiB", 1000 -> "1,000 bytes", 1048576 -> "1 MiB". */
    static String bytes(long n) {
        if (n >= 1 << 20 && n % (1 << 20) == 0) {
            return count(n >> 20) + " MiB";
        }
        if (n >= 1 << 10 && n % (1 << 10) == 0) {
            return count(n >> 10) + " KiB";
        }
        return count(n) + (n == 1 ? " byte" : " bytes");
    }
}
