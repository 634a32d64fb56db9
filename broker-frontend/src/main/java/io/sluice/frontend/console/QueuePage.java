package io.sluice.frontend.console;

import static io.sluice.frontend.console.ConsoleHttp.csrf;
import static io.sluice.frontend.console.ConsoleHttp.page;
import static io.sluice.frontend.console.ConsoleHttp.redirect;
import static io.sluice.frontend.console.ConsoleHttp.unwrap;
import static io.sluice.frontend.console.Html.esc;
import static io.sluice.frontend.console.Html.url;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sluice.common.SqsError;
import io.sluice.common.SqsException;
import io.sluice.common.validation.QueueAttributeName;
import io.sluice.frontend.console.Console.Response;
import io.sluice.partition.PeekedMessage;
import io.sluice.partition.StoredMessage;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * One queue's console page ({@code /console/queues/<name>}): its charts, attributes, a peek at its next messages, its
 * dead-letter sources and redrives; and the page's forms (edit attributes, send, purge, start or cancel a redrive),
 * each an SQS action whose refusal is shown on the page.
 */
final class QueuePage {
    private final PageContext ctx;

    QueuePage(PageContext ctx) {
        this.ctx = ctx;
    }

    private static final Map<String, String> DONE = Map.of("sent", "Message sent.", "purged", "Queue purged.",
            "attributes", "Attributes saved.", "redrive", "Redrive started.", "cancelled", "Redrive cancelled.");

    /** What a queue's page shows besides its attributes, read before it is rendered. */
    private record Extras(List<PeekedMessage> peeked, List<String> sources, JsonNode tasks) {
    }

    CompletableFuture<Response> queuePage(ConsoleSessions.Session s, String name, String done,
                                          String problem) {
        return queuePage(s, name, done, problem, false);
    }

    CompletableFuture<Response> queuePage(ConsoleSessions.Session s, String name, String done,
                                          String problem, boolean peek) {
        ConsoleApi api = ctx.api();
        return api.queueUrl(s, name).thenCompose(url -> api.attributes(s, url).thenCompose(a -> extras(s, name, url,
                a.get("QueueArn"), peek).thenApplyAsync(x -> render(s, name, done, problem, a, x, peek), ctx.work())));
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
        return peeked.thenCompose(p -> sources.thenCombine(tasks, (so, t) -> new Extras(p, so, t)));
    }

    private Response render(ConsoleSessions.Session s, String name, String done, String problem,
                            Map<String, String> a, Extras x, boolean peeking) {
        {
            StringBuilder b = new StringBuilder();
            if (problem != null) {
                b.append("<p class=\"error\" id=\"problem\">").append(esc(problem)).append("</p>");
            } else if (done != null && DONE.containsKey(done)) {
                b.append("<p class=\"flash\" id=\"done\">").append(DONE.get(done)).append("</p>");
            }
            b.append("<p><a href=\"/console/queues\">All queues</a></p>");
            String samples = ctx.services().catalog().get(name).map(q -> ctx.history().json(q.queueId())).orElse(null);
            b.append("<h2>Last hour</h2>");
            if (samples == null) {
                b.append("<p class=\"muted\" id=\"no-history\">No samples yet (every ")
                        .append(QueueHistory.EVERY_SECONDS).append(" s; at most the first queues by name are kept).</p>");
            } else {
                b.append("<div class=\"charts\"><div id=\"depth-chart\"></div><div id=\"age-chart\"></div>")
                        .append("<div id=\"rate-chart\"></div></div>")
                        .append("<script type=\"application/json\" id=\"history-data\">").append(samples)
                        .append("</script><script src=\"/console/static/uplot.js\"></script>")
                        .append("<script src=\"/console/static/charts.js\"></script>");
            }
            b.append("<h2>Attributes</h2><div class=\"scroll\"><table id=\"attributes\"><tbody>");
            a.forEach((k, v) -> b.append("<tr><th>").append(esc(k)).append("</th><td class=\"wrap\" id=\"attr-")
                    .append(esc(k)).append("\">").append(esc(v)).append("</td></tr>"));
            b.append("</tbody></table></div>");
            String action = "/console/queues/" + url(name);
            boolean fifo = name.endsWith(".fifo");
            b.append("<h2>Next messages</h2>");
            if (x.peeked() == null) {
                b.append("<p><a id=\"peek\" href=\"").append(action).append("?peek=1\">Peek at the next 10</a>")
                        .append(" <span class=\"muted\">(read only: nothing is leased, receive counts stay)</span></p>");
            } else {
                b.append(peekTable(x.peeked()));
            }
            boolean deadLetterQueue = !x.sources().isEmpty() || (x.tasks() != null && x.tasks().size() > 0);
            boolean running = false;
            if (deadLetterQueue) {
                b.append("<h2>Dead-letter queue</h2><p>Sources: <span id=\"dlq-sources\">")
                        .append(esc(String.join(", ", x.sources()))).append("</span></p>");
                if (x.tasks() != null && x.tasks().size() > 0) {
                    b.append("<div class=\"scroll\"><table id=\"redrives\"><thead><tr><th>Started</th><th>Status</th>")
                            .append("<th class=\"num\">Moved</th><th class=\"num\">To move</th><th>Destination</th>")
                            .append("<th></th></tr></thead><tbody>");
                    for (JsonNode t : x.tasks()) {
                        String status = t.path("Status").asText();
                        running |= status.equals("RUNNING");
                        b.append("<tr><td>").append(esc(Instant.ofEpochMilli(t.path("StartedTimestamp")
                                        .asLong()).toString())).append("</td><td class=\"status\">").append(esc(status))
                                .append(t.has("FailureReason") ? " (" + esc(t.path("FailureReason").asText()) + ")" : "")
                                .append("</td><td class=\"num moved\">").append(t.path("ApproximateNumberOfMessagesMoved")
                                        .asLong()).append("</td><td class=\"num\">")
                                .append(t.path("ApproximateNumberOfMessagesToMove").asLong()).append("</td><td class=\"wrap\">")
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
                if (!running) {
                    b.append("<div class=\"card\"><form method=\"post\" action=\"").append(action)
                            .append("/redrive\">").append(csrf(s)).append("<p>Move this queue's messages back to the")
                            .append(" queues they came from.</p><p><label for=\"rate\">At most this many per second")
                            .append(" (empty: as fast as it goes)</label><input id=\"rate\" name=\"rate\"")
                            .append(" inputmode=\"numeric\"></p><button id=\"redrive\" type=\"submit\">Start")
                            .append(" redrive</button></form></div>");
                }
            }
            b.append("<h2>Edit attributes</h2><div class=\"card\"><form method=\"post\" action=\"").append(action)
                    .append("/attributes\">").append(csrf(s));
            for (QueueAttributeName n : QueueAttributeName
                    .values()) {
                if (!n.settable() || (n.fifoOnly() && !fifo) || n.wireName().equals("FifoQueue")) {
                    continue;
                }
                String id = "set-" + n.wireName();
                String value = esc(a.getOrDefault(n.wireName(), ""));
                boolean json = n.wireName().startsWith("Redrive") || n.wireName().equals("Policy")
                        || n.wireName().equals("SluiceRedeliveryBackoff");
                b.append("<p><label for=\"").append(id).append("\">").append(n.wireName()).append("</label>")
                        // a parser drops one newline right after <textarea>: this one, never the value's own
                        .append(json ? "<textarea id=\"" + id + "\" name=\"" + n.wireName() + "\">\n" + value
                                + "</textarea>" : "<input id=\"" + id + "\" name=\"" + n.wireName() + "\" value=\""
                                + value + "\" size=\"40\">")
                        .append("<input type=\"hidden\" name=\"was-").append(n.wireName()).append("\" value=\"")
                        .append(value).append("\"></p>");
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
            b.append("<h2>Purge</h2><div class=\"card\"><form method=\"post\" action=\"").append(action)
                    .append("/purge\">").append(csrf(s)).append("<p>Deletes every message in the queue. Type the")
                    .append(" queue's name to confirm.</p><p><label for=\"confirm\">Queue name</label>")
                    .append("<input id=\"confirm\" name=\"confirm\" autocomplete=\"off\"></p>")
                    .append("<button id=\"purge\" class=\"danger\" type=\"submit\">Purge</button></form></div>");
            // while a redrive runs the page follows its progress
            // a page with a peek or a problem does not reload (a reload would peek again, or re-post nothing)
            int refresh = running && !peeking && problem == null ? 2 : 0;
            return page(problem == null ? 200 : 400, name, ctx.nav().apply(s), refresh, b.toString());
        }
    }

    private static String peekTable(List<PeekedMessage> peeked) {
        if (peeked.isEmpty()) {
            return "<p id=\"peeked-none\">No message is visible now.</p>";
        }
        StringBuilder b = new StringBuilder("<div class=\"scroll\"><table id=\"peeked\"><thead><tr><th>Message id</th>"
                + "<th>Sent</th><th class=\"num\">Receives</th><th>Group</th><th>From (dead-letter source)</th>"
                + "<th>Dead-lettered because</th><th>Body</th></tr></thead><tbody>");
        for (PeekedMessage p : peeked) {
            var m = p.message();
            String body = Html.cut(m.body(), 500);
            b.append("<tr><td class=\"wrap\">").append(esc(m.messageId())).append("</td><td>")
                    .append(esc(Instant.ofEpochMilli(m.sentTimestampMillis()).toString()))
                    .append("</td><td class=\"num receives\">").append(p.receiveCount()).append("</td><td>")
                    .append(esc(m.groupId())).append("</td><td class=\"wrap\">").append(esc(m.deadLetterSourceArn()))
                    .append("</td><td class=\"reason\">").append(esc(reason(m))).append("</td><td class=\"wrap body\">")
                    .append(esc(body)).append("</td></tr>");
        }
        return b.append("</tbody></table></div>").toString();
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

    CompletableFuture<Response> setAttributes(ConsoleSessions.Session s, String name,
                                              Map<String, String> form) {
        return ctx.api().queueUrl(s, name).thenCompose(url -> ctx.api().attributes(s, url).thenCompose(current -> {
            ObjectNode changed = JsonNodeFactory.instance.objectNode();
            for (QueueAttributeName n : QueueAttributeName
                    .values()) {
                // only what this user changed on the page (not what someone else changed since it was shown)
                String v = normalize(form.get(n.wireName()));
                String was = normalize(form.get("was-" + n.wireName()));
                if (n.settable() && !n.wireName().equals("FifoQueue") && v != null && was != null && !v.equals(was)) {
                    changed.put(n.wireName(), v);
                }
            }
            if (changed.isEmpty()) {
                return CompletableFuture.completedFuture(null);
            }
            ObjectNode req = JsonNodeFactory.instance.objectNode().put("QueueUrl", url);
            req.set("Attributes", changed);
            return ctx.api().call(s, "SetQueueAttributes", req);
        })).thenApply(out -> redirect("/console/queues/" + url(name) + "?done=attributes"))
                .exceptionallyCompose(e -> actionFailed(s, name, e));
    }

    /** Form values as browsers send them back (a textarea's line ends become CR LF). */
    private static String normalize(String v) {
        return v == null ? null : v.replace("\r\n", "\n");
    }

    CompletableFuture<Response> redrive(ConsoleSessions.Session s, String name, Map<String, String> form) {
        String rate = form.getOrDefault("rate", "").trim();
        return ctx.api().queueUrl(s, name).thenCompose(url -> ctx.api().attributes(s, url)).thenCompose(a -> {
            ObjectNode req = JsonNodeFactory.instance.objectNode().put("SourceArn", a.get("QueueArn"));
            if (!rate.isEmpty()) {
                try {
                    req.put("MaxNumberOfMessagesPerSecond", Integer.parseInt(rate));
                } catch (NumberFormatException e) {
                    throw new SqsException(SqsError.INVALID_PARAMETER_VALUE, "The rate must be a whole number.");
                }
            }
            return ctx.api().call(s, "StartMessageMoveTask", req);
        }).thenApply(out -> redirect("/console/queues/" + url(name) + "?done=redrive"))
                .exceptionallyCompose(e -> actionFailed(s, name, e));
    }

    CompletableFuture<Response> cancelRedrive(ConsoleSessions.Session s, String name,
                                              Map<String, String> form) {
        return ctx.api().call(s, "CancelMessageMoveTask", JsonNodeFactory.instance.objectNode()
                .put("TaskHandle", form.getOrDefault("task", "")))
                .thenApply(out -> redirect("/console/queues/" + url(name) + "?done=cancelled"))
                .exceptionallyCompose(e -> actionFailed(s, name, e));
    }

    CompletableFuture<Response> send(ConsoleSessions.Session s, String name, Map<String, String> form) {
        String body = normalize(form.getOrDefault("body", "")); // typed line breaks, not the form's CR LF
        return ctx.api().queueUrl(s, name).thenCompose(url -> {
            ObjectNode req = JsonNodeFactory.instance.objectNode().put("QueueUrl", url).put("MessageBody", body);
            if (!form.getOrDefault("group", "").isEmpty()) {
                req.put("MessageGroupId", form.get("group"));
            }
            if (!form.getOrDefault("dedup", "").isEmpty()) {
                req.put("MessageDeduplicationId", form.get("dedup"));
            }
            return ctx.api().call(s, "SendMessage", req);
        }).thenApply(out -> redirect("/console/queues/" + url(name) + "?done=sent"))
                .exceptionallyCompose(e -> actionFailed(s, name, e));
    }

    CompletableFuture<Response> purge(ConsoleSessions.Session s, String name, Map<String, String> form) {
        if (!name.equals(form.get("confirm"))) {
            return queuePage(s, name, null, "Not purged: type the queue's name exactly to confirm.");
        }
        return ctx.api().queueUrl(s, name).thenCompose(url -> ctx.api().call(s, "PurgeQueue",
                        JsonNodeFactory.instance.objectNode().put("QueueUrl", url)))
                .thenApply(out -> redirect("/console/queues/" + url(name) + "?done=purged"))
                .exceptionallyCompose(e -> actionFailed(s, name, e));
    }

    /** An action the API refused (its SQS error shown on the queue's page); anything else goes to the error page. */
    private CompletableFuture<Response> actionFailed(ConsoleSessions.Session s, String name, Throwable e) {
        Throwable cause = unwrap(e);
        if (cause instanceof SqsException sqsError && sqsError.failure().error() != SqsError.ACCESS_DENIED) {
            return queuePage(s, name, null, sqsError.failure().error().queryCode() + ": "
                             + sqsError.failure().message());
        }
        return CompletableFuture.failedFuture(cause);
    }
}
