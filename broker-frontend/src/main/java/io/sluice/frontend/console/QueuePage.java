package io.sluice.frontend.console;

import static io.sluice.frontend.console.ConsoleHttp.csrf;
import static io.sluice.frontend.console.ConsoleHttp.page;
import static io.sluice.frontend.console.ConsoleHttp.response;
import static io.sluice.frontend.console.Html.esc;
import static io.sluice.frontend.console.Html.url;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import io.sluice.common.SqsError;
import io.sluice.common.SqsException;
import io.sluice.common.validation.QueueAttributeName;
import io.sluice.frontend.action.ActionContext;
import io.sluice.frontend.console.Console.Response;
import io.sluice.frontend.protocol.Protocol;
import io.sluice.frontend.service.ConsumerActivity;
import io.sluice.partition.PeekedMessage;
import io.sluice.partition.StoredMessage;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Pattern;

/**
 * One queue's console page ({@code /console/queues/<name>}): its charts, attributes, consumers, a peek at its next
 * messages, its dead-letter sources and redrives, tags and the forms {@link QueueForms} answers; the live region the
 * page reloads and the charts' data.
 */
final class QueuePage {
    private final PageContext ctx;

    QueuePage(PageContext ctx) {
        this.ctx = ctx;
    }

    private static final Map<String, String> DONE = Map.of("sent", "Message sent.", "purged", "Queue purged.",
            "attributes", "Attributes saved.", "redrive", "Redrive started.", "cancelled", "Redrive cancelled.",
            "deleted", "Message deleted.", "released", "Message released: visible again.", "created", "Queue created.",
            "tagged", "Tag saved.", "untagged", "Tag removed.");

    /** What a queue's page shows besides its attributes, read before it is rendered. */
    private record Extras(List<PeekedMessage> peeked, List<String> sources, JsonNode tasks, Map<String, String> tags) {
    }

    CompletableFuture<Response> queuePage(ConsoleSessions.Session s, String name, String done,
                                          String problem) {
        return queuePage(s, name, done, problem, false);
    }

    CompletableFuture<Response> queuePage(ConsoleSessions.Session s, String name, String done,
                                          String problem, boolean peek) {
        return queuePage(s, name, done, problem, peek, null);
    }

    /** @param polled what a poll just received (shown with delete and release), or null */
    CompletableFuture<Response> queuePage(ConsoleSessions.Session s, String name, String done,
                                                  String problem, boolean peek, List<MessageView.Shown> polled) {
        ConsoleApi api = ctx.api();
        return api.queueUrl(s, name).thenCompose(url -> api.attributes(s, url).thenCompose(a -> extras(s, name, url,
                a.get("QueueArn"), peek).thenApplyAsync(x -> render(s, name, done, problem, a, x, polled),
                ctx.work())));
    }

    private CompletableFuture<Extras> extras(ConsoleSessions.Session s, String name, String url, String arn,
                                             boolean peek) {
        CompletableFuture<List<PeekedMessage>> peeked = peek
                ? (ctx.api().allowed(s, "ReceiveMessage", name) ? ctx.services().peek(name, 10)
                        : CompletableFuture.failedFuture(new SqsException(SqsError.ACCESS_DENIED,
                                "Access to the resource is denied.")))
                : CompletableFuture.completedFuture(null);
        CompletableFuture<List<String>> sources = ctx.api().call(s, "ListDeadLetterSourceQueues",
                JsonNodeFactory.instance.objectNode().put("QueueUrl", url)).handle((out, e) -> {
                    List<String> names = new ArrayList<>();
                    if (e == null) {
                        out.path("queueUrls").forEach(u -> names.add(u.asText().substring(u.asText().lastIndexOf('/') + 1)));
                    }
                    return names; // a key that may not list them sees no dead-letter section
                });
        CompletableFuture<JsonNode> tasks = arn == null ? CompletableFuture.completedFuture(null)
                : ctx.api().call(s, "ListMessageMoveTasks", JsonNodeFactory.instance.objectNode().put("SourceArn", arn)
                        .put("MaxResults", 10)).handle((out, e) -> e == null ? out.path("Results") : null);
        CompletableFuture<Map<String, String>> tags = ctx.api().call(s, "ListQueueTags",
                JsonNodeFactory.instance.objectNode().put("QueueUrl", url)).handle((out, e) -> {
                    if (e != null) {
                        return null; // a key that may not read them sees no tags section
                    }
                    Map<String, String> found = new TreeMap<>();
                    out.path("Tags").fields().forEachRemaining(t -> found.put(t.getKey(), t.getValue().asText()));
                    return found;
                });
        return CompletableFuture.allOf(peeked, sources, tasks, tags)
                .thenApply(v -> new Extras(peeked.join(), sources.join(), tasks.join(), tags.join()));
    }

    /**
     * A queue's chart data over one of {@link QueueHistory#RANGES} ({@code /console/live/history/<name>?range=s}):
     * for a key that may read the queue's attributes.
     */
    CompletableFuture<Response> chart(ConsoleSessions.Session s, String name, String range) {
        int seconds;
        try {
            seconds = Integer.parseInt(range == null ? "3600" : range);
        } catch (NumberFormatException e) {
            seconds = 3_600;
        }
        int chosen = QueueHistory.RANGES.contains(seconds) ? seconds : 3_600;
        return ctx.api().queueUrl(s, name).thenCompose(url -> {
            if (!ctx.api().allowed(s, "GetQueueAttributes", name)) {
                throw new SqsException(SqsError.ACCESS_DENIED, "Access to the resource is denied.");
            }
            return ctx.services().catalog().get(name).map(q -> ctx.history().chart(q, chosen))
                    .orElseGet(() -> CompletableFuture.failedFuture(ActionContext.queueDoesNotExist(Protocol.JSON)));
        }).thenApply(json -> response(200, "application/json", json));
    }

    /** The live region alone ({@code /console/live/queues/<name>}: what the page's script reloads). */
    CompletableFuture<Response> queueLive(ConsoleSessions.Session s, String name) {
        ConsoleApi api = ctx.api();
        return api.queueUrl(s, name).thenCompose(url -> api.attributes(s, url).thenCompose(a -> extras(s, name, url,
                a.get("QueueArn"), false).thenApplyAsync(x -> response(200, "text/html; charset=utf-8",
                live(s, name, a, x)), ctx.work())));
    }

    private Response render(ConsoleSessions.Session s, String name, String done, String problem,
                            Map<String, String> a, Extras x, List<MessageView.Shown> polled) {
        StringBuilder b = new StringBuilder();
        String flash = problem == null && done != null && DONE.containsKey(done)
                ? "<p class=\"flash\" id=\"done\">" + DONE.get(done) + "</p>" : "";
        boolean redrive = "redrive".equals(done);
        if (problem != null) {
            b.append("<p class=\"error\" id=\"problem\">").append(esc(problem)).append("</p>");
        }
        b.append(redrive ? "" : flash).append("<p><a href=\"/console/queues\">All queues</a></p>");
        String action = "/console/queues/" + url(name);
        // the charts redraw themselves with each reload of the live region, in the range picked (kept by the browser)
        b.append("<h2>Charts</h2><p class=\"ranges\" id=\"ranges\">");
        for (int range : QueueHistory.RANGES) {
            b.append("<button type=\"button\" class=\"range\" id=\"range-").append(range).append("\" data-range=\"")
                    .append(range).append("\">").append(Units.duration(range)).append("</button> ");
        }
        b.append("</p><div class=\"charts\" id=\"charts\" data-history=\"/console/live/history/").append(url(name))
                .append("\"><div id=\"depth-chart\"></div><div id=\"age-chart\"></div><div id=\"rate-chart\"></div>")
                .append("</div>");
        // the figures, attributes and redrives reload in place; "Redrive started." goes with the first reload, where
        // the redrive's own row says how it goes
        b.append("<div id=\"queue-live\" data-live=\"/console/live/queues/").append(url(name))
                .append("\" data-every=\"").append(ctx.refreshSeconds()).append("\" data-refreshed=\"0\">")
                .append(redrive ? flash : "").append(live(s, name, a, x)).append("</div>");
        b.append("<script src=\"/console/static/uplot.js\"></script><script src=\"/console/static/charts.js\"></script>");
        boolean fifo = name.endsWith(".fifo");
        b.append("<h2>Next messages</h2>");
        if (x.peeked() == null) {
            b.append("<p><a id=\"peek\" href=\"").append(action).append("?peek=1\">Peek at the next 10</a>")
                    .append(" <span class=\"muted\">(read only: nothing is leased, receive counts stay)</span></p>");
        } else {
            b.append(peekTable(x.peeked()));
        }
        b.append("<h2>Poll messages</h2>");
        if (polled != null) {
            b.append(polled.isEmpty() ? "<p id=\"polled-none\">The poll received nothing.</p>"
                    : "<p class=\"muted\">Received: each stays in flight until its visibility timeout ends, you delete"
                            + " it, or you release it (visible again at once).</p>"
                    + MessageView.table("polled", polled, m -> actionForm(s, action + "/delete-message",
                            m.receiptHandle(), "Delete", "delete-message", true) + actionForm(s, action
                            + "/release-message", m.receiptHandle(), "Release", "release-message", false)));
        }
        b.append("<div class=\"card\"><form method=\"post\" action=\"").append(action).append("/poll\">")
                .append(csrf(s)).append("<p>A real receive, as a consumer's: the messages received are leased and their")
                .append(" receive counts grow.</p><p><label for=\"poll-visibility\">Visibility timeout (seconds)</label>")
                .append("<input id=\"poll-visibility\" name=\"visibility\" value=\"30\" inputmode=\"numeric\">")
                .append("</p><p><label for=\"poll-max\">At most (1 to 10)</label><input id=\"poll-max\" name=\"max\"")
                .append(" value=\"10\" inputmode=\"numeric\"></p><p><label for=\"poll-wait\">Wait up to (seconds, 0")
                .append(" to 20)</label><input id=\"poll-wait\" name=\"wait\" value=\"1\" inputmode=\"numeric\"></p>")
                .append("<button id=\"poll\" type=\"submit\">Poll</button></form></div>");
        if (deadLetterQueue(x) && !running(x)) {
            b.append("<div class=\"card\"><form method=\"post\" action=\"").append(action)
                    .append("/redrive\">").append(csrf(s)).append("<p>Move this queue's messages back to the")
                    .append(" queues they came from.</p><p><label for=\"rate\">At most this many per second")
                    .append(" (empty: as fast as it goes)</label><input id=\"rate\" name=\"rate\"")
                    .append(" inputmode=\"numeric\"></p><button id=\"redrive\" type=\"submit\">Start")
                    .append(" redrive</button></form></div>");
        }
        b.append("<h2>Edit attributes</h2><div class=\"card\"><form method=\"post\" action=\"").append(action)
                .append("/attributes\">").append(csrf(s));
        for (QueueAttributeName n : QueueAttributeName.values()) {
            if (!n.settable() || (n.fifoOnly() && !fifo) || n.wireName().equals("FifoQueue")) {
                continue;
            }
            String id = "set-" + n.wireName();
            String raw = a.getOrDefault(n.wireName(), "");
            String value = esc(raw);
            boolean json = n.wireName().startsWith("Redrive") || n.wireName().equals("Policy")
                    || n.wireName().equals("SluiceRedeliveryBackoff");
            b.append("<p><label for=\"").append(id).append("\">").append(n.wireName()).append("</label>")
                    // a parser drops one newline right after <textarea>: this one, never the value's own
                    .append(json ? "<textarea id=\"" + id + "\" name=\"" + n.wireName() + "\">\n" + value
                            + "</textarea>" : "<input id=\"" + id + "\" name=\"" + n.wireName() + "\" value=\""
                            + value + "\" size=\"40\">")
                    .append("<input type=\"hidden\" name=\"was-").append(n.wireName()).append("\" value=\"")
                    .append(value).append("\">");
            String hint = AttributeUnits.hint(n, raw);
            if (hint != null) {
                b.append("<span class=\"hint\" id=\"hint-").append(n.wireName()).append("\">").append(esc(hint))
                        .append("</span>");
            }
            if (problem != null && Pattern.compile("\\b" + n.wireName() + "\\b").matcher(problem).find()) {
                b.append("<span class=\"field-error\" id=\"error-").append(n.wireName()).append("\">")
                        .append(esc(problem)).append("</span>"); // the refusal next to the value it refused
            }
            b.append("</p>");
        }
        b.append("<button id=\"save-attributes\" type=\"submit\">Save</button></form></div>");
        b.append("<h2>Send a test message</h2><div class=\"card\"><form method=\"post\" action=\"").append(action)
                .append("/send\">").append(csrf(s)).append("<p><label for=\"body\">Body</label>")
                .append("<textarea id=\"body\" name=\"body\"></textarea></p>");
        if (fifo) {
            b.append("<p><label for=\"group\">Message group id</label><input id=\"group\" name=\"group\"></p>")
                    .append("<p><label for=\"dedup\">Deduplication id (optional with content-based")
                    .append(" deduplication)</label><input id=\"dedup\" name=\"dedup\"></p>");
        }
        b.append("<button id=\"send\" type=\"submit\">Send</button></form></div>");
        if (x.tags() != null) {
            b.append("<h2>Tags</h2><div class=\"scroll\"><table id=\"tags\" class=\"attributes\"><thead><tr>")
                    .append("<th>Key</th><th>Value</th><th></th></tr></thead><tbody>");
            if (x.tags().isEmpty()) {
                b.append("<tr><td colspan=\"3\" class=\"muted\">none</td></tr>");
            }
            x.tags().forEach((k, v) -> b.append("<tr><td class=\"wrap tag-key\">").append(esc(k))
                    .append("</td><td class=\"wrap tag-value\">").append(esc(v)).append("</td><td><form class=\"row-action\"")
                    .append(" method=\"post\" action=\"").append(action).append("/untag\">").append(csrf(s))
                    .append("<input type=\"hidden\" name=\"key\" value=\"").append(esc(k)).append("\"><button")
                    .append(" class=\"danger untag\" type=\"submit\">Remove</button></form></td></tr>"));
            b.append("</tbody></table></div><div class=\"card\"><form class=\"inline\" method=\"post\" action=\"")
                    .append(action).append("/tag\">").append(csrf(s)).append("<div><label for=\"tag-key\">Key</label>")
                    .append("<input id=\"tag-key\" name=\"key\" autocomplete=\"off\"></div><div><label")
                    .append(" for=\"tag-value\">Value</label><input id=\"tag-value\" name=\"value\" autocomplete=\"off\">")
                    .append("</div><button id=\"add-tag\" type=\"submit\">Add or change</button></form></div>");
        }
        b.append("<h2>Delete the queue</h2><div class=\"card\"><form method=\"post\" action=\"").append(action)
                .append("/delete-queue\">").append(csrf(s)).append("<p>Deletes the queue and every message in it.")
                .append(" Type the queue's name to confirm.</p><p><label for=\"confirm-delete\">Queue name</label>")
                .append("<input id=\"confirm-delete\" name=\"confirm\" autocomplete=\"off\"></p><button")
                .append(" id=\"delete-queue\" class=\"danger\" type=\"submit\">Delete queue</button></form></div>");
        b.append("<h2>Purge</h2><div class=\"card\"><form method=\"post\" action=\"").append(action)
                .append("/purge\">").append(csrf(s)).append("<p>Deletes every message in the queue. Type the")
                .append(" queue's name to confirm.</p><p><label for=\"confirm\">Queue name</label>")
                .append("<input id=\"confirm\" name=\"confirm\" autocomplete=\"off\"></p>")
                .append("<button id=\"purge\" class=\"danger\" type=\"submit\">Purge</button></form></div>");
        return page(problem == null ? 200 : 400, name, ctx.nav().apply(s), b.toString());
    }

    /** The receivers this node saw on the queue in the last minutes (its page needs the queue's attributes). */
    private String consumers(String name) {
        List<ConsumerActivity.Seen> seen = ctx.api().consumers().seen(name);
        long now = ctx.services().nowMillis();
        StringBuilder b = new StringBuilder("<h2>Consumers</h2><p class=\"muted\">Receivers seen by this node in the")
                .append(" last ").append(Units.duration(ConsumerActivity.WINDOW_SECONDS)).append(" (a cluster's other")
                .append(" nodes count the receives through them).</p>");
        if (seen.isEmpty()) {
            return b.append("<p id=\"consumers-none\">No receives through this node in that time.</p>").toString();
        }
        b.append("<div class=\"scroll\"><table id=\"consumers\"><thead><tr><th>Access key</th><th>Address</th>")
                .append("<th class=\"num\">Receives/s</th><th class=\"num\">Messages/s</th><th class=\"num\"")
                .append(" title=\"received and not deleted within the window\">Held (approx.)</th><th>Last seen</th>")
                .append("</tr></thead><tbody>");
        for (ConsumerActivity.Seen c : seen) {
            b.append("<tr><td class=\"wrap key\">").append(esc(c.receiver().accessKey())).append("</td><td class=\"wrap")
                    .append(" address\">").append(esc(c.receiver().address())).append("</td><td class=\"num\">")
                    .append(String.format(Locale.ROOT, "%.1f", (double) c.receiveCalls() / c.seconds()))
                    .append("</td><td class=\"num\">")
                    .append(String.format(Locale.ROOT, "%.1f", (double) c.received() / c.seconds()))
                    .append("</td><td class=\"num held\">").append(Units.count(c.heldApprox())).append("</td><td>")
                    .append(Units.ago(now - c.lastSeenMillis())).append("</td></tr>");
        }
        return b.append("</tbody></table></div>").toString();
    }

    private static String actionForm(ConsoleSessions.Session s, String action, String receipt, String label,
                                     String cssClass, boolean danger) {
        return "<form class=\"row-action\" method=\"post\" action=\"" + action + "\">" + csrf(s)
                + "<input type=\"hidden\" name=\"receipt\" value=\"" + esc(receipt) + "\"><button type=\"submit\""
                + " class=\"" + cssClass + (danger ? " danger" : "") + "\">" + label + "</button></form>";
    }

    private static boolean deadLetterQueue(Extras x) {
        return !x.sources().isEmpty() || (x.tasks() != null && x.tasks().size() > 0);
    }

    private static boolean running(Extras x) {
        if (x.tasks() != null) {
            for (JsonNode t : x.tasks()) {
                if (t.path("Status").asText().equals("RUNNING")) {
                    return true;
                }
            }
        }
        return false;
    }

    /** What reloads in place: the charts' data, the attributes in their units, the dead-letter sources and redrives. */
    private String live(ConsoleSessions.Session s, String name, Map<String, String> a, Extras x) {
        StringBuilder b = new StringBuilder();
        String target = ConsoleApi.deadLetterTarget(a);
        if (target != null) {
            b.append("<p>Dead-letter queue: <a id=\"dlq-target\" href=\"/console/queues/").append(url(target))
                    .append("\">").append(esc(target)).append("</a></p>");
        }
        b.append("<h2>Attributes</h2><div class=\"scroll\"><table id=\"attributes\"><tbody>");
        a.forEach((k, v) -> {
            String shown = AttributeUnits.show(k, v, ctx.services().nowMillis());
            b.append("<tr><th>").append(esc(k)).append("</th><td class=\"wrap\" id=\"attr-").append(esc(k))
                    .append("\"");
            if (!shown.equals(v)) {
                b.append(" title=\"").append(esc(v)).append("\" data-raw=\"").append(esc(v)).append("\"");
            }
            b.append(">").append(esc(shown)).append("</td></tr>");
        });
        b.append("</tbody></table></div>");
        b.append(consumers(name));
        if (deadLetterQueue(x)) {
            b.append("<h2>Dead-letter queue</h2><p>Sources: <span id=\"dlq-sources\">");
            for (int i = 0; i < x.sources().size(); i++) {
                b.append(i == 0 ? "" : ", ").append("<a href=\"/console/queues/").append(url(x.sources().get(i)))
                        .append("\">").append(esc(x.sources().get(i))).append("</a>");
            }
            b.append("</span></p>");
            if (x.tasks() != null && x.tasks().size() > 0) {
                String action = "/console/queues/" + url(name);
                b.append("<div class=\"scroll\"><table id=\"redrives\"><thead><tr><th>Started</th><th>Status</th>")
                        .append("<th>Progress</th><th class=\"num\">Moved</th><th class=\"num\">To move</th>")
                        .append("<th>Destination</th><th></th></tr></thead><tbody>");
                for (JsonNode t : x.tasks()) {
                    String status = t.path("Status").asText();
                    long moved = t.path("ApproximateNumberOfMessagesMoved").asLong();
                    long toMove = t.path("ApproximateNumberOfMessagesToMove").asLong();
                    long shownMax = Math.max(1, Math.max(moved, toMove));
                    b.append("<tr><td>").append(Html.time(t.path("StartedTimestamp").asLong()))
                            .append("</td><td class=\"status\">").append(esc(status))
                            .append(t.has("FailureReason") ? " (" + esc(t.path("FailureReason").asText()) + ")" : "")
                            .append("</td><td><progress class=\"redrive-progress\" max=\"").append(shownMax)
                            .append("\" value=\"").append(status.equals("COMPLETED") ? shownMax : moved)
                            .append("\"></progress> ").append(toMove <= 0 ? "" : Math.min(100, 100 * moved / toMove)
                                    + " %").append("</td><td class=\"num moved\">").append(moved)
                            .append("</td><td class=\"num\">").append(toMove).append("</td><td class=\"wrap\">")
                            .append(esc(t.path("DestinationArn").asText("the original sources"))).append("</td><td>");
                    if (status.equals("RUNNING") && t.has("TaskHandle")) {
                        b.append("<form method=\"post\" action=\"").append(action).append("/cancel-redrive\">")
                                .append(csrf(s)).append("<input type=\"hidden\" name=\"task\" value=\"")
                                .append(esc(t.path("TaskHandle").asText())).append("\"><button class=\"danger\"")
                                .append(" id=\"cancel-redrive\" type=\"submit\">Cancel</button></form>");
                    }
                    b.append("</td></tr>");
                }
                b.append("</tbody></table></div>");
            }
        }
        return b.toString();
    }

    private static String peekTable(List<PeekedMessage> peeked) {
        if (peeked.isEmpty()) {
            return "<p id=\"peeked-none\">No message is visible now.</p>";
        }
        return MessageView.table("peeked", peeked.stream().map(p -> new MessageView.Shown(p.message(),
                p.receiveCount(), null)).toList(), null);
    }

    /** Why a dead-letter copy was handed off, in words; blank for other messages. */
    static String reason(StoredMessage m) {
        if (m.deadLetterSourceArn() == null) {
            return "";
        }
        if (m.deadLetterReason() == null) {
            return "not recorded"; // a copy made before reasons were kept
        }
        return switch (m.deadLetterReason()) {
            case MAX_RECEIVES_EXCEEDED -> "maxReceiveCount reached"; // received that often, and came back once more
            case RETENTION_EXPIRED -> "retention period ended";
            case SOURCE_QUEUE_DELETED -> "source queue deleted";
        };
    }
}
