package io.sluice.frontend.console;

import static io.sluice.frontend.console.ConsoleHttp.page;
import static io.sluice.frontend.console.ConsoleHttp.response;
import static io.sluice.frontend.console.Html.esc;

import io.sluice.frontend.console.Console.Response;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * Requests and throttles per access key through this node ({@code /console/usage}): the totals since it started
 * (its {@code sqs.usage.*} counters) and the rates between the last two reads. An admin sees every key; a key sees
 * its own row only.
 */
final class UsagePage {
    /** Two reads at least this far apart give the rates. */
    static final long MIN_INTERVAL_MILLIS = 5_000;

    private record Read(long atMillis, Map<String, long[]> usage) {
    }

    private final Supplier<Map<String, long[]>> usage;
    private final LongSupplier clockMillis;
    private final Predicate<ConsoleSessions.Session> isAdmin;
    private final Function<ConsoleSessions.Session, String> nav;
    private final int refreshSeconds;
    private Read last;
    private Read before;

    UsagePage(Supplier<Map<String, long[]>> usage, LongSupplier clockMillis, Predicate<ConsoleSessions.Session> isAdmin,
              Function<ConsoleSessions.Session, String> nav, int refreshSeconds) {
        this.usage = usage;
        this.clockMillis = clockMillis;
        this.isAdmin = isAdmin;
        this.nav = nav;
        this.refreshSeconds = refreshSeconds;
    }

    Response usagePage(ConsoleSessions.Session s) {
        return page(200, "Usage", nav.apply(s), "<div id=\"usage-live\" data-live=\"/console/live/usage\" data-every=\""
                + refreshSeconds + "\" data-refreshed=\"0\">" + table(s) + "</div>");
    }

    Response usageLive(ConsoleSessions.Session s) {
        return response(200, "text/html; charset=utf-8", table(s));
    }

    /** The latest read and the one before it at least {@link #MIN_INTERVAL_MILLIS} earlier (null when none). */
    private synchronized Read[] reads() {
        long now = clockMillis.getAsLong();
        if (last == null || now - last.atMillis() >= MIN_INTERVAL_MILLIS) {
            before = last;
            last = new Read(now, usage.get());
        }
        return new Read[] {last, before};
    }

    private String table(ConsoleSessions.Session s) {
        Read[] reads = reads();
        Read now = reads[0];
        Read then = reads[1];
        boolean admin = isAdmin.test(s);
        StringBuilder b = new StringBuilder("<p class=\"muted\">Requests through this node since it started, by access")
                .append(" key; the rates over the last ")
                .append(then == null ? "interval (after the next refresh)" : Units.duration((now.atMillis()
                        - then.atMillis()) / 1000)).append(".")
                .append(admin ? "" : " You see your own key only.").append("</p>")
                .append("<div class=\"scroll\"><table id=\"usage\"><thead><tr><th>Access key</th>")
                .append("<th class=\"num\">Requests</th><th class=\"num opt\">Requests/s</th>")
                .append("<th class=\"num\">Throttled</th><th class=\"num opt\">Throttled/s</th></tr></thead><tbody>");
        int rows = 0;
        for (Map.Entry<String, long[]> e : now.usage().entrySet()) {
            if (!admin && !e.getKey().equals(s.accessKeyId())) {
                continue;
            }
            long[] was = then == null ? null : then.usage().get(e.getKey());
            double seconds = then == null ? 0 : (now.atMillis() - then.atMillis()) / 1000.0;
            b.append("<tr><td class=\"wrap key\">").append(esc(e.getKey())).append("</td><td class=\"num requests\">")
                    .append(Units.count(e.getValue()[0])).append("</td>").append(rate(e.getValue()[0], was, 0, seconds))
                    .append("<td class=\"num throttled\">").append(Units.count(e.getValue()[1])).append("</td>")
                    .append(rate(e.getValue()[1], was, 1, seconds)).append("</tr>");
            rows++;
        }
        if (rows == 0) {
            b.append("<tr><td colspan=\"5\" class=\"muted\">No requests yet.</td></tr>");
        }
        return b.append("</tbody></table></div>").toString();
    }

    private static String rate(long now, long[] was, int i, double seconds) {
        if (seconds <= 0) {
            return "<td class=\"num opt\"></td>";
        }
        long before = was == null ? 0 : was[i];
        return String.format(Locale.ROOT, "<td class=\"num opt\">%.1f</td>", Math.max(0, now - before) / seconds);
    }
}
