package io.sluice.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.OverLimitException;
import software.amazon.awssdk.services.sqs.model.SqsException;
import software.amazon.awssdk.services.sqs.model.UnsupportedOperationException;

/**
 * The error codes that need a particular server set-up: the in-flight limit (set to 2 here), per-key
 * authorization (a key file with a restricted key), and the protocol-level codes for unknown actions and
 * malformed signatures, checked exactly.
 */
class ErrorCatalogueIT {
    static SluiceProcess server;
    static SqsClient sqs;
    static SqsClient producer;

    @BeforeAll
    static void start() throws Exception {
        Path keys = Files.createTempFile(SluiceProcess.itDir(), "keys", ".json");
        Files.writeString(keys, "{\"keys\": [{\"accessKey\": \"producer\", \"secretKey\": \"p-secret\", \"allow\": ["
                + "{\"action\": \"SendMessage*\", \"queue\": \"orders-*\"}, {\"action\": \"GetQueueUrl\", \"queue\": \"*\"}]}]}");
        server = SluiceProcess.start("errors", Map.of("SLUICE_MAX_INFLIGHT_PER_PARTITION", "2",
                "SLUICE_AUTH_KEYS_FILE", keys.toString()));
        sqs = SqsClients.client(server.endpoint());
        producer = SqsClients.client(server.endpoint(), "producer", "p-secret");
    }

    @AfterAll
    static void stop() throws Exception {
        sqs.close();
        producer.close();
        server.stop();
    }

    @Test
    void inFlightLimitAnswersOverLimitOnShortPollsAndNothingOnLongPolls() {
        String url = sqs.createQueue(b -> b.queueName("limited")).queueUrl();
        for (int i = 0; i < 3; i++) {
            sqs.sendMessage(b -> b.queueUrl(url).messageBody("m"));
        }
        assertEquals(2, sqs.receiveMessage(b -> b.queueUrl(url).maxNumberOfMessages(10)).messages().size());
        OverLimitException e = assertThrows(OverLimitException.class, () -> sqs.receiveMessage(b -> b.queueUrl(url)));
        assertEquals(403, e.statusCode());
        assertEquals("OverLimit", e.awsErrorDetails().errorCode());
        assertFalse(sqs.receiveMessage(b -> b.queueUrl(url).waitTimeSeconds(1)).hasMessages());
    }

    @Test
    void perKeyPolicyAllowsOnlyItsActionsAndQueues() {
        String orders = sqs.createQueue(b -> b.queueName("orders-eu")).queueUrl();
        String other = sqs.createQueue(b -> b.queueName("payments")).queueUrl();
        producer.sendMessage(b -> b.queueUrl(orders).messageBody("allowed"));
        assertEquals(orders, producer.getQueueUrl(b -> b.queueName("orders-eu")).queueUrl());
        SqsException wrongQueue = assertThrows(SqsException.class,
                () -> producer.sendMessage(b -> b.queueUrl(other).messageBody("denied")));
        assertEquals("AccessDenied", wrongQueue.awsErrorDetails().errorCode());
        assertEquals(403, wrongQueue.statusCode());
        SqsException wrongAction = assertThrows(SqsException.class, () -> producer.receiveMessage(b -> b.queueUrl(orders)));
        assertEquals("AccessDenied", wrongAction.awsErrorDetails().errorCode());
        assertEquals("allowed", sqs.receiveMessage(b -> b.queueUrl(orders)).messages().get(0).body());
    }

    @Test
    void keysPutIntoTheReplicatedCatalogAreAcceptedWithTheirRules() throws Exception {
        sqs.createQueue(b -> b.queueName("audit-1"));
        String url = sqs.createQueue(b -> b.queueName("secret-1")).queueUrl();
        try (SqsClient catalogKey = SqsClients.client(server.endpoint(), "cat-key", "cat-secret")) {
            SqsException unknown = assertThrows(SqsException.class, catalogKey::listQueues);
            assertEquals("InvalidClientTokenId", unknown.awsErrorDetails().errorCode());
            // the admin port's writes need the admin token: without it nothing is stored
            AssertionError refused = assertThrows(AssertionError.class, () -> SluiceProcess.runCli("admin", "put-key",
                    "--admin-url", server.adminEndpoint().toString(), "--access-key", "cat-key", "--secret-key",
                    "cat-secret", "--admin"));
            assertTrue(refused.getMessage().contains("admin token is required"), refused.getMessage());
            assertEquals("InvalidClientTokenId", assertThrows(SqsException.class, catalogKey::listQueues)
                    .awsErrorDetails().errorCode(), "no key was stored");
            SluiceProcess.runCli("admin", "put-key", "--admin-url", server.adminEndpoint().toString(),
                    "--token-file", server.dataDir().resolve("admin-token").toString(),
                    "--access-key", "cat-key", "--secret-key", "cat-secret", "--allow", "SendMessage:audit-*",
                    "--allow", "GetQueueUrl:*");
            String audit = catalogKey.getQueueUrl(b -> b.queueName("audit-1")).queueUrl();
            catalogKey.sendMessage(b -> b.queueUrl(audit).messageBody("recorded"));
            SqsException denied = assertThrows(SqsException.class,
                    () -> catalogKey.sendMessage(b -> b.queueUrl(url).messageBody("no")));
            assertEquals("AccessDenied", denied.awsErrorDetails().errorCode());
        }
    }

    @Test
    void unsupportedAndUnknownActions() throws Exception {
        String url = sqs.createQueue(b -> b.queueName("perms")).queueUrl();
        UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class, () -> sqs.addPermission(b -> b
                .queueUrl(url).label("l").awsAccountIds("111111111111").actions("SendMessage")));
        assertEquals("AWS.SimpleQueueService.UnsupportedOperation", e.awsErrorDetails().errorCode());

        RawHttp.Response query = RawHttp.exchange(server.port(), RawHttp.build(server.port(), "POST", "/",
                Map.of("Content-Type", "application/x-www-form-urlencoded"), "Action=Frobnicate".getBytes(StandardCharsets.UTF_8),
                SluiceProcess.ACCESS_KEY, SluiceProcess.SECRET_KEY));
        assertEquals(400, query.status());
        assertTrue(query.body().contains("<Code>InvalidAction</Code>"), query.body());
        RawHttp.Response missing = RawHttp.exchange(server.port(), RawHttp.build(server.port(), "POST", "/",
                Map.of("Content-Type", "application/x-www-form-urlencoded"), "Version=2012-11-05".getBytes(StandardCharsets.UTF_8),
                SluiceProcess.ACCESS_KEY, SluiceProcess.SECRET_KEY));
        assertTrue(missing.body().contains("<Code>MissingAction</Code>"), missing.body());
        RawHttp.Response json = RawHttp.exchange(server.port(), RawHttp.build(server.port(), "POST", "/",
                Map.of("Content-Type", "application/x-amz-json-1.0", "X-Amz-Target", "AmazonSQS.Frobnicate"),
                "{}".getBytes(StandardCharsets.UTF_8), SluiceProcess.ACCESS_KEY, SluiceProcess.SECRET_KEY));
        assertEquals(400, json.status());
        assertTrue(json.body().contains("UnknownOperationException"), json.body());
        assertTrue(json.head().toLowerCase().contains("x-amzn-query-error: unknownoperation;sender"), json.head());
    }

    @Test
    void malformedAuthorizationIsIncompleteSignature() throws Exception {
        RawHttp.Response r = RawHttp.exchange(server.port(), RawHttp.build(server.port(), "POST", "/",
                Map.of("Content-Type", "application/x-www-form-urlencoded", "Authorization", "AWS4-HMAC-SHA256 nonsense",
                        "X-Amz-Date", "20240102T030405Z"), "Action=ListQueues".getBytes(StandardCharsets.UTF_8), null, null));
        assertEquals(400, r.status());
        assertTrue(r.body().contains("<Code>IncompleteSignature</Code>"), r.body());
    }
}
