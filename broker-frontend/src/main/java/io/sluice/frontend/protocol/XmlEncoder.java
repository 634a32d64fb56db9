package io.sluice.frontend.protocol;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sluice.common.SqsFailure;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;
import java.util.Map;

/**
 * Renders a response tree (JSON member names) as the Query protocol's XML (spec 1.5): a
 * {@code <XResponse><XResult>...</XResult><ResponseMetadata/>} envelope, flattened lists, attribute/tag maps as
 * name/value elements, and text escaped so that every client parses back the exact characters (a carriage return
 * is written {@code &#xD;}, or XML parsers would turn it into a line feed and break the body's MD5).
 */
public final class XmlEncoder {
    public static final String NAMESPACE = "http://queue.amazonaws.com/doc/2012-11-05/";

    private XmlEncoder() {
    }

    /** The element name of one item of a list member. */
    private static String listItem(String action, String member) {
        return switch (member) {
            case "QueueUrls", "queueUrls" -> "QueueUrl";
            case "Messages" -> "Message";
            case "Successful" -> action + "ResultEntry";
            case "Failed" -> "BatchResultErrorEntry";
            case "Results" -> action + "ResultEntry";
            default -> member;
        };
    }

    public static byte[] success(String action, ObjectNode result, String requestId) {
        StringBuilder sb = new StringBuilder(256);
        sb.append("<?xml version=\"1.0\"?>\n<").append(action).append("Response xmlns=\"").append(NAMESPACE).append("\">");
        if (result.isEmpty()) {
            sb.append('<').append(action).append("Result/>");
        } else {
            sb.append('<').append(action).append("Result>");
            writeMembers(sb, action, result);
            sb.append("</").append(action).append("Result>");
        }
        sb.append("<ResponseMetadata><RequestId>").append(requestId).append("</RequestId></ResponseMetadata></")
                .append(action).append("Response>");
        return sb.toString().getBytes(StandardCharsets.UTF_8);
    }

    public static byte[] error(SqsFailure failure, String requestId) {
        StringBuilder sb = new StringBuilder(256);
        sb.append("<?xml version=\"1.0\"?>\n<ErrorResponse xmlns=\"").append(NAMESPACE).append("\"><Error><Type>")
                .append(failure.error().faultType()).append("</Type><Code>");
        escape(sb, failure.error().queryCode());
        sb.append("</Code><Message>");
        escape(sb, failure.message());
        sb.append("</Message><Detail/></Error><RequestId>").append(requestId).append("</RequestId></ErrorResponse>");
        return sb.toString().getBytes(StandardCharsets.UTF_8);
    }

    private static void writeMembers(StringBuilder sb, String action, ObjectNode node) {
        Iterator<Map.Entry<String, JsonNode>> fields = node.fields();
        while (fields.hasNext()) {
            Map.Entry<String, JsonNode> f = fields.next();
            writeMember(sb, action, f.getKey(), f.getValue());
        }
    }

    private static void writeMember(StringBuilder sb, String action, String member, JsonNode value) {
        if (value.isArray()) {
            String item = listItem(action, member);
            for (JsonNode v : value) {
                writeElement(sb, action, item, v);
            }
        } else if (value.isObject() && member.equals("Attributes")) {
            writeMap(sb, "Attribute", "Name", "Value", value);
        } else if (value.isObject() && member.equals("Tags")) {
            writeMap(sb, "Tag", "Key", "Value", value);
        } else if (value.isObject() && member.equals("MessageAttributes")) {
            Iterator<Map.Entry<String, JsonNode>> it = value.fields();
            while (it.hasNext()) {
                Map.Entry<String, JsonNode> e = it.next();
                sb.append("<MessageAttribute><Name>");
                escape(sb, e.getKey());
                sb.append("</Name><Value>");
                writeMembers(sb, action, (ObjectNode) e.getValue());
                sb.append("</Value></MessageAttribute>");
            }
        } else {
            writeElement(sb, action, member, value);
        }
    }

    private static void writeElement(StringBuilder sb, String action, String name, JsonNode value) {
        sb.append('<').append(name).append('>');
        if (value.isObject()) {
            writeMembers(sb, action, (ObjectNode) value);
        } else {
            escape(sb, value.asText());
        }
        sb.append("</").append(name).append('>');
    }

    private static void writeMap(StringBuilder sb, String entry, String keyName, String valueName, JsonNode map) {
        Iterator<Map.Entry<String, JsonNode>> it = map.fields();
        while (it.hasNext()) {
            Map.Entry<String, JsonNode> e = it.next();
            sb.append('<').append(entry).append("><").append(keyName).append('>');
            escape(sb, e.getKey());
            sb.append("</").append(keyName).append("><").append(valueName).append('>');
            escape(sb, e.getValue().asText());
            sb.append("</").append(valueName).append("></").append(entry).append('>');
        }
    }

    static void escape(StringBuilder sb, String text) {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '&' -> sb.append("&amp;");
                case '<' -> sb.append("&lt;");
                case '>' -> sb.append("&gt;");
                case '"' -> sb.append("&quot;");
                case '\r' -> sb.append("&#xD;");
                default -> sb.append(c);
            }
        }
    }
}
