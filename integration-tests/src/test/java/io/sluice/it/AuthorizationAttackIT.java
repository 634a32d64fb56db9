package io.sluice.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.common.ReceiptHandle;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;
import software.amazon.awssdk.services.sqs.model.SqsException;

/**
 * Issue 12's authorization attacks, tried as an attacker would against {@code sluice dev}: a key limited by the keys
 * file to queues {@code mine-*} (every action) and a key with no rules try to reach other queues through every
 * ambiguity a request can carry — QueueName against QueueUrl, a QueueUrl with a query, the request path against
 * QueueUrl, ARNs in move tasks and redrive policies — with raw signed requests in both protocols and with the AWS
 * SDK. Each attempt must fail with the stated SQS error, and the server's queues, attributes, tags and message counts
 * must be the same afterwards.
 */
class AuthorizationAttackIT {
    static final String ACCOUNT = "000000000000";
    static final String ARN = "arn:aws:sqs:us-east-1:" + ACCOUNT + ":";
    static SluiceProcess server;
    static SqsClient admin;
    static SqsClient mine;
    static String base;

    @BeforeAll
    static void start() throws Exception {
        Path keys = Files.createTempFile(SluiceProcess.itDir(), "keys", ".json");
        Files.writeString(keys, "{\"keys\": [{\"accessKey\": \"mine\", \"secretKey\": \"mine-secret\","
                + " \"allow\": [{\"action\": \"*\", \"queue\": \"mine-*\"}]},"
                + " {\"accessKey\": \"norules\", \"secretKey\": \"norules-secret\"}]}");
        server = SluiceProcess.start("attack", Map.of("SLUICE_AUTH_KEYS_FILE", keys.toString()));
        admin = SqsClients.client(server.endpoint());
        mine = SqsClients.client(server.endpoint(), "mine", "mine-secret", false);
        base = "http://127.0.0.1:" + server.port() + "/" + ACCOUNT + "/";
        admin.createQueue(b -> b.queueName("other-dlq"));
        admin.createQueue(b -> b.queueName("other").attributesWithStrings(Map.of("RedrivePolicy",
                redrive("other-dlq"))));
        admin.createQueue(b -> b.queueName("mine-dlq"));
        admin.createQueue(b -> b.queueName("mine-1"));
        admin.createQueue(b -> b.queueName("mine-src").attributesWithStrings(Map.of("RedrivePolicy", redrive("mine-dlq"))));
        admin.createQueue(b -> b.queueName("other-src").attributesWithStrings(Map.of("RedrivePolicy",
                redrive("mine-dlq"))));
        admin.tagQueue(b -> b.queueUrl(base + "other").tags(Map.of("team", "them")));
        for (int i = 0; i < 3; i++) {
            int n = i;
            admin.sendMessage(b -> b.queueUrl(base + "other").messageBody("secret " + n));
            admin.sendMessage(b -> b.queueUrl(base + "other-dlq").messageBody("dead " + n));
        }
        admin.sendMessage(b -> b.queueUrl(base + "mine-1").messageBody("mine"));
    }

    @AfterAll
    static void stop() throws Exception {
        mine.close();
        admin.close();
        server.close();
    }

    private static String redrive(String target) {
        return "{\"deadLetterTargetArn\":\"" + ARN + target + "\",\"maxReceiveCount\":3}";
    }

    /** Queues, their attributes (counts included) and tags, as the admin key sees them. */
    private static Map<String, String> state() {
        Map<String, String> out = new TreeMap<>();
        for (String url : admin.listQueues().queueUrls()) {
            out.put(url + " attributes", new TreeMap<>(admin.getQueueAttributes(b -> b.queueUrl(url)
                    .attributeNames(QueueAttributeName.ALL)).attributesAsStrings()).toString());
            out.put(url + " tags", new TreeMap<>(admin.listQueueTags(b -> b.queueUrl(url)).tags()).toString());
        }
        return out;
    }

    private record Attempt(String what, int status, String code, Executable run) {
    }

    @Test
    void everyAttemptFailsAndChangesNothing() throws Throwable {
        // what the limited key may do, it can: the checks refuse only what they should
        assertEquals("mine", mine.receiveMessage(b -> b.queueUrl(base + "mine-1").visibilityTimeout(0)).messages()
                .get(0).body());
        assertEquals(List.of(base + "mine-src"), mine.listDeadLetterSourceQueues(b -> b.queueUrl(base + "mine-dlq"))
                .queueUrls(), "only the sources the key may see");
        assertEquals(List.of(base + "mine-1", base + "mine-dlq", base + "mine-src"),
                mine.listQueues().queueUrls().stream().sorted().toList(), "only the queues the key may see");

        Map<String, String> before = state();
        List<Attempt> attempts = new ArrayList<>();
        String other = base + "other";
        // JSON protocol, raw signed requests
        attempts.add(json("QueueName naming its own queue beside another QueueUrl", "ReceiveMessage",
                "{\"QueueUrl\":\"" + other + "\",\"QueueName\":\"mine-1\"}", 400, "InvalidParameterValue"));
        attempts.add(json("another queue's URL with ?/mine-1 appended", "PurgeQueue",
                "{\"QueueUrl\":\"" + other + "?/mine-1\"}", 400, "QueueDoesNotExist"));
        attempts.add(json("another queue's URL with #/mine-1 appended", "PurgeQueue",
                "{\"QueueUrl\":\"" + other + "#/mine-1\"}", 400, "QueueDoesNotExist"));
        attempts.add(json("a QueueUrl with its own queue as an extra path segment", "PurgeQueue",
                "{\"QueueUrl\":\"" + other + "/mine-1\"}", 400, "QueueDoesNotExist"));
        attempts.add(json("receive from another queue", "ReceiveMessage", "{\"QueueUrl\":\"" + other + "\"}",
                403, "AccessDenied"));
        attempts.add(json("purge another queue", "PurgeQueue", "{\"QueueUrl\":\"" + other + "\"}", 403, "AccessDenied"));
        attempts.add(json("move another queue's dead letters into its own queue", "StartMessageMoveTask",
                "{\"SourceArn\":\"" + ARN + "other-dlq\",\"DestinationArn\":\"" + ARN + "mine-1\"}", 403,
                "AccessDenied"));
        attempts.add(json("redrive another queue's dead letters to their sources", "StartMessageMoveTask",
                "{\"SourceArn\":\"" + ARN + "other-dlq\"}", 403, "AccessDenied"));
        attempts.add(json("list another queue's move tasks", "ListMessageMoveTasks",
                "{\"SourceArn\":\"" + ARN + "other-dlq\"}", 403, "AccessDenied"));
        attempts.add(json("cancel a move task (account-wide)", "CancelMessageMoveTask",
                "{\"TaskHandle\":\"eA\"}", 403, "AccessDenied"));
        String otherTask = java.util.Base64.getUrlEncoder().withoutPadding().encodeToString(("some-task|" + ARN
                + "other-dlq").getBytes(StandardCharsets.UTF_8));
        attempts.add(json("cancel another queue's task, naming its own queue in an ignored SourceArn",
                "CancelMessageMoveTask", "{\"TaskHandle\":\"" + otherTask + "\",\"SourceArn\":\"" + ARN + "mine-1\"}",
                403, "AccessDenied"));
        attempts.add(json("redrive its own DLQ back to sources that include another queue", "StartMessageMoveTask",
                "{\"SourceArn\":\"" + ARN + "mine-dlq\"}", 403, "AccessDenied"));
        attempts.add(json("its own queue's RedrivePolicy aimed at another queue", "SetQueueAttributes",
                "{\"QueueUrl\":\"" + base + "mine-1\",\"Attributes\":{\"RedrivePolicy\":" + quoted(redrive("other-dlq"))
                        + "}}", 403, "AccessDenied"));
        attempts.add(json("its own queue's RedriveAllowPolicy naming another queue", "SetQueueAttributes",
                "{\"QueueUrl\":\"" + base + "mine-dlq\",\"Attributes\":{\"RedriveAllowPolicy\":" + quoted(
                        "{\"redrivePermission\":\"byQueue\",\"sourceQueueArns\":[\"" + ARN + "other\"]}") + "}}",
                403, "AccessDenied"));
        attempts.add(json("a new queue of its own dead-lettering into another queue", "CreateQueue",
                "{\"QueueName\":\"mine-new\",\"Attributes\":{\"RedrivePolicy\":" + quoted(redrive("other")) + "}}",
                403, "AccessDenied"));
        attempts.add(json("GetQueueUrl by its own name beside another QueueUrl", "GetQueueUrl",
                "{\"QueueName\":\"mine-1\",\"QueueUrl\":\"" + other + "\"}", 400, "InvalidParameterValue"));
        attempts.add(json("another queue's attributes", "GetQueueAttributes",
                "{\"QueueUrl\":\"" + other + "\",\"AttributeNames\":[\"All\"]}", 403, "AccessDenied"));
        attempts.add(json("delete another queue", "DeleteQueue", "{\"QueueUrl\":\"" + other + "\"}", 403, "AccessDenied"));
        attempts.add(json("send to another queue", "SendMessage",
                "{\"QueueUrl\":\"" + other + "\",\"MessageBody\":\"x\"}", 403, "AccessDenied"));
        attempts.add(json("tag another queue", "TagQueue", "{\"QueueUrl\":\"" + other + "\",\"Tags\":{\"a\":\"b\"}}",
                403, "AccessDenied"));
        attempts.add(json("list another queue's dead-letter sources", "ListDeadLetterSourceQueues",
                "{\"QueueUrl\":\"" + base + "other-dlq\"}", 403, "AccessDenied"));
        attempts.add(json("delete in another queue", "DeleteMessage",
                "{\"QueueUrl\":\"" + other + "\",\"ReceiptHandle\":\"AAAA\"}", 403, "AccessDenied"));
        attempts.add(json("change visibility in another queue", "ChangeMessageVisibility",
                "{\"QueueUrl\":\"" + other + "\",\"ReceiptHandle\":\"AAAA\",\"VisibilityTimeout\":0}", 403,
                "AccessDenied"));
        attempts.add(json("GetQueueUrl of another queue", "GetQueueUrl", "{\"QueueName\":\"other\"}", 403,
                "AccessDenied"));
        // Query protocol, raw signed requests; the request path names a queue too
        attempts.add(query("posted to another queue's URL naming its own in QueueUrl", "/" + ACCOUNT + "/other",
                "Action=PurgeQueue&QueueUrl=" + enc(base + "mine-1"), 400, "InvalidParameterValue"));
        attempts.add(query("posted to another queue's URL", "/" + ACCOUNT + "/other", "Action=ReceiveMessage",
                403, "AccessDenied"));
        attempts.add(query("another queue's URL with ?/mine-1 appended", "/",
                "Action=PurgeQueue&QueueUrl=" + enc(other + "?/mine-1"), 400, "NonExistentQueue"));
        attempts.add(query("its own queue's RedrivePolicy aimed at another queue", "/",
                "Action=SetQueueAttributes&QueueUrl=" + enc(base + "mine-1") + "&Attribute.1.Name=RedrivePolicy"
                        + "&Attribute.1.Value=" + enc(redrive("other-dlq")), 403, "AccessDenied"));
        attempts.add(query("move another queue's dead letters into its own queue", "/",
                "Action=StartMessageMoveTask&SourceArn=" + enc(ARN + "other-dlq") + "&DestinationArn="
                        + enc(ARN + "mine-1"), 403, "AccessDenied"));
        attempts.add(query("a new queue of its own dead-lettering into another queue", "/",
                "Action=CreateQueue&QueueName=mine-new&Attribute.1.Name=RedrivePolicy&Attribute.1.Value="
                        + enc(redrive("other")), 403, "AccessDenied"));
        attempts.add(query("GetQueueUrl of another queue", "/", "Action=GetQueueUrl&QueueName=other", 403,
                "AccessDenied"));
        attempts.add(query("delete another queue by its path", "/" + ACCOUNT + "/other", "Action=DeleteQueue", 403,
                "AccessDenied"));
        // a key without rules may do nothing
        attempts.add(keyless("create a queue", "CreateQueue", "{\"QueueName\":\"mine-2\"}"));
        attempts.add(keyless("send", "SendMessage", "{\"QueueUrl\":\"" + base + "mine-1\",\"MessageBody\":\"x\"}"));
        attempts.add(keyless("receive", "ReceiveMessage", "{\"QueueUrl\":\"" + base + "mine-1\"}"));
        attempts.add(keyless("GetQueueUrl", "GetQueueUrl", "{\"QueueName\":\"other\"}"));
        attempts.add(keyless("start a move task", "StartMessageMoveTask", "{\"SourceArn\":\"" + ARN + "other-dlq\"}"));
        attempts.add(keyless("purge", "PurgeQueue", "{\"QueueUrl\":\"" + other + "\"}"));
        // the AWS SDK for Java v2, as an application would
        attempts.add(sdk("SDK: receive from another queue", () -> mine.receiveMessage(b -> b.queueUrl(other))));
        attempts.add(sdk("SDK: purge another queue", () -> mine.purgeQueue(b -> b.queueUrl(other))));
        attempts.add(sdk("SDK: move another queue's dead letters into its own queue", () -> mine.startMessageMoveTask(
                b -> b.sourceArn(ARN + "other-dlq").destinationArn(ARN + "mine-1"))));
        attempts.add(sdk("SDK: RedrivePolicy aimed at another queue", () -> mine.setQueueAttributes(b -> b
                .queueUrl(base + "mine-1").attributesWithStrings(Map.of("RedrivePolicy", redrive("other-dlq"))))));
        attempts.add(sdk("SDK: new queue dead-lettering into another queue", () -> mine.createQueue(b -> b
                .queueName("mine-new").attributesWithStrings(Map.of("RedrivePolicy", redrive("other"))))));
        attempts.add(sdk("SDK: GetQueueUrl of another queue", () -> mine.getQueueUrl(b -> b.queueName("other"))));
        attempts.add(sdk("SDK: another queue's tags", () -> mine.listQueueTags(b -> b.queueUrl(other))));

        List<String> failures = new ArrayList<>();
        for (Attempt a : attempts) {
            try {
                a.run().execute();
            } catch (AssertionError e) {
                failures.add(a.what() + ": " + e.getMessage());
            }
        }
        assertTrue(failures.isEmpty(), failures.size() + " of " + attempts.size() + " attempts did not fail as they"
                + " should:\n" + String.join("\n", failures));
        assertTrue(attempts.size() >= 40, "the suite has " + attempts.size() + " attempts");
        try (SqsClient keyless = SqsClients.client(server.endpoint(), "norules", "norules-secret", false)) {
            assertEquals(List.of(), keyless.listQueues().queueUrls(), "a key without rules sees no queue");
        }
        assertEquals(before, state(), "the attempts changed nothing");
    }

    /**
     * Receipt handles carry a MAC under the cluster's secret: a perfect forgery of another consumer's handle (the
     * same queue, partition, sequence and receive count, found by decoding that consumer's own handle) is refused
     * without a MAC, with the MAC of a handle the key did receive, and with a made-up one; the message stays in flight
     * and its real handle still works.
     */
    /**
     * Issue 42, item 3: a dead letter from another key's queue stays in a DLQ the limited key owns after that queue's
     * redrive policy is gone; the key points a queue of its own at the DLQ (so every current source is its own) and
     * redrives without a destination: the mover would send the message back to the source recorded on it. Refused: a
     * redrive to the recorded sources needs the action account-wide; naming the destination works.
     */
    @Test
    void aRedriveWithoutDestinationCannotReachAQueueThatOnceDeadLetteredThere() {
        try {
            redriveWithoutDestination();
        } finally { // the other test lists the key's queues
            for (String q : List.of("mine-src2", "mine-rdlq", "ledger-src")) {
                admin.deleteQueue(b -> b.queueUrl(base + q));
            }
        }
    }

    private static void redriveWithoutDestination() {
        admin.createQueue(b -> b.queueName("mine-rdlq"));
        String ledger = admin.createQueue(b -> b.queueName("ledger-src").attributesWithStrings(Map.of("RedrivePolicy",
                "{\"deadLetterTargetArn\":\"" + ARN + "mine-rdlq\",\"maxReceiveCount\":1}"))).queueUrl();
        admin.sendMessage(b -> b.queueUrl(ledger).messageBody("ledger entry"));
        assertEquals(1, admin.receiveMessage(b -> b.queueUrl(ledger).visibilityTimeout(0)).messages().size());
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30)).until(() -> {
            admin.receiveMessage(b -> b.queueUrl(ledger).visibilityTimeout(0)); // the second receive hands it off
            return count(base + "mine-rdlq") == 1;
        });
        admin.setQueueAttributes(b -> b.queueUrl(ledger).attributesWithStrings(Map.of("RedrivePolicy", "")));
        mine.createQueue(b -> b.queueName("mine-src2").attributesWithStrings(Map.of("RedrivePolicy",
                "{\"deadLetterTargetArn\":\"" + ARN + "mine-rdlq\",\"maxReceiveCount\":3}")));
        assertEquals(List.of(base + "mine-src2"), mine.listDeadLetterSourceQueues(b -> b.queueUrl(base + "mine-rdlq"))
                .queueUrls(), "every current source of the DLQ is the key's own");

        SqsException refused = assertThrows(SqsException.class, () -> mine.startMessageMoveTask(b -> b
                .sourceArn(ARN + "mine-rdlq")));
        assertEquals(403, refused.statusCode());
        assertEquals("AccessDenied", refused.awsErrorDetails().errorCode());
        assertEquals(1, count(base + "mine-rdlq"), "the dead letter stays");
        assertEquals(0, count(ledger), "nothing written into the other key's queue");

        mine.startMessageMoveTask(b -> b.sourceArn(ARN + "mine-rdlq").destinationArn(ARN + "mine-src2"));
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30))
                .until(() -> count(base + "mine-src2") == 1);
        assertEquals(0, count(ledger), "a named destination of its own: moved there, nowhere else");
    }

    /** Visible, in flight and delayed messages of a queue, as the admin key sees them. */
    private static long count(String url) {
        return BacklogBench.count(admin, url.substring(url.lastIndexOf('/') + 1));
    }

    @Test
    void forgedReceiptHandlesAreInvalid() {
        String url = admin.createQueue(b -> b.queueName("mine-handles")).queueUrl();
        admin.sendMessage(b -> b.queueUrl(url).messageBody("for mine"));
        admin.sendMessage(b -> b.queueUrl(url).messageBody("for admin"));
        String mineHandle = mine.receiveMessage(b -> b.queueUrl(url).visibilityTimeout(600)).messages().get(0)
                .receiptHandle();
        String adminHandle = admin.receiveMessage(b -> b.queueUrl(url).visibilityTimeout(600)).messages().get(0)
                .receiptHandle();
        int inner = ReceiptHandle.ENCODED_LENGTH;
        ReceiptHandle target = ReceiptHandle.decode(adminHandle.substring(0, inner)).orElseThrow();
        String forged = target.encode();
        for (String attempt : List.of(forged, forged + mineHandle.substring(inner),
                forged + "A".repeat(mineHandle.length() - inner),
                adminHandle.substring(0, adminHandle.length() - 1)
                        + (adminHandle.endsWith("A") ? "B" : "A"))) {
            SqsException e = assertThrows(SqsException.class, () -> mine.deleteMessage(b -> b.queueUrl(url)
                    .receiptHandle(attempt)), attempt);
            assertEquals("ReceiptHandleIsInvalid", e.awsErrorDetails().errorCode(), e.getMessage());
            e = assertThrows(SqsException.class, () -> mine.changeMessageVisibility(b -> b.queueUrl(url)
                    .receiptHandle(attempt).visibilityTimeout(0)), attempt);
            assertEquals("ReceiptHandleIsInvalid", e.awsErrorDetails().errorCode(), e.getMessage());
        }
        assertEquals("2", admin.getQueueAttributes(b -> b.queueUrl(url).attributeNamesWithStrings(
                "ApproximateNumberOfMessagesNotVisible")).attributesAsStrings().get("ApproximateNumberOfMessagesNotVisible"));
        admin.deleteMessage(b -> b.queueUrl(url).receiptHandle(adminHandle)); // the real handle works
        mine.deleteMessage(b -> b.queueUrl(url).receiptHandle(mineHandle));
        assertEquals("0", admin.getQueueAttributes(b -> b.queueUrl(url).attributeNamesWithStrings(
                "ApproximateNumberOfMessagesNotVisible")).attributesAsStrings().get("ApproximateNumberOfMessagesNotVisible"));
        admin.deleteQueue(b -> b.queueUrl(url));
    }

    private static Attempt json(String what, String action, String body, int status, String code) {
        return new Attempt(what, status, code, () -> expect(what, status, code, RawHttp.exchange(server.port(),
                RawHttp.build(server.port(), "POST", "/", Map.of("Content-Type", "application/x-amz-json-1.0",
                        "X-Amz-Target", "AmazonSQS." + action), body.getBytes(StandardCharsets.UTF_8), "mine",
                        "mine-secret"))));
    }

    private static Attempt keyless(String what, String action, String body) {
        return new Attempt("no rules: " + what, 403, "AccessDenied", () -> expect(what, 403, "AccessDenied",
                RawHttp.exchange(server.port(), RawHttp.build(server.port(), "POST", "/", Map.of("Content-Type",
                        "application/x-amz-json-1.0", "X-Amz-Target", "AmazonSQS." + action),
                        body.getBytes(StandardCharsets.UTF_8), "norules", "norules-secret"))));
    }

    private static Attempt query(String what, String path, String form, int status, String code) {
        return new Attempt("query: " + what, status, code, () -> expect(what, status, code, RawHttp.exchange(
                server.port(), RawHttp.build(server.port(), "POST", path, Map.of("Content-Type",
                        "application/x-www-form-urlencoded"), (form + "&Version=2012-11-05")
                        .getBytes(StandardCharsets.UTF_8), "mine", "mine-secret"))));
    }

    private static Attempt sdk(String what, Executable call) {
        return new Attempt(what, 403, "AccessDenied", () -> {
            SqsException e = assertThrows(SqsException.class, call, "succeeded");
            assertEquals(403, e.statusCode(), e.getMessage());
            assertEquals("AccessDenied", e.awsErrorDetails().errorCode(), e.getMessage());
        });
    }

    private static void expect(String what, int status, String code, RawHttp.Response r) {
        assertEquals(status, r.status(), what + ": " + r.body());
        assertTrue(r.body().contains(code), what + ": expected " + code + " in " + r.body());
    }

    private static String quoted(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }
}
