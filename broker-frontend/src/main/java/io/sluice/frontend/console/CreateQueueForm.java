package io.sluice.frontend.console;

import static io.sluice.frontend.console.ConsoleHttp.csrf;
import static io.sluice.frontend.console.Html.esc;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sluice.common.SqsError;
import io.sluice.common.SqsException;
import io.sluice.common.validation.QueueAttributeName;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * The queue list's "Create queue" form and the CreateQueue request it makes: a name, standard or FIFO, the attributes
 * CreateQueue takes (with their units and ranges), a dead-letter queue picked from the key's queues with its
 * maxReceiveCount, and tags. Empty fields are left to their defaults; the API validates everything.
 */
final class CreateQueueForm {
    private CreateQueueForm() {
    }

    /** The integer attributes the form offers, in the order shown. */
    private static final List<QueueAttributeName> NUMBERS = List.of(QueueAttributeName.VISIBILITY_TIMEOUT,
            QueueAttributeName.MESSAGE_RETENTION_PERIOD, QueueAttributeName.DELAY_SECONDS,
            QueueAttributeName.MAXIMUM_MESSAGE_SIZE, QueueAttributeName.RECEIVE_MESSAGE_WAIT_TIME_SECONDS);

    /**
     * @param values the form's values when shown again after a refusal
     * @param open   whether it starts unfolded
     * @param queues names offered as dead-letter queues (datalist)
     */
    static String render(ConsoleSessions.Session s, Map<String, String> values, boolean open, List<String> queues) {
        StringBuilder b = new StringBuilder("<h2>Create a queue</h2><details class=\"card\" id=\"create-queue\"")
                .append(open ? " open" : "").append("><summary>Create a queue</summary><form method=\"post\"")
                .append(" action=\"/console/queues/create\">").append(csrf(s))
                .append(field("create-name", "name", "Name (letters, digits, - and _; a FIFO queue's ends in .fifo)",
                        values))
                .append("<p><label for=\"create-type\">Type</label><select id=\"create-type\" name=\"type\">")
                .append(option("standard", "Standard", values.get("type"))).append(option("fifo", "FIFO",
                        values.get("type"))).append("</select></p>");
        for (QueueAttributeName n : NUMBERS) {
            String id = "create-" + n.wireName();
            b.append("<p><label for=\"").append(id).append("\">").append(n.wireName()).append("</label><input id=\"")
                    .append(id).append("\" name=\"").append(n.wireName()).append("\" inputmode=\"numeric\" value=\"")
                    .append(esc(values.getOrDefault(n.wireName(), ""))).append("\"><span class=\"hint\">")
                    .append(esc(AttributeUnits.hint(n, null))).append("; empty: the default</span></p>");
        }
        b.append("<p><label><input type=\"checkbox\" name=\"ContentBasedDeduplication\" value=\"true\"")
                .append("true".equals(values.get("ContentBasedDeduplication")) ? " checked" : "")
                .append("> Content-based deduplication (FIFO only)</label></p>")
                .append("<p><label for=\"create-dlq\">Dead-letter queue (empty: none)</label><input id=\"create-dlq\"")
                .append(" name=\"dlq\" list=\"create-dlq-names\" autocomplete=\"off\" value=\"")
                .append(esc(values.getOrDefault("dlq", ""))).append("\"><datalist id=\"create-dlq-names\">");
        queues.forEach(q -> b.append("<option value=\"").append(esc(q)).append("\">"));
        b.append("</datalist></p>")
                .append(field("create-max-receives", "maxReceiveCount", "Receives before a message goes to the"
                        + " dead-letter queue (1 to 1,000)", values))
                .append("<p><label for=\"create-tags\">Tags (one key=value a line)</label><textarea id=\"create-tags\"")
                .append(" name=\"tags\">\n").append(esc(values.getOrDefault("tags", ""))).append("</textarea></p>")
                .append("<button id=\"create\" type=\"submit\">Create</button></form></details>");
        return b.toString();
    }

    private static String field(String id, String name, String label, Map<String, String> values) {
        return "<p><label for=\"" + id + "\">" + esc(label) + "</label><input id=\"" + id + "\" name=\"" + name
                + "\" autocomplete=\"off\" value=\"" + esc(values.getOrDefault(name, "")) + "\"></p>";
    }

    private static String option(String value, String label, String selected) {
        return "<option value=\"" + value + "\"" + (value.equals(selected) ? " selected" : "") + ">" + label
                + "</option>";
    }

    /** The CreateQueue request the form's values make ({@code arnOf} turns a queue's name into its ARN). */
    static ObjectNode request(Map<String, String> form, Function<String, String> arnOf) {
        String name = form.getOrDefault("name", "").trim();
        ObjectNode req = JsonNodeFactory.instance.objectNode().put("QueueName", name);
        ObjectNode attributes = JsonNodeFactory.instance.objectNode();
        boolean fifo = "fifo".equals(form.get("type")) || name.endsWith(".fifo");
        if (fifo) {
            attributes.put("FifoQueue", "true");
            if ("true".equals(form.get("ContentBasedDeduplication"))) {
                attributes.put("ContentBasedDeduplication", "true");
            }
        }
        for (QueueAttributeName n : NUMBERS) {
            String v = form.getOrDefault(n.wireName(), "").trim();
            if (!v.isEmpty()) {
                attributes.put(n.wireName(), v);
            }
        }
        String dlq = form.getOrDefault("dlq", "").trim();
        if (!dlq.isEmpty()) {
            String receives = form.getOrDefault("maxReceiveCount", "").trim();
            ObjectNode policy = JsonNodeFactory.instance.objectNode().put("deadLetterTargetArn", arnOf.apply(dlq))
                    .put("maxReceiveCount", receives.isEmpty() ? "10" : receives);
            attributes.put("RedrivePolicy", policy.toString());
        }
        if (!attributes.isEmpty()) {
            req.set("Attributes", attributes);
        }
        ObjectNode tags = JsonNodeFactory.instance.objectNode();
        for (String line : form.getOrDefault("tags", "").split("\r?\n")) {
            if (line.isBlank()) {
                continue;
            }
            int eq = line.indexOf('=');
            if (eq <= 0) {
                throw new SqsException(SqsError.INVALID_PARAMETER_VALUE, "A tag is key=value: " + line.strip());
            }
            tags.put(line.substring(0, eq).strip(), line.substring(eq + 1).strip());
        }
        if (!tags.isEmpty()) {
            req.set("tags", tags);
        }
        return req;
    }
}
