package io.sluice.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.Message;

/** Long polls and connections: disconnects lease nothing, shutdown answers parked polls, metrics count actions. */
class ConnectionLifecycleIT {

    @Test
    void aClientThatDisconnectsWhileParkedLeavesNoLeasedMessage() throws Exception {
        try (SluiceProcess server = SluiceProcess.start("disconnect"); SqsClient sqs = SqsClients.client(server.endpoint())) {
            String url = sqs.createQueue(b -> b.queueName("parked")).queueUrl();
            String body = "{\"QueueUrl\":\"" + url + "\",\"WaitTimeSeconds\":20,\"VisibilityTimeout\":600}";
            byte[] request = RawHttp.build(server.port(), "POST", "/", Map.of("Content-Type", "application/x-amz-json-1.0",
                    "X-Amz-Target", "AmazonSQS.ReceiveMessage"), body.getBytes(StandardCharsets.UTF_8),
                    SluiceProcess.ACCESS_KEY, SluiceProcess.SECRET_KEY);
            try (Socket s = new Socket("127.0.0.1", server.port())) {
                s.getOutputStream().write(request);
                s.getOutputStream().flush();
                server.awaitParkedPolls(1);
            } // the client goes away
            Thread.sleep(300);
            sqs.sendMessage(b -> b.queueUrl(url).messageBody("must not vanish"));
            List<Message> got = sqs.receiveMessage(b -> b.queueUrl(url).waitTimeSeconds(5)
                    .attributeNamesWithStrings("ApproximateReceiveCount")).messages();
            assertEquals("must not vanish", got.get(0).body(), "not leased to the departed client");
            assertEquals("1", got.get(0).attributesAsStrings().get("ApproximateReceiveCount"), "never leased before");
        }
    }

    @Test
    void requestsSentToTheQueueUrlItselfWork() throws Exception {
        try (SluiceProcess server = SluiceProcess.start("queue-path"); SqsClient sqs = SqsClients.client(server.endpoint())) {
            String url = sqs.createQueue(b -> b.queueName("by-path")).queueUrl();
            String path = "/000000000000/by-path";
            RawHttp.Response query = RawHttp.exchange(server.port(), RawHttp.build(server.port(), "POST", path,
                    Map.of("Content-Type", "application/x-www-form-urlencoded"),
                    "Action=SendMessage&MessageBody=via+query+path".getBytes(StandardCharsets.UTF_8),
                    SluiceProcess.ACCESS_KEY, SluiceProcess.SECRET_KEY));
            assertEquals(200, query.status(), query.body());
            assertTrue(query.body().contains("<SendMessageResponse"), query.body());
            RawHttp.Response json = RawHttp.exchange(server.port(), RawHttp.build(server.port(), "POST", path,
                    Map.of("Content-Type", "application/x-amz-json-1.0", "X-Amz-Target", "AmazonSQS.SendMessage"),
                    "{\"MessageBody\":\"via json path\"}".getBytes(StandardCharsets.UTF_8),
                    SluiceProcess.ACCESS_KEY, SluiceProcess.SECRET_KEY));
            assertEquals(200, json.status(), json.body());
            List<String> bodies = sqs.receiveMessage(b -> b.queueUrl(url).maxNumberOfMessages(10)).messages().stream()
                    .map(Message::body).sorted().toList();
            assertEquals(List.of("via json path", "via query path"), bodies);
        }
    }

    @Test
    void pipelinedRequestsAreAnsweredInOrder() throws Exception {
        try (SluiceProcess server = SluiceProcess.start("pipeline"); SqsClient sqs = SqsClients.client(server.endpoint())) {
            String url = sqs.createQueue(b -> b.queueName("piped")).queueUrl();
            byte[] slow = RawHttp.build(server.port(), "POST", "/", Map.of("Content-Type", "application/x-amz-json-1.0",
                    "X-Amz-Target", "AmazonSQS.ReceiveMessage", "Connection", "keep-alive"),
                    ("{\"QueueUrl\":\"" + url + "\",\"WaitTimeSeconds\":1}").getBytes(StandardCharsets.UTF_8),
                    SluiceProcess.ACCESS_KEY, SluiceProcess.SECRET_KEY);
            byte[] fast = RawHttp.build(server.port(), "POST", "/", Map.of("Content-Type", "application/x-amz-json-1.0",
                    "X-Amz-Target", "AmazonSQS.GetQueueUrl"), "{\"QueueName\":\"piped\"}".getBytes(StandardCharsets.UTF_8),
                    SluiceProcess.ACCESS_KEY, SluiceProcess.SECRET_KEY);
            String first = new String(slow, StandardCharsets.UTF_8).replace("Connection: close\r\n", "");
            try (Socket s = new Socket("127.0.0.1", server.port())) {
                s.setSoTimeout(10_000);
                s.getOutputStream().write(first.getBytes(StandardCharsets.UTF_8));
                s.getOutputStream().write(fast);
                s.getOutputStream().flush();
                String both = new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                int receive = both.indexOf("\r\n\r\n{}");
                int getUrl = both.indexOf("\"QueueUrl\"");
                assertTrue(receive > 0 && getUrl > receive, "the long poll's answer comes first:\n" + both);
            }
        }
    }

    @Test
    void shutdownAnswersParkedPollsAndTheMetricsCountedThem() throws Exception {
        SluiceProcess server = SluiceProcess.start("shutdown");
        try (SqsClient sqs = SqsClients.client(server.endpoint())) {
            String url = sqs.createQueue(b -> b.queueName("draining")).queueUrl();
            sqs.sendMessage(b -> b.queueUrl(url).messageBody("x"));
            String metrics = HttpClient.newHttpClient().send(ProcessFixtures.adminRequest(URI.create(server.adminEndpoint()
                    + "/metrics")).build(), HttpResponse.BodyHandlers.ofString()).body();
            assertTrue(metrics.contains("sqs_requests_seconds_count{action=\"SendMessage\",outcome=\"ok\"")
                    || metrics.contains("sqs_requests_seconds_count{action=\"SendMessage\""), metrics);
            assertTrue(metrics.contains("sqs_usage_requests_total{access_key=\"" + SluiceProcess.ACCESS_KEY + "\""), metrics);

            String empty = sqs.createQueue(b -> b.queueName("empty")).queueUrl();
            long start = System.nanoTime();
            CompletableFuture<Boolean> parked = CompletableFuture.supplyAsync(
                    () -> sqs.receiveMessage(b -> b.queueUrl(empty).waitTimeSeconds(20)).hasMessages());
            server.awaitParkedPolls(1);
            server.stop();
            assertFalse(parked.join(), "answered empty, not cut off");
            long millis = (System.nanoTime() - start) / 1_000_000;
            assertTrue(millis < 10_000, "answered at shutdown, not after the 20 s wait: " + millis + " ms");
        } finally {
            server.stop();
        }
    }
}
