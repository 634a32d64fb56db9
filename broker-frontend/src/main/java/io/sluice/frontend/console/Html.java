package io.sluice.frontend.console;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;

/** Escaping and the page frame of the console's server-rendered HTML. */
final class Html {
    private Html() {
    }

    /** Text safe in an element or a quoted attribute. */
    static String esc(String s) {
        if (s == null) {
            return "";
        }
        StringBuilder b = new StringBuilder(s.length() + 16);
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '<' -> b.append("&lt;");
                case '>' -> b.append("&gt;");
                case '&' -> b.append("&amp;");
                case '"' -> b.append("&quot;");
                case '\'' -> b.append("&#39;");
                default -> b.append(c);
            }
        }
        return b.toString();
    }

    /**
     * At most {@code max} characters of {@code s}, and "…" when it was longer; characters are code points, so a cut
     * never splits a surrogate pair (an emoji), which a browser would show as a replacement character.
     */
    static String cut(String s, int max) {
        if (s.length() <= max || s.codePointCount(0, s.length()) <= max) {
            return s;
        }
        return s.substring(0, s.offsetByCodePoints(0, max)) + "…";
    }

    /** A path segment or query value, percent-encoded (UTF-8). */
    static String url(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }

    /**
     * A whole page.
     *
     * @param nav      the signed-in navigation (null on the sign-in page)
     * @param refresh  seconds between automatic reloads, 0 for none
     */
    static String page(String title, String nav, int refresh, String body) {
        return "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
                + "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
                + (refresh > 0 ? "<meta http-equiv=\"refresh\" content=\"" + refresh + "\">" : "")
                + "<title>" + esc(title) + " · Sluice</title>"
                + "<link rel=\"stylesheet\" href=\"/console/static/console.css\">"
                + "<link rel=\"stylesheet\" href=\"/console/static/uplot.css\"></head><body>"
                + "<header><a class=\"brand\" href=\"/console/queues\">Sluice</a>" + (nav == null ? "" : nav)
                + "</header><main><h1>" + esc(title) + "</h1>" + body + "</main></body></html>";
    }

    /** Draws a queue page's charts from its JSON data block with uPlot (no inline script: the CSP allows none). */
    static final String CHARTS = """
            (function () {
              var data = document.getElementById('history-data');
              if (!data || typeof uPlot === 'undefined') { return; }
              var d = JSON.parse(data.textContent);
              function chart(id, title, series, values) {
                var box = document.getElementById(id);
                var width = Math.max(260, Math.min(box.clientWidth || 600, 1160));
                new uPlot({ title: title, width: width, height: 220, series: series,
                  scales: { x: { time: true, range: [d.now - 3600, d.now] } } }, values, box);
              }
              chart('depth-chart', 'Messages', [{}, { label: 'visible', stroke: '#1f6feb', width: 2 },
                { label: 'in flight', stroke: '#d97706', width: 2 }, { label: 'delayed', stroke: '#6b7280', width: 2 }],
                [d.t, d.visible, d.inflight, d.delayed]);
              chart('age-chart', 'Age of the oldest message (s)', [{}, { label: 'oldest', stroke: '#b42318', width: 2 }],
                [d.t, d.oldest]);
              chart('rate-chart', 'Messages per second', [{}, { label: 'sent', stroke: '#1a7f37', width: 2 },
                { label: 'received', stroke: '#7c3aed', width: 2 }], [d.t, d.sent, d.received]);
            })();
            """;

    static final String CSS = """
            :root { --fg: #1d2430; --muted: #5b6576; --line: #d9dee7; --bg: #f6f7f9; --accent: #1f6feb; --bad: #b42318; }
            * { box-sizing: border-box; }
            body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg);
                   background: var(--bg); }
            header { display: flex; flex-wrap: wrap; align-items: center; gap: 1rem; padding: .6rem 1.2rem;
                     background: #17202e; color: #fff; }
            header a { color: #dbe6ff; text-decoration: none; }
            header a.brand { font-weight: 700; color: #fff; margin-right: 1rem; }
            header form { margin: 0 0 0 auto; }
            header .who { color: #aab6c8; }
            main { max-width: 1200px; margin: 0 auto; padding: 1rem 1.2rem 3rem; }
            h1 { font-size: 1.4rem; margin: .6rem 0 1rem; word-break: break-all; }
            h2 { font-size: 1.1rem; margin: 1.6rem 0 .6rem; }
            table { width: 100%; border-collapse: collapse; background: #fff; border: 1px solid var(--line); }
            th, td { text-align: left; padding: .45rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
            th a { color: var(--fg); }
            td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
            td.wrap { word-break: break-all; }
            .scroll { overflow-x: auto; }
            form.inline { display: flex; flex-wrap: wrap; gap: .5rem; align-items: end; margin: .5rem 0; }
            label { display: block; font-size: .85rem; color: var(--muted); }
            input, textarea { font: inherit; padding: .35rem .5rem; border: 1px solid var(--line); border-radius: 4px; }
            textarea { width: min(100%, 40rem); min-height: 5rem; }
            button { font: inherit; padding: .4rem .9rem; border: 0; border-radius: 4px; background: var(--accent);
                     color: #fff; cursor: pointer; }
            button.danger { background: var(--bad); }
            .card { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 1rem; margin: 1rem 0;
                    max-width: 40rem; }
            .flash { padding: .6rem .8rem; border-radius: 4px; background: #e7f3ea; border: 1px solid #9bc9a5; }
            .error { padding: .6rem .8rem; border-radius: 4px; background: #fdecea; border: 1px solid #f0a8a0; }
            .dead { color: var(--bad); font-weight: 600; }
            .ok { color: #1a7f37; font-weight: 600; }
            .muted { color: var(--muted); }
            .charts > div { background: #fff; border: 1px solid var(--line); border-radius: 6px; margin: .5rem 0;
                            padding: .3rem; overflow: hidden; }
            @media (max-width: 700px) { th.opt, td.opt { display: none; } main { padding: .6rem; } }
            """;
}
