package io.sluice.frontend.console;

import static io.sluice.frontend.console.ConsoleHttp.redirect;
import static io.sluice.frontend.console.ConsoleHttp.unwrap;
import static io.sluice.frontend.console.Html.url;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sluice.common.SqsError;
import io.sluice.common.SqsException;
import io.sluice.common.validation.QueueAttributeName;
import io.sluice.frontend.console.Console.Response;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * The forms a queue's page posts ({@code /console/queues/<name>/<form>}): edit attributes, send, purge, start or
 * cancel a redrive, delete the queue, tag and untag, poll and then delete or release a polled message. Each is an SQS
 * action as the signed-in key; a refusal is shown on the queue's page ({@link QueuePage}), a success redirects to it
 * with what was done.
 */
final class QueueForms {
    private final PageContext ctx;
    private final QueuePage page;

    QueueForms(PageContext ctx, QueuePage page) {
        this.ctx = ctx;
        this.page = page;
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

    /** Deletes the queue once its name is typed in the confirmation field; then the list says so. */
    CompletableFuture<Response> deleteQueue(ConsoleSessions.Session s, String name, Map<String, String> form) {
        if (!name.equals(form.get("confirm"))) {
            return page.queuePage(s, name, null, "Not deleted: type the queue's name exactly to confirm.");
        }
        return ctx.api().queueUrl(s, name).thenCompose(url -> ctx.api().call(s, "DeleteQueue",
                        JsonNodeFactory.instance.objectNode().put("QueueUrl", url)))
                .thenApply(out -> redirect("/console/queues?done=deleted"))
                .exceptionallyCompose(e -> actionFailed(s, name, e));
    }

    CompletableFuture<Response> tag(ConsoleSessions.Session s, String name, Map<String, String> form) {
        ObjectNode tags = JsonNodeFactory.instance.objectNode().put(form.getOrDefault("key", "").trim(),
                form.getOrDefault("value", "").trim());
        return ctx.api().queueUrl(s, name).thenCompose(url -> {
            ObjectNode req = JsonNodeFactory.instance.objectNode().put("QueueUrl", url);
            req.set("Tags", tags);
            return ctx.api().call(s, "TagQueue", req);
        }).thenApply(out -> redirect("/console/queues/" + url(name) + "?done=tagged"))
                .exceptionallyCompose(e -> actionFailed(s, name, e));
    }

    CompletableFuture<Response> untag(ConsoleSessions.Session s, String name, Map<String, String> form) {
        return ctx.api().queueUrl(s, name).thenCompose(url -> {
            ObjectNode req = JsonNodeFactory.instance.objectNode().put("QueueUrl", url);
            req.putArray("TagKeys").add(form.getOrDefault("key", ""));
            return ctx.api().call(s, "UntagQueue", req);
        }).thenApply(out -> redirect("/console/queues/" + url(name) + "?done=untagged"))
                .exceptionallyCompose(e -> actionFailed(s, name, e));
    }

    /** A real receive with the visibility, count and wait chosen in the form; the page shows what it received. */
    CompletableFuture<Response> poll(ConsoleSessions.Session s, String name, Map<String, String> form) {
        ObjectNode req = JsonNodeFactory.instance.objectNode();
        try {
            req.put("VisibilityTimeout", Integer.parseInt(form.getOrDefault("visibility", "30").trim()))
                    .put("MaxNumberOfMessages", Integer.parseInt(form.getOrDefault("max", "10").trim()))
                    .put("WaitTimeSeconds", Integer.parseInt(form.getOrDefault("wait", "0").trim()));
        } catch (NumberFormatException e) {
            return page.queuePage(s, name, null, "Not polled: the visibility timeout, count and wait are whole numbers.");
        }
        req.putArray("MessageSystemAttributeNames").add("All");
        req.putArray("MessageAttributeNames").add("All");
        return ctx.api().queueUrl(s, name).thenCompose(url -> ctx.api().call(s, "ReceiveMessage",
                        req.put("QueueUrl", url)))
                .thenCompose(out -> {
                    List<MessageView.Shown> polled = new ArrayList<>();
                    out.path("Messages").forEach(m -> polled.add(MessageView.received(m)));
                    return page.queuePage(s, name, null, null, false, polled);
                })
                .exceptionallyCompose(e -> actionFailed(s, name, e));
    }

    /** Deletes one message a poll received (by its receipt handle). */
    CompletableFuture<Response> deleteMessage(ConsoleSessions.Session s, String name, Map<String, String> form) {
        return ctx.api().queueUrl(s, name).thenCompose(url -> ctx.api().call(s, "DeleteMessage",
                        JsonNodeFactory.instance.objectNode().put("QueueUrl", url)
                                .put("ReceiptHandle", form.getOrDefault("receipt", ""))))
                .thenApply(out -> redirect("/console/queues/" + url(name) + "?done=deleted"))
                .exceptionallyCompose(e -> actionFailed(s, name, e));
    }

    /** Makes a message a poll received visible again at once (its visibility timeout set to 0). */
    CompletableFuture<Response> releaseMessage(ConsoleSessions.Session s, String name, Map<String, String> form) {
        return ctx.api().queueUrl(s, name).thenCompose(url -> ctx.api().call(s, "ChangeMessageVisibility",
                        JsonNodeFactory.instance.objectNode().put("QueueUrl", url)
                                .put("ReceiptHandle", form.getOrDefault("receipt", "")).put("VisibilityTimeout", 0)))
                .thenApply(out -> redirect("/console/queues/" + url(name) + "?done=released"))
                .exceptionallyCompose(e -> actionFailed(s, name, e));
    }

    CompletableFuture<Response> purge(ConsoleSessions.Session s, String name, Map<String, String> form) {
        if (!name.equals(form.get("confirm"))) {
            return page.queuePage(s, name, null, "Not purged: type the queue's name exactly to confirm.");
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
            return page.queuePage(s, name, null, sqsError.failure().error().queryCode() + ": "
                             + sqsError.failure().message());
        }
        return CompletableFuture.failedFuture(cause);
    }
}
