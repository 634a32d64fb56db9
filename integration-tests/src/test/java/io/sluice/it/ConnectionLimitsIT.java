package io.sluice.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.sqs.SqsClient;

/**
 * No client can hold the SQS port's resources before it is authenticated: a request that trickles in is cut off
 * after the read timeout, an idle connection is closed, connections past the cap are closed as they open, and a
 * parked long poll (silent for its whole wait) is not mistaken for an idle connection. The limits are configured
 * small (1 s read, 3 s idle, 8 connections) so the test is short; the durations asserted are those promises, with
 * generous upper bounds for a slow day.
 */
class ConnectionLimitsIT {
    static SluiceProcess server;

    @BeforeAll
    static void start() throws Exception {
        server = SluiceProcess.start("limits", Map.of("SLUICE_HTTP_REQUEST_READ_TIMEOUT_MS", "1000",
                "SLUICE_HTTP_IDLE_TIMEOUT_MS", "3000", "SLUICE_HTTP_MAX_CONNECTIONS", "8"));
    }

    @AfterAll
    static void stop() throws Exception {
        server.close();
    }

    @Test
    void aRequestThatTricklesInIsCutOff() throws Exception {
        try (Socket s = new Socket("127.0.0.1", server.port())) {
            OutputStream out = s.getOutputStream();
            out.write(("POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-amz-json-1.0\r\n"
                    + "Content-Length: 1000\r\n\r\n{\"QueueUrl\":").getBytes(StandardCharsets.US_ASCII));
            out.flush(); // headers and part of the body, then nothing
            long closed = RawHttp.millisUntilClosed(s, 30_000);
            assertTrue(closed < 30_000, "the half-sent request still holds its connection after 30 s");
        }
    }

    @Test
    void aConnectionThatSendsNothingIsCutOff() throws Exception {
        try (Socket silent = new Socket("127.0.0.1", server.port())) {
            assertTrue(RawHttp.millisUntilClosed(silent, 30_000) < 30_000, "a silent connection is still open after 30 s");
        }
    }

    @Test
    void anIdleConnectionIsClosedButAParkedLongPollIsNot() throws Exception {
        byte[] listQueues = new String(RawHttp.build(server.port(), "POST", "/", Map.of("Content-Type",
                "application/x-amz-json-1.0", "X-Amz-Target", "AmazonSQS.ListQueues"), "{}".getBytes(
                StandardCharsets.UTF_8), SluiceProcess.ACCESS_KEY, SluiceProcess.SECRET_KEY), StandardCharsets.ISO_8859_1)
                .replace("Connection: close\r\n", "Connection: keep-alive\r\n").getBytes(StandardCharsets.ISO_8859_1);
        try (Socket idle = new Socket("127.0.0.1", server.port())) {
            idle.getOutputStream().write(listQueues); // answered, then kept alive with nothing in flight
            idle.getOutputStream().flush();
            long closed = RawHttp.millisUntilClosed(idle, 30_000);
            assertTrue(closed < 30_000, "an idle connection is still open after 30 s");
            assertTrue(closed >= 2_000, "closed after " + closed + " ms: the idle timeout is 3 s");
        }
        try (SqsClient sqs = SqsClients.client(server.endpoint())) {
            String url = sqs.createQueue(b -> b.queueName("parked-long")).queueUrl();
            long start = System.nanoTime();
            // silent for 6 s: twice the idle timeout; answered empty at the end of its wait, not cut off
            assertTrue(sqs.receiveMessage(b -> b.queueUrl(url).waitTimeSeconds(6)).messages().isEmpty());
            assertTrue(Duration.ofNanos(System.nanoTime() - start).toMillis() >= 5_900, "waited its whole wait");
        }
    }

    @Test
    void connectionsPastTheCapAreClosed() throws Exception {
        String url;
        try (SqsClient sqs = SqsClients.client(server.endpoint())) {
            url = sqs.createQueue(b -> b.queueName("capped")).queueUrl();
        }
        // the other tests' connections are gone (the server counts a connection until it has seen it close)
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(120)).until(() ->
                PromScrape.of(server.adminEndpoint()).sum("sqs_http_connections_open") == 0);
        // eight legitimate connections, each a parked long poll (neither idle nor half-sent)
        byte[] poll = RawHttp.build(server.port(), "POST", "/", Map.of("Content-Type", "application/x-amz-json-1.0",
                "X-Amz-Target", "AmazonSQS.ReceiveMessage"), ("{\"QueueUrl\":\"" + url + "\",\"WaitTimeSeconds\":20}")
                .getBytes(StandardCharsets.UTF_8), SluiceProcess.ACCESS_KEY, SluiceProcess.SECRET_KEY);
        List<Socket> held = new ArrayList<>();
        try {
            for (int i = 0; i < 8; i++) {
                Socket s = new Socket("127.0.0.1", server.port());
                held.add(s);
                s.getOutputStream().write(poll);
                s.getOutputStream().flush();
            }
            server.awaitParkedPolls(8);
            try (Socket extra = new Socket("127.0.0.1", server.port())) {
                long closed = RawHttp.millisUntilClosed(extra, 5_000);
                assertTrue(closed < 5_000, "a ninth connection was kept open");
            }
        } finally {
            for (Socket s : held) {
                s.close();
            }
        }
        // the cap counts open connections: once they closed, clients are served again
        try (SqsClient sqs = SqsClients.client(server.endpoint())) {
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(60)).ignoreExceptions()
                    .until(() -> sqs.listQueues() != null);
            assertEquals(200, sqs.listQueues().sdkHttpResponse().statusCode());
        }
    }

    @Test
    void metricLabelsNeverTakeRawClientInput() throws Exception {
        for (String[] c : new String[][] {{"application/x-amz-json-1.0", "AmazonSQS.Bogus7Action", "{not json"},
            {"application/x-www-form-urlencoded", null, "Action=Bogus8Action&Attribute.1.Name=%ZZ"}}) {
            Map<String, String> headers = new java.util.HashMap<>(Map.of("Content-Type", c[0]));
            if (c[1] != null) {
                headers.put("X-Amz-Target", c[1]);
            }
            RawHttp.Response r = RawHttp.exchange(server.port(), RawHttp.build(server.port(), "POST", "/", headers,
                    c[2].getBytes(StandardCharsets.UTF_8), SluiceProcess.ACCESS_KEY, SluiceProcess.SECRET_KEY));
            assertTrue(r.status() >= 400 && r.status() < 500, r.status() + " " + r.body());
        }
        PromScrape m = PromScrape.of(server.adminEndpoint());
        assertTrue(m.find("sqs_requests_seconds_count").stream().map(s -> s.labels().get("action"))
                .noneMatch(a -> a.startsWith("Bogus")), "a client-chosen action name became a label value");
        assertTrue(m.sum("sqs_requests_seconds_count", "action", "unknown") >= 2, "counted as unknown");
    }
}
