package io.sluice.frontend.console;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;

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

    /** A time as UTC text: "2026-12-07 13:52:10 UTC". */
    static String utc(long epochMillis) {
        return UTC.format(Instant.ofEpochMilli(epochMillis));
    }

    private static final DateTimeFormatter UTC = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss 'UTC'")
            .withZone(ZoneOffset.UTC);

    /** A time element: UTC text that the page's script shows in the browser's time zone (the UTC time on hover). */
    static String time(long epochMillis) {
        return "<time class=\"local\" datetime=\"" + Instant.ofEpochMilli(epochMillis) + "\" title=\""
                + utc(epochMillis) + "\">" + utc(epochMillis) + "</time>";
    }

    /** A path segment or query value, percent-encoded (UTF-8). */
    static String url(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }

    /**
     * A whole page.
     *
     * @param nav      the signed-in navigation (null on the sign-in page)
     */
    static String page(String title, String nav, String body) {
        return "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
                + "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
                + "<title>" + esc(title) + " · Sluice</title>"
                + "<link rel=\"stylesheet\" href=\"/console/static/console.css\">"
                + "<link rel=\"stylesheet\" href=\"/console/static/uplot.css\">"
                + "<script src=\"/console/static/console.js\" defer></script></head><body>"
                + "<header><a class=\"brand\" href=\"/console/queues\">Sluice</a>" + (nav == null ? "" : nav)
                + "</header><main><h1>" + esc(title) + "</h1>" + body + "</main></body></html>";
    }

    /**
     * Reloads a page's live regions in place: an element with {@code data-live} (the URL answering its contents) is
     * refilled every {@code data-every} seconds with {@code data-query} as its query string, and at once (debounced)
     * when the text field named by {@code data-filter-input} changes, which also becomes the address bar's query so a
     * reload keeps it. Nothing outside the region is touched, so typed input, focus and scroll stay; an answer older
     * than one already shown is dropped. Each refill counts up {@code data-refreshed} and fires
     * {@code sluice:refreshed}. A session that ended (the answer redirects to the sign-in) reloads the page.
     */
    static final String LIVE = """
            (function () {
              'use strict';
              var zone = Intl.DateTimeFormat().resolvedOptions().timeZone || 'local time';
              function localTimes(root) {
                root.querySelectorAll('time.local[datetime]').forEach(function (t) {
                  var d = new Date(t.getAttribute('datetime'));
                  if (!isNaN(d)) { t.textContent = d.toLocaleString() + ' (' + zone + ')'; }
                });
              }
              localTimes(document);
              // a flash ("Message sent.") is said once: a reload of the address does not say it again
              var shownQuery = new URLSearchParams(location.search);
              if (shownQuery.has('done')) {
                shownQuery.delete('done');
                history.replaceState(null, '', location.pathname + (shownQuery.toString() ? '?' + shownQuery : ''));
              }
              // a message's body: copy to the clipboard, or download as a file
              document.addEventListener('click', function (e) {
                var t = e.target;
                if (!(t instanceof Element)) { return; }
                var id = t.getAttribute('data-copy') || t.getAttribute('data-download');
                var source = id ? document.getElementById(id) : null;
                if (!source) { return; }
                var text = source.textContent;
                if (t.hasAttribute('data-copy')) {
                  if (navigator.clipboard && window.isSecureContext) {
                    navigator.clipboard.writeText(text).then(function () { t.textContent = 'Copied'; });
                  } else {
                    var range = document.createRange();
                    range.selectNodeContents(source);
                    var selection = window.getSelection();
                    selection.removeAllRanges();
                    selection.addRange(range);
                    document.execCommand('copy');
                    t.textContent = 'Copied';
                  }
                } else {
                  var url = URL.createObjectURL(new Blob([text], { type: 'text/plain;charset=utf-8' }));
                  var a = document.createElement('a');
                  a.href = url;
                  a.download = t.getAttribute('data-filename') || 'message.txt';
                  document.body.appendChild(a);
                  a.click();
                  a.remove();
                  setTimeout(function () { URL.revokeObjectURL(url); }, 1000);
                }
              });
              document.querySelectorAll('[data-live]').forEach(function (box) {
                var every = Math.max(1, Number(box.getAttribute('data-every') || '10')) * 1000;
                var inputId = box.getAttribute('data-filter-input');
                var input = inputId ? document.getElementById(inputId) : null;
                var asked = 0, shown = 0, typing = null;
                function query() {
                  var q = new URLSearchParams(box.getAttribute('data-query') || '');
                  if (input) { if (input.value) { q.set('filter', input.value); } else { q.delete('filter'); } }
                  return q;
                }
                function load() {
                  var mine = ++asked;
                  var q = query().toString();
                  fetch(box.getAttribute('data-live') + (q ? '?' + q : ''),
                      { credentials: 'same-origin', redirect: 'manual', headers: { 'Accept': 'text/html' } })
                    .then(function (r) {
                      if (r.type === 'opaqueredirect' || r.status === 401 || r.status === 303) {
                        location.reload();
                        return null;
                      }
                      return r.ok ? r.text() : null;
                    })
                    .then(function (html) {
                      if (html === null || mine < shown) { return; }
                      shown = mine;
                      box.innerHTML = html;
                      localTimes(box);
                      box.setAttribute('data-refreshed', String(Number(box.getAttribute('data-refreshed') || '0') + 1));
                      document.dispatchEvent(new CustomEvent('sluice:refreshed', { detail: box }));
                    })
                    .catch(function () { /* the next period tries again */ });
                }
                setInterval(load, every);
                if (input) {
                  input.addEventListener('input', function () {
                    clearTimeout(typing);
                    typing = setTimeout(function () {
                      var q = new URLSearchParams(box.getAttribute('data-query') || '');
                      q.delete('page');
                      box.setAttribute('data-query', q.toString());
                      var address = query().toString();
                      history.replaceState(null, '', location.pathname + (address ? '?' + address : ''));
                      load();
                    }, 250);
                  });
                }
              });
            })();
            """;

    /**
     * Draws a queue page's charts from {@code data-history} (JSON, {@code ?range=} seconds), in the range picked with
     * the {@code data-range} buttons (kept in the browser's local storage, so it survives reloads and restarts), again
     * after each reload of the page's live region. A chart is replaced only once its new data arrived (no blank
     * flash). Each chart box says what it shows in {@code data-range} and {@code data-points}.
     */
    static final String CHARTS = """
            (function () {
              'use strict';
              var box = document.getElementById('charts');
              if (!box || typeof uPlot === 'undefined') { return; }
              var zone = Intl.DateTimeFormat().resolvedOptions().timeZone || 'local time';
              var whole = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000, 200000,
                500000, 1000000, 2000000, 5000000, 10000000];
              var stored = null;
              try { stored = window.localStorage.getItem('sluice.chart-range'); } catch (e) { /* storage off */ }
              var range = /^(900|3600|21600|86400)$/.test(stored || '') ? stored : '3600';
              var asked = 0;
              function mark() {
                document.querySelectorAll('button[data-range]').forEach(function (b) {
                  b.classList.toggle('active', b.getAttribute('data-range') === range);
                });
              }
              function chart(id, title, series, values, counts, d) {
                var target = document.getElementById(id);
                if (!target) { return; }
                var width = Math.max(260, Math.min(target.clientWidth || 600, 1160));
                var next = document.createElement('div');
                new uPlot({ title: title + ' (times in ' + zone + ')', width: width, height: 220, series: series,
                  scales: { x: { time: true, range: [d.from, d.now] },
                    y: { range: function (u, min, max) { return [0, Math.max(counts ? 5 : 1, max || 0)]; } } },
                  axes: [{}, counts ? { incrs: whole } : {}] }, values, next);
                target.replaceChildren(next);
                target.setAttribute('data-range', String(d.now - d.from));
                target.setAttribute('data-points', String(d.t.length));
              }
              function draw() {
                var mine = ++asked;
                fetch(box.getAttribute('data-history') + '?range=' + range, { credentials: 'same-origin',
                    redirect: 'manual' })
                  .then(function (r) { return r.ok ? r.json() : null; })
                  .then(function (d) {
                    if (!d || mine !== asked) { return; }
                    chart('depth-chart', 'Messages', [{}, { label: 'visible', stroke: '#1f6feb', width: 2 },
                      { label: 'in flight', stroke: '#d97706', width: 2 },
                      { label: 'delayed', stroke: '#6b7280', width: 2 }],
                      [d.t, d.visible, d.inflight, d.delayed], true, d);
                    chart('age-chart', 'Age of the oldest message (s)', [{}, { label: 'oldest', stroke: '#b42318',
                      width: 2 }], [d.t, d.oldest], true, d);
                    chart('rate-chart', 'Messages per second', [{}, { label: 'sent', stroke: '#1a7f37', width: 2 },
                      { label: 'received', stroke: '#7c3aed', width: 2 }], [d.t, d.sent, d.received], false, d);
                  })
                  .catch(function () { /* the next reload tries again */ });
              }
              document.addEventListener('click', function (e) {
                var t = e.target;
                if (!(t instanceof Element) || !t.hasAttribute('data-range')) { return; }
                range = t.getAttribute('data-range');
                try { window.localStorage.setItem('sluice.chart-range', range); } catch (err) { /* storage off */ }
                mark();
                draw();
              });
              mark();
              draw();
              document.addEventListener('sluice:refreshed', draw);
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
            td.name { overflow-wrap: anywhere; min-width: 8rem; }
            .pager a { margin: 0 .5rem; }
            .hint { display: block; font-size: .8rem; color: var(--muted); }
            .field-error { display: block; font-size: .85rem; color: var(--bad); }
            progress.redrive-progress { width: 8rem; vertical-align: middle; }
            button.range { background: #e8eefc; color: var(--fg); padding: .25rem .7rem; }
            button.range.active { background: var(--accent); color: #fff; }
            pre.full-body { white-space: pre-wrap; overflow-wrap: anywhere; max-height: 30rem; overflow: auto;
                            background: var(--bg); padding: .5rem; border: 1px solid var(--line); }
            tr.message-details > td { padding-top: 0; }
            details summary { cursor: pointer; color: var(--accent); font-size: .9rem; }
            table.attributes { margin: .5rem 0; width: auto; min-width: 50%; }
            form.row-action { display: inline; margin-right: .3rem; }
            th.body-column { width: 45%; }
            .scroll { overflow-x: auto; }
            form.inline { display: flex; flex-wrap: wrap; gap: .5rem; align-items: end; margin: .5rem 0; }
            label { display: block; font-size: .85rem; color: var(--muted); }
            input, textarea { font: inherit; padding: .35rem .5rem; border: 1px solid var(--line); border-radius: 4px;
                              max-width: 100%; }
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
            @media (max-width: 700px) { th.opt, td.opt { display: none; } main { padding: .6rem; }
                                        th, td { padding: .4rem .35rem; } td.name { min-width: 0; } }
            """;
}
