package io.sluice.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;

/**
 * Hostile input: at least 200 malformed requests (broken HTTP, truncated and oversized bodies, invalid encodings
 * and characters, wrong types, unknown actions, broken signatures, huge headers). Each must get a 4xx with an SQS
 * error body, the process must stay up, and stored data must not change.
 */
class MalformedInputIT extends SharedServer {
    private static final String JSON = "application/x-amz-json-1.0";
    private static final String FORM = "application/x-www-form-urlencoded; charset=utf-8";

    record Case(String name, byte[] request) {
    }

    @Test
    void everyHostileRequestGetsA4xxSqsErrorAndNothingChanges() throws Exception {
        String url = createQueue("victim");
        sqs.sendMessage(b -> b.queueUrl(url).messageBody("precious"));
        String path = url.substring(url.indexOf("/000000000000/"));

        List<Case> cases = new ArrayList<>();
        addProtocolJunk(cases);
        addJsonCases(cases, url);
        addQueryCases(cases, url, path);
        addAuthCases(cases);
        assertTrue(cases.size() >= 200, "only " + cases.size() + " cases");

        List<String> failures = new ArrayList<>();
        for (Case c : cases) {
            RawHttp.Response r = RawHttp.exchange(server.host(), server.port(), c.request());
            boolean sqsError = r.body().contains("<ErrorResponse") && r.body().contains("<Code>")
                    || r.body().contains("\"__type\"");
            if (r.status() < 400 || r.status() > 499 || !sqsError) {
                failures.add(c.name() + " -> " + r.status() + " " + abbreviate(r.body()));
            }
        }
        assertEquals(List.of(), failures, failures.size() + " of " + cases.size() + " hostile requests were mishandled");

        assertTrue(server.alive(), "the server survived");
        assertEquals("1", MessagingIT.approximate(url, QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES),
                "stored data unchanged");
        assertEquals("precious", sqs.receiveMessage(b -> b.queueUrl(url)).messages().get(0).body());
    }

    private static String abbreviate(String s) {
        return s.length() > 200 ? s.substring(0, 200) + "..." : s;
    }

    private void addProtocolJunk(List<Case> cases) {
        String[] junk = {
            "GARBAGE\r\n\r\n",
            "POST\r\n\r\n",
            "POST / HTTP/9.9\r\nHost: x\r\n\r\n",
            "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n",
            "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n",
            "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nZZZ\r\n\r\n",
            "POST /" + "a".repeat(20_000) + " HTTP/1.1\r\nHost: x\r\n\r\n",
            "POST / HTTP/1.1\r\nHost: x\r\nX-Huge: " + "h".repeat(40_000) + "\r\n\r\n",
            "POST / HTTP/1.1\r\nHost: x\r\n" + "X-Many: v\r\n".repeat(5_000) + "\r\n",
            "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 104857600\r\nContent-Type: " + FORM + "\r\n\r\nAction=",
            "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 104857600\r\nX-Amz-Target: AmazonSQS.SendMessage\r\n\r\n{",
            "\u0000\u0001\u0002 / HTTP/1.1\r\n\r\n",
        };
        for (int i = 0; i < junk.length; i++) {
            cases.add(new Case("junk-" + i, junk[i].getBytes(StandardCharsets.ISO_8859_1)));
        }
    }

    private byte[] signedJson(String action, byte[] body) {
        return RawHttp.build(server.host(), server.port(), "POST", "/", Map.of("Content-Type", JSON, "X-Amz-Target",
                "AmazonSQS." + action), body, SluiceProcess.ACCESS_KEY, SluiceProcess.SECRET_KEY);
    }

    private byte[] signedForm(String path, byte[] body) {
        return RawHttp.build(server.host(), server.port(), "POST", path, Map.of("Content-Type", FORM), body, SluiceProcess.ACCESS_KEY,
                SluiceProcess.SECRET_KEY);
    }

    private void addJsonCases(List<Case> cases, String url) {
        String q = "\"QueueUrl\":\"" + url + "\"";
        // Invalid for every action: broken JSON, wrong shapes, no usable queue (and no QueueName for CreateQueue).
        String[] common = {
            "{", "{\"QueueUrl\":", "[]", "\"text\"", "42", "null{", "{\"a\":1}}", "{\"QueueUrl\":123}",
            "{\"QueueUrl\":[\"x\"]}", "{\"QueueUrl\":{\"a\":1}}", "{\"QueueUrl\":\"http://x/000000000000/\"}",
            "{\"QueueUrl\":\"::::\"}", "{\"QueueUrl\":\"http://x/000000000000/nope\"}", "{\"QueueUrl\":true}",
            "[".repeat(100) + "]".repeat(100), "{\"a\":" + "[".repeat(50) + "]".repeat(50) + "}",
        };
        String[] actions = {"SendMessage", "ReceiveMessage", "DeleteMessage", "SendMessageBatch", "CreateQueue",
            "ChangeMessageVisibility", "GetQueueAttributes", "PurgeQueue"};
        for (String action : actions) {
            for (int i = 0; i < common.length; i++) {
                cases.add(new Case("json-" + action + "-" + i, signedJson(action, common[i].getBytes(StandardCharsets.UTF_8))));
            }
        }
        Map<String, String[]> specific = Map.of(
            "SendMessage", new String[] {
                "{" + q + ",\"MessageBody\":", "{" + q + ",\"MessageBody\":5}",
                "{" + q + ",\"MessageBody\":\"x\",\"DelaySeconds\":\"soon\"}",
                "{" + q + ",\"MessageBody\":\"x\",\"DelaySeconds\":99999999999999999999}",
                "{" + q + ",\"MessageBody\":\"x\",\"DelaySeconds\":-1}",
                "{" + q + ",\"MessageBody\":\"x\",\"MessageAttributes\":\"nope\"}",
                "{" + q + ",\"MessageBody\":\"x\",\"MessageAttributes\":{\"a\":{}}}",
                "{" + q + ",\"MessageBody\":\"x\",\"MessageAttributes\":{\"a\":{\"DataType\":\"Binary\",\"BinaryValue\":\"%%%\"}}}",
                "{" + q + ",\"MessageBody\":\"x\",\"MessageAttributes\":{\"AWS.x\":{\"DataType\":\"String\",\"StringValue\":\"v\"}}}",
                "{" + q + ",\"MessageBody\":\"\\u0000\"}", "{" + q + ",\"MessageBody\":\"\\ud800\"}",
                "{" + q + ",\"MessageBody\":\"\\uffff\"}", "{" + q + ",\"MessageBody\":\"\"}", "{" + q + "}",
                "{" + q + ",\"MessageBody\":\"x\",\"MessageDeduplicationId\":\"d\"}"},
            "SendMessageBatch", new String[] {
                "{" + q + ",\"Entries\":\"x\"}", "{" + q + ",\"Entries\":[1,2]}", "{" + q + ",\"Entries\":[]}",
                "{" + q + ",\"Entries\":[{\"Id\":\"a b\",\"MessageBody\":\"x\"}]}"},
            "ReceiveMessage", new String[] {
                "{" + q + ",\"MaxNumberOfMessages\":0}", "{" + q + ",\"MaxNumberOfMessages\":\"many\"}",
                "{" + q + ",\"WaitTimeSeconds\":21}", "{" + q + ",\"VisibilityTimeout\":43201}",
                "{" + q + ",\"AttributeNames\":\"All\"}", "{" + q + ",\"MaxNumberOfMessages\":1.5}"},
            "DeleteMessage", new String[] {
                "{" + q + ",\"ReceiptHandle\":\"x\"}", "{" + q + ",\"ReceiptHandle\":\"" + "A".repeat(39) + "\"}",
                "{" + q + ",\"ReceiptHandle\":7}", "{" + q + "}"},
            "CreateQueue", new String[] {
                "{\"QueueName\":\"bad name\"}", "{\"QueueName\":\"" + "n".repeat(81) + "\"}",
                "{\"QueueName\":\"x.fifo\"}", "{\"QueueName\":\"ok\",\"Attributes\":{\"DelaySeconds\":5}}",
                "{\"QueueName\":\"ok\",\"Attributes\":[]}"});
        specific.forEach((action, bodies) -> {
            for (int i = 0; i < bodies.length; i++) {
                cases.add(new Case("json-" + action + "-specific-" + i,
                        signedJson(action, bodies[i].getBytes(StandardCharsets.UTF_8))));
            }
        });
        cases.add(new Case("json-invalid-utf8", signedJson("SendMessage",
                new byte[] {'{', '"', 'Q', '"', ':', '"', (byte) 0xC3, (byte) 0x28, '"', '}'})));
        cases.add(new Case("json-unknown-action", signedJson("DropAllTables", "{}".getBytes(StandardCharsets.UTF_8))));
        cases.add(new Case("json-empty-action", signedJson("", "{}".getBytes(StandardCharsets.UTF_8))));
        cases.add(new Case("json-binary", signedJson("SendMessage", new byte[] {(byte) 0xFF, (byte) 0xFE, 0, 1, 2})));
    }

    private void addQueryCases(List<Case> cases, String url, String path) {
        String q = "QueueUrl=" + java.net.URLEncoder.encode(url, StandardCharsets.UTF_8);
        String[] bodies = {
            "", "Version=2012-11-05", "Action=", "Action=DropAllTables", "Action=SendMessage&" + q + "&MessageBody=%ZZ",
            "Action=SendMessage&" + q + "&MessageBody=%4", "Action=SendMessage&" + q + "&MessageBody=%FF%FE",
            "Action=SendMessage&" + q + "&MessageBody=%00", "Action=SendMessage&" + q + "&MessageBody=%08",
            "Action=SendMessage&" + q + "&MessageBody=%EF%BF%BF", "Action=SendMessage&" + q,
            "Action=SendMessage&" + q + "&MessageBody=x&DelaySeconds=abc",
            "Action=SendMessage&" + q + "&MessageBody=x&DelaySeconds=901",
            "Action=SendMessage&" + q + "&MessageBody=x&MessageAttribute.x.Name=a",
            "Action=SendMessage&" + q + "&MessageBody=x&MessageAttribute.1.Name=a&MessageAttribute.1.Value.DataType=Nope"
                    + "&MessageAttribute.1.Value.StringValue=v",
            "Action=SendMessage&" + q + "&MessageBody=x&MessageAttribute.1.Name=a&MessageAttribute.1.Value.DataType=Number"
                    + "&MessageAttribute.1.Value.StringValue=notanumber",
            "Action=SendMessageBatch&" + q, "Action=SendMessageBatch&" + q + "&SendMessageBatchRequestEntry.1.Id=bad%20id"
                    + "&SendMessageBatchRequestEntry.1.MessageBody=x",
            "Action=SendMessageBatch&" + q + "&SendMessageBatchRequestEntry.-1.Id=a",
            "Action=ReceiveMessage&" + q + "&MaxNumberOfMessages=11", "Action=ReceiveMessage&" + q + "&WaitTimeSeconds=-1",
            "Action=ReceiveMessage&" + q + "&MaxNumberOfMessages=99999999999",
            "Action=DeleteMessage&" + q + "&ReceiptHandle=garbage", "Action=DeleteMessage&" + q,
            "Action=ChangeMessageVisibility&" + q + "&ReceiptHandle=garbage&VisibilityTimeout=5",
            "Action=GetQueueAttributes&" + q + "&AttributeName.1=NoSuchAttribute",
            "Action=SetQueueAttributes&" + q + "&Attribute.1.Name=VisibilityTimeout&Attribute.1.Value=-3",
            "Action=SetQueueAttributes&" + q + "&Attribute.1.Name=QueueArn&Attribute.1.Value=x",
            "Action=SetQueueAttributes&" + q + "&Attribute.1.Name=RedrivePolicy&Attribute.1.Value=%7Bnot json",
            "Action=CreateQueue&QueueName=bad%20name", "Action=CreateQueue&QueueName=",
            "Action=CreateQueue&QueueName=x&Attribute.1.Name=DelaySeconds&Attribute.1.Value=nope",
            "Action=GetQueueUrl&QueueName=doesnotexist", "Action=DeleteQueue&QueueUrl=http%3A%2F%2Fx%2Fno%2Fqueue",
            "Action=TagQueue&" + q + "&Tag.1.Key=aws%3Areserved&Tag.1.Value=v",
            "Action=ListQueues&MaxResults=0", "Action=ListQueues&MaxResults=abc", "Action=ListQueues&NextToken=%%%",
            "Action=StartMessageMoveTask&SourceArn=nonsense", "Action=CancelMessageMoveTask&TaskHandle=%21",
            "Action=" + "A".repeat(5000),
        };
        for (int i = 0; i < bodies.length; i++) {
            cases.add(new Case("query-" + i, signedForm("/", bodies[i].getBytes(StandardCharsets.UTF_8))));
            cases.add(new Case("query-path-" + i, signedForm(path, bodies[i].getBytes(StandardCharsets.UTF_8))));
        }
        cases.add(new Case("query-invalid-utf8", signedForm("/", new byte[] {'A', 'c', 't', 'i', 'o', 'n', '=',
                (byte) 0xC3, (byte) 0x28})));
        StringBuilder many = new StringBuilder("Action=SendMessage&" + q + "&MessageBody=x");
        for (int i = 0; i < 3000; i++) {
            many.append("&p").append(i).append("=v");
        }
        cases.add(new Case("query-too-many-params", signedForm("/", many.toString().getBytes(StandardCharsets.UTF_8))));
    }

    private void addAuthCases(List<Case> cases) {
        byte[] body = "Action=ListQueues".getBytes(StandardCharsets.UTF_8);
        int port = server.port();
        String host = server.host();
        cases.add(new Case("auth-none", RawHttp.build(host, port, "POST", "/", Map.of("Content-Type", FORM), body, null, null)));
        cases.add(new Case("auth-wrong-secret", RawHttp.build(host, port, "POST", "/", Map.of("Content-Type", FORM), body,
                SluiceProcess.ACCESS_KEY, "wrong")));
        cases.add(new Case("auth-unknown-key", RawHttp.build(host, port, "POST", "/", Map.of("Content-Type", FORM), body,
                "AKIDNOBODY", SluiceProcess.SECRET_KEY)));
        String[] authorizations = {
            "AWS4-HMAC-SHA256", "AWS4-HMAC-SHA256 Credential=", "Basic dXNlcjpwYXNz", "AWS4-HMAC-SHA256 Credential=a/b/c/d/e,"
                    + " SignedHeaders=host, Signature=zz",
            "AWS4-HMAC-SHA256 Credential=" + SluiceProcess.ACCESS_KEY + "/20200101/us-east-1/sqs/aws4_request,"
                    + " SignedHeaders=host;x-amz-date, Signature=" + "0".repeat(64),
            "AWS4-HMAC-SHA256 Credential=" + SluiceProcess.ACCESS_KEY + "/20200101/us-east-1/s3/aws4_request,"
                    + " SignedHeaders=host, Signature=" + "0".repeat(64),
            "AWS4-HMAC-SHA256 " + "x".repeat(10_000),
        };
        for (int i = 0; i < authorizations.length; i++) {
            cases.add(new Case("auth-header-" + i, RawHttp.build(host, port, "POST", "/", Map.of("Content-Type", FORM,
                    "Authorization", authorizations[i], "X-Amz-Date", "20200101T000000Z"), body, null, null)));
        }
        cases.add(new Case("auth-presigned-garbage", RawHttp.build(host, port, "GET", "/?Action=ListQueues&X-Amz-Algorithm="
                + "AWS4-HMAC-SHA256&X-Amz-Credential=a&X-Amz-Signature=b", Map.of(), new byte[0], null, null)));
    }
}
