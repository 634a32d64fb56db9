package io.sluice.frontend.console;

import static io.sluice.frontend.console.ConsoleHttp.page;
import static io.sluice.frontend.console.ConsoleHttp.redirect;
import static io.sluice.frontend.console.ConsoleHttp.unwrap;
import static io.sluice.frontend.console.ConsoleHttp.response;
import static io.sluice.frontend.console.Html.esc;
import static io.sluice.frontend.console.Html.url;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sluice.catalog.QueueMetadata;
import io.sluice.common.SqsError;
import io.sluice.common.SqsException;
import io.sluice.frontend.console.Console.Response;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;
import java.util.function.ToDoubleFunction;

/**
 * The console's queue list ({@code /console/queues}): every queue the key may list, filtered by a substring of the
 * name, sorted by name or by any figure, a page at a time, with the true total. The figures come from the latest
 * {@link QueueHistory} sample (one counts read per shard, at most a period old), not from a query per queue, so the
 * list costs the same for 10 queues or 100,000. The table is a live region: {@code /console/live/queues} answers it
 * alone, and the page's script reloads it in place (and as a filter is typed) without touching the form.
 */
final class QueueListPage {
    /** Queues on one page. */
    static final int PAGE_SIZE = 50;

    private final PageContext ctx;

    QueueListPage(PageContext ctx) {
        this.ctx = ctx;
    }

    /** What a list view asks for, from its query string (unknown values fall back to the defaults). */
    record View(String filter, String sort, boolean descending, int page) {
        static View of(Map<String, String> query) {
            String sort = query.getOrDefault("sort", "name");
            if (!SORTS.containsKey(sort)) {
                sort = "name";
            }
            String dir = query.get("dir");
            boolean descending = dir == null ? !sort.equals("name") : dir.equals("desc");
            int page;
            try {
                page = Math.max(1, Integer.parseInt(query.getOrDefault("page", "1")));
            } catch (NumberFormatException e) {
                page = 1;
            }
            return new View(query.getOrDefault("filter", "").trim(), sort, descending, page);
        }

        /** This view's query string with one parameter changed (null: removed). */
        String with(String key, String value) {
            Map<String, String> q = new LinkedHashMap<>();
            if (!filter.isEmpty()) {
                q.put("filter", filter);
            }
            q.put("sort", sort);
            q.put("dir", descending ? "desc" : "asc");
            if (page > 1) {
                q.put("page", Integer.toString(page));
            }
            if (value == null) {
                q.remove(key);
            } else {
                q.put(key, value);
            }
            StringBuilder b = new StringBuilder();
            q.forEach((k, v) -> b.append(b.length() == 0 ? "" : "&").append(k).append('=').append(url(v)));
            return b.toString();
        }
    }

    /** One listed queue: its figures when the key may read them and the sample has them, else null. */
    record Row(QueueMetadata queue, QueueHistory.Latest figures, long nowMillis) {
        double value(String sort) {
            return figures == null ? Double.NaN : SORTS.get(sort).applyAsDouble(this);
        }

        long ageSeconds() {
            long base = figures.counts().oldestRetentionBaseMillis();
            return base < 0 ? 0 : Math.max(0, (nowMillis - base) / 1000);
        }
    }

    /** The figures a list sorts by ("name" sorts by name). */
    static final Map<String, ToDoubleFunction<Row>> SORTS = new LinkedHashMap<>();

    static {
        SORTS.put("name", r -> 0);
        SORTS.put("visible", r -> r.figures().counts().visible());
        SORTS.put("inflight", r -> r.figures().counts().inflight());
        SORTS.put("delayed", r -> r.figures().counts().delayed());
        SORTS.put("age", r -> r.ageSeconds());
        SORTS.put("sent", r -> r.figures().sentRate());
        SORTS.put("received", r -> r.figures().receivedRate());
    }

    /** A page of the list and what it was cut from. */
    record Selection(List<Row> rows, int matching, int total) {
    }

    /**
     * The rows of one view of {@code queues} (in name order, as the catalog lists them): the queues {@code listable}
     * allows whose names contain the filter (ignoring case), sorted
     * (by name, or by a figure with the queues whose figures are not known here last, by name), and the view's page.
     * {@code total} counts every listable queue, {@code matching} those the filter keeps.
     */
    static Selection select(List<QueueMetadata> queues, View view, Predicate<String> listable,
                            Predicate<String> readable, QueueHistory.Snapshot sample, long nowMillis) {
        String needle = view.filter().toLowerCase(Locale.ROOT);
        int total = 0;
        List<Row> matching = new ArrayList<>();
        for (QueueMetadata q : queues) {
            if (!listable.test(q.name())) {
                continue;
            }
            total++;
            if (needle.isEmpty() || q.name().toLowerCase(Locale.ROOT).contains(needle)) {
                QueueHistory.Latest figures = sample == null || !readable.test(q.name()) ? null
                        : sample.queues().get(q.queueId());
                matching.add(new Row(q, figures, sample == null ? nowMillis : sample.atMillis()));
            }
        }
        int from = Math.min((view.page() - 1) * PAGE_SIZE, matching.size());
        int to = Math.min(from + PAGE_SIZE, matching.size());
        if (view.sort().equals("name")) { // the catalog lists queues by name already
            List<Row> page = new ArrayList<>(to - from);
            for (int i = from; i < to; i++) {
                page.add(matching.get(view.descending() ? matching.size() - 1 - i : i));
            }
            return new Selection(page, matching.size(), total);
        }
        List<Keyed> keyed = new ArrayList<>(matching.size());
        for (int i = 0; i < matching.size(); i++) {
            double v = matching.get(i).value(view.sort());
            keyed.add(new Keyed(matching.get(i), Double.isNaN(v) || v < 0, v, i));
        }
        Comparator<Keyed> byValue = Comparator.comparingDouble(Keyed::key);
        // the queues without the figure last; ties by name, i.e. by their place in the catalog's order
        Comparator<Keyed> order = Comparator.comparing(Keyed::unknown)
                .thenComparing(view.descending() ? byValue.reversed() : byValue).thenComparingInt(Keyed::byName);
        List<Keyed> sorted;
        if (to <= keyed.size() / 4) { // an early page: keep the best `to` in a heap, not a sort of them all
            PriorityQueue<Keyed> best = new PriorityQueue<>(to + 1, order.reversed());
            for (Keyed k : keyed) {
                best.add(k);
                if (best.size() > to) {
                    best.poll();
                }
            }
            sorted = new ArrayList<>(best);
            sorted.sort(order);
        } else {
            keyed.sort(order);
            sorted = keyed;
        }
        return new Selection(sorted.subList(Math.min(from, sorted.size()), Math.min(to, sorted.size())).stream()
                .map(Keyed::row).toList(), matching.size(), total);
    }

    /** A row with its sort key worked out once (a sort compares each row many times) and its place by name. */
    private record Keyed(Row row, boolean unknown, double key, int byName) {
    }

    private static final Map<String, String> DONE = Map.of("deleted", "Queue deleted.");

    /** The whole page: the filter, the live region holding the table, and the form creating a queue. */
    CompletableFuture<Response> queuesPage(ConsoleSessions.Session s, Map<String, String> query) {
        return queuesPage(s, query, null, Map.of());
    }

    /**
     * @param problem a refused creation's error, shown above the list with the form open and filled as it was sent
     * @param create  the creation form's values (empty: a blank form)
     */
    CompletableFuture<Response> queuesPage(ConsoleSessions.Session s, Map<String, String> query, String problem,
                                           Map<String, String> create) {
        View view = View.of(query);
        String done = query.get("done");
        return table(s, view).thenApply(table -> {
            String body = (problem != null ? "<p class=\"error\" id=\"problem\">" + esc(problem) + "</p>"
                    : done != null && DONE.containsKey(done) ? "<p class=\"flash\" id=\"done\">" + DONE.get(done)
                            + "</p>" : "")
                    + "<form class=\"inline\" method=\"get\" action=\"/console/queues\"><div><label for=\"filter\">"
                    + "Name contains</label><input id=\"filter\" name=\"filter\" autocomplete=\"off\" value=\""
                    + esc(view.filter()) + "\"></div><input type=\"hidden\" name=\"sort\" value=\"" + esc(view.sort())
                    + "\"><input type=\"hidden\" name=\"dir\" value=\"" + (view.descending() ? "desc" : "asc")
                    + "\"><button type=\"submit\">Filter</button></form>"
                    + "<div id=\"queue-list\" data-live=\"/console/live/queues\" data-filter-input=\"filter\""
                    + " data-query=\"" + esc(view.with("filter", null)) + "\" data-every=\""
                    + ctx.refreshSeconds() + "\" data-refreshed=\"0\">" + table + "</div>"
                    + CreateQueueForm.render(s, create, problem != null, ctx.services().catalog().list("").stream()
                            .map(QueueMetadata::name).filter(n -> ctx.api().allowed(s, "ListQueues", n)).limit(1_000)
                            .toList());
            return page(problem == null ? 200 : 400, "Queues", ctx.nav().apply(s), body);
        });
    }

    /** Creates a queue from the form; a refusal shows the list again with the error and the form as it was sent. */
    CompletableFuture<Response> create(ConsoleSessions.Session s, Map<String, String> form) {
        ObjectNode req;
        try {
            req = CreateQueueForm.request(form, ctx.services()::arn);
        } catch (SqsException e) {
            return queuesPage(s, Map.of(), e.failure().message(), form);
        }
        String name = req.path("QueueName").asText();
        return ctx.api().call(s, "CreateQueue", req)
                .thenApply(out -> redirect("/console/queues/" + url(name) + "?done=created"))
                .exceptionallyCompose(e -> {
                    Throwable cause = unwrap(e);
                    if (cause instanceof SqsException refused && refused.failure().error() != SqsError.ACCESS_DENIED) {
                        return queuesPage(s, Map.of(), refused.failure().error().queryCode() + ": "
                                + refused.failure().message(), form);
                    }
                    return CompletableFuture.failedFuture(cause);
                });
    }

    /** The live region alone (what the page's script reloads). */
    CompletableFuture<Response> queuesFragment(ConsoleSessions.Session s, Map<String, String> query) {
        return table(s, View.of(query)).thenApply(table -> response(200, "text/html; charset=utf-8", table));
    }

    private CompletableFuture<String> table(ConsoleSessions.Session s, View view) {
        // one ListQueues through the API: the key's rate limit and usage count a list view like any request
        return ctx.api().call(s, "ListQueues", JsonNodeFactory.instance.objectNode().put("MaxResults", 1))
                .thenApplyAsync(ignored -> {
                    QueueHistory.Snapshot sample = ctx.history().fresh();
                    List<QueueMetadata> queues = ctx.services().catalog().list("");
                    Selection sel = select(queues, view, name -> ctx.api().allowed(s, "ListQueues", name),
                            name -> ctx.api().allowed(s, "GetQueueAttributes", name), sample,
                            ctx.services().nowMillis());
                    return render(s, view, sel, queues, sample);
                }, ctx.work());
    }

    private String render(ConsoleSessions.Session s, View view, Selection sel, List<QueueMetadata> queues,
                          QueueHistory.Snapshot sample) {
        Map<String, List<String>> sources = new HashMap<>(); // dead-letter target -> the sources this key may list
        for (QueueMetadata q : queues) {
            if (q.attributes().containsKey("RedrivePolicy")) {
                String target = ConsoleApi.deadLetterTarget(q.attributes());
                if (target != null && ctx.api().allowed(s, "ListDeadLetterSourceQueues", q.name())) {
                    sources.computeIfAbsent(target, k -> new ArrayList<>()).add(q.name());
                }
            }
        }
        StringBuilder b = new StringBuilder("<p class=\"muted\" id=\"queue-count\">");
        int first = sel.rows().isEmpty() ? 0 : (view.page() - 1) * PAGE_SIZE + 1;
        b.append(view.filter().isEmpty() ? Units.count(sel.total()) + (sel.total() == 1 ? " queue" : " queues")
                : Units.count(sel.matching()) + " of " + Units.count(sel.total()) + " queues match");
        if (sel.matching() > PAGE_SIZE) {
            b.append("; showing ").append(Units.count(first)).append("–")
                    .append(Units.count(first + sel.rows().size() - 1));
        }
        b.append(sample == null ? ". Figures not sampled yet." : ". Figures as of "
                + Units.ago(ctx.services().nowMillis() - sample.atMillis()) + ", refreshed in place.").append("</p>");
        b.append("<div class=\"scroll\"><table id=\"queues\"><thead><tr>")
                .append(th(view, "Name", "name", false, false)).append("<th class=\"opt\">Type</th>")
                .append("<th class=\"num opt\">Partitions</th>")
                .append(th(view, "Visible", "visible", true, false))
                .append(th(view, "In flight", "inflight", true, false))
                .append(th(view, "Delayed", "delayed", true, true)).append(th(view, "Oldest", "age", true, false))
                .append(th(view, "Sent/s", "sent", true, true)).append(th(view, "Received/s", "received", true, true))
                .append("<th class=\"opt\">Dead-letter target</th><th class=\"opt\">Dead-letter sources</th>")
                .append("</tr></thead><tbody>");
        for (Row row : sel.rows()) {
            QueueMetadata q = row.queue();
            QueueHistory.Latest f = row.figures();
            b.append("<tr><td class=\"name\">").append(link(q.name())).append("</td><td class=\"opt\">")
                    .append(q.fifo() ? "FIFO" : "standard").append("</td><td class=\"num opt\">")
                    .append(q.partitions()).append("</td>")
                    .append(num(f == null ? -1 : f.counts().visible(), ""))
                    .append(num(f == null ? -1 : f.counts().inflight(), ""))
                    .append(num(f == null ? -1 : f.counts().delayed(), " opt"))
                    .append(f == null ? "<td class=\"num\">?</td>" : "<td class=\"num\" title=\"" + row.ageSeconds()
                            + " s\">" + esc(Units.duration(row.ageSeconds())) + "</td>")
                    .append(rate(f == null ? -1 : f.sentRate())).append(rate(f == null ? -1 : f.receivedRate()));
            String target = ctx.api().allowed(s, "GetQueueAttributes", q.name())
                    ? ConsoleApi.deadLetterTarget(q.attributes()) : null;
            b.append("<td class=\"opt name\">").append(target == null ? "" : link(target)).append("</td>")
                    .append("<td class=\"opt name\">");
            List<String> from = sources.getOrDefault(q.name(), List.of());
            for (int i = 0; i < from.size(); i++) {
                b.append(i == 0 ? "" : ", ").append(link(from.get(i)));
            }
            b.append("</td></tr>");
        }
        b.append("</tbody></table></div>");
        int pages = Math.max(1, (sel.matching() + PAGE_SIZE - 1) / PAGE_SIZE);
        if (pages > 1) {
            b.append("<p class=\"pager\">");
            if (view.page() > 1) {
                b.append("<a id=\"previous-page\" href=\"/console/queues?").append(esc(view.with("page",
                        Integer.toString(view.page() - 1)))).append("\">← Previous</a> ");
            }
            b.append("Page ").append(Math.min(view.page(), pages)).append(" of ").append(pages);
            if (view.page() < pages) {
                b.append(" <a id=\"next-page\" href=\"/console/queues?").append(esc(view.with("page",
                        Integer.toString(view.page() + 1)))).append("\">Next →</a>");
            }
            b.append("</p>");
        }
        return b.toString();
    }

    private static String link(String queue) {
        return "<a href=\"/console/queues/" + url(queue) + "\">" + esc(queue) + "</a>";
    }

    private static String num(long v, String extraClass) {
        return "<td class=\"num" + extraClass + "\">" + (v < 0 ? "?" : Units.count(v)) + "</td>";
    }

    private static String rate(float r) {
        return r < 0 ? "<td class=\"num opt\"></td>"
                : String.format(Locale.ROOT, "<td class=\"num opt\">%.1f</td>", r);
    }

    /**
     * A column head: a link sorting by it (most first for figures), or reversing the order when it is the sort;
     * {@code optional} columns fold away at phone width.
     */
    private static String th(View view, String label, String key, boolean numeric, boolean optional) {
        boolean current = view.sort().equals(key);
        boolean descending = current ? !view.descending() : numeric;
        String query = new View(view.filter(), key, descending, 1).with("page", null);
        String css = (numeric ? "num" : "") + (optional ? (numeric ? " opt" : "opt") : "");
        return "<th" + (css.isEmpty() ? "" : " class=\"" + css + "\"") + "><a id=\"sort-" + key + "\" href=\"/console/queues?"
                + esc(query) + "\">" + esc(label) + (current ? (view.descending() ? " ▼" : " ▲") : "") + "</a></th>";
    }
}
