package io.sluice.frontend.console;

import static io.sluice.frontend.console.ConsoleHttp.page;
import static io.sluice.frontend.console.Html.esc;
import static io.sluice.frontend.console.Html.url;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sluice.frontend.console.Console.Response;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/** The console's queue list ({@code /console/queues}): counts, rates and dead-letter links per queue, sorted. */
final class QueueListPage {
    private final PageContext ctx;

    QueueListPage(PageContext ctx) {
        this.ctx = ctx;
    }

    /** One row of the queue list. */
    private record Row(String name, String url, Map<String, String> attributes) {
        long num(String attribute) {
            try {
                return Long.parseLong(attributes.getOrDefault(attribute, "0"));
            } catch (NumberFormatException e) {
                return 0;
            }
        }
    }

    /** Queues one list page shows (each costs a count query per partition on every 10 s refresh). */
    static final int LIST_LIMIT = 200;

    CompletableFuture<Response> queuesPage(ConsoleSessions.Session s, Map<String, String> query) {
        String filter = query.getOrDefault("filter", "");
        ObjectNode list = JsonNodeFactory.instance.objectNode().put("MaxResults", LIST_LIMIT);
        if (!filter.isEmpty()) {
            list.put("QueueNamePrefix", filter);
        }
        boolean[] more = {false};
        return ctx.api().call(s, "ListQueues", list).thenCompose(out -> {
            more[0] = out.hasNonNull("NextToken");
            List<CompletableFuture<Row>> rows = new ArrayList<>();
            for (JsonNode u : out.path("QueueUrls")) {
                String url = u.asText();
                rows.add(ctx.api().attributes(s, url).handle((a, e) -> new Row(url.substring(url.lastIndexOf('/') + 1),
                        url, e == null ? a : Map.of())));
            }
            return CompletableFuture.allOf(rows.toArray(CompletableFuture[]::new))
                    .thenApply(v -> rows.stream().map(CompletableFuture::join).toList());
        }).thenApplyAsync(rows -> {
            String sort = query.getOrDefault("sort", "name");
            boolean capped = more[0];
            Comparator<Row> order = switch (sort) {
                case "visible" -> Comparator.comparingLong((Row w) -> -w.num("ApproximateNumberOfMessages"));
                case "inflight" -> Comparator.comparingLong((Row w) -> -w.num("ApproximateNumberOfMessagesNotVisible"));
                case "delayed" -> Comparator.comparingLong((Row w) -> -w.num("ApproximateNumberOfMessagesDelayed"));
                case "age" -> Comparator.comparingLong((Row w) -> -w.num("SluiceApproximateAgeOfOldestMessage"));
                default -> Comparator.comparing(Row::name);
            };
            Map<String, List<String>> sources = new LinkedHashMap<>();
            for (Row row : rows) {
                String target = ConsoleApi.deadLetterTarget(row.attributes());
                if (target != null) {
                    sources.computeIfAbsent(target, k -> new ArrayList<>()).add(row.name());
                }
            }
            StringBuilder b = new StringBuilder();
            b.append("<form class=\"inline\" method=\"get\" action=\"/console/queues\"><div><label for=\"filter\">")
                    .append("Name starts with</label><input id=\"filter\" name=\"filter\" value=\"").append(esc(filter))
                    .append("\"></div><input type=\"hidden\" name=\"sort\" value=\"").append(esc(sort))
                    .append("\"><button type=\"submit\">Filter</button></form>");
            b.append("<p class=\"muted\">").append(rows.size()).append(rows.size() == 1 ? " queue" : " queues")
                    .append(", refreshed every 10 s.</p><div class=\"scroll\"><table id=\"queues\"><thead><tr>")
                    .append(th("Name", "name", filter, false)).append("<th class=\"opt\">Type</th>")
                    .append("<th class=\"num opt\">Partitions</th>")
                    .append(th("Visible", "visible", filter, true)).append(th("In flight", "inflight", filter, true))
                    .append(th("Delayed", "delayed", filter, true)).append(th("Oldest (s)", "age", filter, true))
                    .append("<th class=\"num opt\">Sent/s</th><th class=\"num opt\">Received/s</th>")
                    .append("<th class=\"opt\">Dead-letter target</th><th class=\"opt\">Dead-letter sources</th>")
                    .append("</tr></thead><tbody>");
            for (Row row : rows.stream().sorted(order).toList()) {
                Map<String, String> a = row.attributes();
                b.append("<tr><td class=\"wrap\"><a href=\"/console/queues/").append(url(row.name())).append("\">")
                        .append(esc(row.name())).append("</a></td><td class=\"opt\">")
                        .append(row.name().endsWith(".fifo") ? "FIFO" : "standard").append("</td><td class=\"num opt\">")
                        .append(esc(a.getOrDefault("SluicePartitions", "1"))).append("</td><td class=\"num\">")
                        .append(esc(a.getOrDefault("ApproximateNumberOfMessages", "?"))).append("</td><td class=\"num\">")
                        .append(esc(a.getOrDefault("ApproximateNumberOfMessagesNotVisible", "?")))
                        .append("</td><td class=\"num\">")
                        .append(esc(a.getOrDefault("ApproximateNumberOfMessagesDelayed", "?")))
                        .append("</td><td class=\"num\">")
                        .append(esc(a.getOrDefault("SluiceApproximateAgeOfOldestMessage", "?")))
                        .append("</td>").append(rateCells(row.name()))
                        .append("<td class=\"opt wrap\">").append(esc(Optional.ofNullable(ConsoleApi.deadLetterTarget(a))
                                .orElse(""))).append("</td><td class=\"opt wrap\">")
                        .append(esc(String.join(", ", sources.getOrDefault(row.name(), List.of()))))
                        .append("</td></tr>");
            }
            b.append("</tbody></table></div>");
            if (capped) {
                b.append("<p class=\"muted\">Showing the first ").append(LIST_LIMIT)
                        .append(" queues by name: filter by a prefix to see others.</p>");
            }
            return page(200, "Queues", ctx.nav().apply(s), 10, b.toString());
        }, ctx.work());
    }

    /** The queue's sent and received rates over the last 10 s (from this node's samples), blank when not known. */
    private String rateCells(String queue) {
        float[] r = ctx.services().catalog().get(queue).map(q -> ctx.history().rates(q.queueId())).orElse(null);
        return r == null ? "<td class=\"num opt\"></td><td class=\"num opt\"></td>"
                : String.format(Locale.ROOT, "<td class=\"num opt\">%.1f</td><td class=\"num opt\">%.1f</td>",
                        r[0], r[1]);
    }

    private static String th(String label, String key, String filter, boolean numeric) {
        return "<th" + (numeric ? " class=\"num\"" : "") + "><a href=\"/console/queues?sort=" + key
                + (filter.isEmpty() ? "" : "&amp;filter=" + esc(url(filter))) + "\">" + esc(label) + "</a></th>";
    }
}
