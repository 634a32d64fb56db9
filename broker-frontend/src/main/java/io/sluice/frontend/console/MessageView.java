package io.sluice.frontend.console;

import static io.sluice.frontend.console.Html.esc;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sluice.common.MessageAttributeValue;
import io.sluice.common.Utf8;
import io.sluice.common.validation.SendRequest;
import io.sluice.partition.StoredMessage;
import java.io.IOException;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * Messages as the console shows them (a peek's or a poll's): a row each with the body's start, and under it the whole
 * message on demand: the full body (JSON pretty-printed when it parses) with copy and download, its message
 * attributes and its system attributes. Everything a sender chose is text (escaped), never markup.
 */
final class MessageView {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Characters of a body shown in its row. */
    static final int ROW_BODY = 200;

    private MessageView() {
    }

    /** One message shown: as stored, how often received, and its receipt handle when a poll leased it. */
    record Shown(StoredMessage message, int receiveCount, String receiptHandle) {
    }

    /**
     * The table {@code id}: id, sent, receives, size and the body's start per message; group and dead-letter columns
     * only when a message has them; {@code actions} adds a last cell (a poll's delete and release), or null for none.
     */
    static String table(String id, List<Shown> messages, Function<Shown, String> actions) {
        boolean groups = messages.stream().anyMatch(s -> s.message().groupId() != null);
        boolean deadLetters = messages.stream().anyMatch(s -> s.message().deadLetterSourceArn() != null);
        int columns = 5 + (groups ? 1 : 0) + (deadLetters ? 2 : 0) + (actions == null ? 0 : 1);
        StringBuilder b = new StringBuilder("<div class=\"scroll\"><table class=\"messages\" id=\"").append(esc(id))
                .append("\"><thead><tr><th>Message id</th><th>Sent</th><th class=\"num\">Receives</th>")
                .append("<th class=\"num\">Size</th>").append(groups ? "<th>Group</th>" : "")
                .append(deadLetters ? "<th>From (dead-letter source)</th><th>Dead-lettered because</th>" : "")
                .append("<th class=\"body-column\">Body</th>").append(actions == null ? "" : "<th></th>")
                .append("</tr></thead><tbody>");
        int k = 0;
        for (Shown s : messages) {
            StoredMessage m = s.message();
            String key = esc(id) + "-" + k++;
            b.append("<tr><td class=\"wrap id\">").append(esc(m.messageId())).append("</td><td>")
                    .append(Html.time(m.sentTimestampMillis())).append("</td><td class=\"num receives\">")
                    .append(s.receiveCount()).append("</td><td class=\"num size\">").append(Units.bytes(size(m)))
                    .append("</td>");
            if (groups) {
                b.append("<td class=\"wrap\">").append(esc(m.groupId())).append("</td>");
            }
            if (deadLetters) {
                b.append("<td class=\"wrap\">").append(esc(m.deadLetterSourceArn())).append("</td><td class=\"reason\">")
                        .append(esc(QueuePage.reason(m))).append("</td>");
            }
            b.append("<td class=\"wrap body\">").append(esc(Html.cut(m.body(), ROW_BODY))).append("</td>");
            if (actions != null) {
                b.append("<td>").append(actions.apply(s)).append("</td>");
            }
            b.append("</tr><tr class=\"message-details\"><td colspan=\"").append(columns).append("\">")
                    .append(details(key, s)).append("</td></tr>");
        }
        return b.append("</tbody></table></div>").toString();
    }

    /** A received message (the API's JSON) as the message view shows it. */
    static Shown received(JsonNode m) {
        JsonNode a = m.path("Attributes");
        Map<String, MessageAttributeValue> attributes = new LinkedHashMap<>();
        m.path("MessageAttributes").fields().forEachRemaining(e -> {
            JsonNode v = e.getValue();
            String type = v.path("DataType").asText("String");
            attributes.put(e.getKey(), v.has("BinaryValue")
                    ? MessageAttributeValue.ofBinary(type, Base64.getDecoder().decode(v.path("BinaryValue")
                            .asText()))
                    : MessageAttributeValue.ofString(type, v.path("StringValue").asText()));
        });
        Map<String, MessageAttributeValue> system = new LinkedHashMap<>();
        if (a.has("AWSTraceHeader")) {
            system.put("AWSTraceHeader", MessageAttributeValue.ofString("String", a.path("AWSTraceHeader").asText()));
        }
        if (a.has("ApproximateFirstReceiveTimestamp")) {
            system.put("First received", MessageAttributeValue.ofString("String",
                    Html.utc(a.path("ApproximateFirstReceiveTimestamp").asLong())));
        }
        StoredMessage stored = new StoredMessage(m.path("MessageId").asText(), m.path("Body").asText(), attributes,
                system, a.path("SentTimestamp").asLong(), text(a, "MessageGroupId"), text(a, "MessageDeduplicationId"),
                text(a, "SequenceNumber"), text(a, "SenderId"), text(a, "DeadLetterQueueSourceArn"));
        return new Shown(stored, a.path("ApproximateReceiveCount").asInt(), m.path("ReceiptHandle").asText());
    }

    private static String text(JsonNode n, String field) {
        return n.hasNonNull(field) ? n.path(field).asText() : null;
    }

    /** The whole message, folded until opened. */
    static String details(String key, Shown s) {
        StoredMessage m = s.message();
        String pretty = pretty(m.body());
        StringBuilder b = new StringBuilder("<details><summary>Whole message</summary><div class=\"message\">")
                .append("<pre class=\"full-body\" id=\"body-").append(key).append("\">").append(esc(pretty))
                .append("</pre><p><button type=\"button\" data-copy=\"body-").append(key).append("\">Copy body</button> ")
                .append("<button type=\"button\" data-download=\"body-").append(key).append("\" data-filename=\"")
                .append(esc(m.messageId())).append(pretty.equals(m.body()) ? ".txt" : ".json")
                .append("\">Download body</button></p>");
        b.append("<table class=\"attributes\"><thead><tr><th>Message attribute</th><th>Type</th><th>Value</th></tr>")
                .append("</thead><tbody>");
        if (m.attributes() == null || m.attributes().isEmpty()) {
            b.append("<tr><td colspan=\"3\" class=\"muted\">none</td></tr>");
        } else {
            for (Map.Entry<String, MessageAttributeValue> a : m.attributes().entrySet()) {
                b.append("<tr><td class=\"wrap attribute-name\">").append(esc(a.getKey())).append("</td><td>")
                        .append(esc(a.getValue().dataType())).append("</td><td class=\"wrap attribute-value\">")
                        .append(esc(value(a.getValue()))).append("</td></tr>");
            }
        }
        b.append("</tbody></table><table class=\"attributes system\"><tbody>");
        row(b, "Sent", Html.time(m.sentTimestampMillis()));
        row(b, "Receive count", Integer.toString(s.receiveCount()));
        row(b, "Size", esc(Units.bytes(size(m)) + " (body " + Units.bytes(utf8(m.body())) + ")"));
        if (m.groupId() != null) {
            row(b, "Message group id", esc(m.groupId()));
        }
        if (m.deduplicationId() != null) {
            row(b, "Deduplication id", esc(m.deduplicationId()));
        }
        if (m.sequenceNumber() != null) {
            row(b, "Sequence number", esc(m.sequenceNumber()));
        }
        if (m.senderId() != null) {
            row(b, "Sender", esc(m.senderId()));
        }
        if (m.deadLetterSourceArn() != null) {
            row(b, "Dead-letter source", esc(m.deadLetterSourceArn()));
            row(b, "Dead-lettered because", esc(QueuePage.reason(m)));
        }
        if (m.systemAttributes() != null) {
            m.systemAttributes().forEach((name, v) -> row(b, esc(name), esc(value(v))));
        }
        return b.append("</tbody></table></div></details>").toString();
    }

    private static void row(StringBuilder b, String name, String html) {
        b.append("<tr><th>").append(name).append("</th><td class=\"wrap\">").append(html).append("</td></tr>");
    }

    /** A binary value as base64 (what the API carries), a string or number as itself. */
    private static String value(MessageAttributeValue v) {
        return v.isBinary() ? Base64.getEncoder().encodeToString(v.binaryValue()) + " (base64)" : v.stringValue();
    }

    /** What the message counts toward the size limit: its body and its attributes (names, types, values). */
    static long size(StoredMessage m) {
        return new SendRequest(m.body(), null, m.attributes(), null, null, null).sizeBytes();
    }

    private static long utf8(String s) {
        return s == null ? 0 : Utf8.length(s);
    }

    /** The body pretty-printed when it is a JSON object or array, else as it is. */
    static String pretty(String body) {
        String t = body == null ? "" : body.strip();
        if (!(t.startsWith("{") || t.startsWith("["))) {
            return body == null ? "" : body;
        }
        try {
            JsonNode tree = JSON.readTree(t);
            return JSON.writerWithDefaultPrettyPrinter().writeValueAsString(tree);
        } catch (IOException e) {
            return body;
        }
    }
}
