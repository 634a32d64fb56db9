package io.sluice.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.testing.Ports;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.Message;

/**
 * {@code sluice dev} with {@code sluice.tls.cert-file}/{@code key-file}: the SQS and admin ports speak HTTPS only,
 * queue URLs start with https://, and real clients work when handed the server's CA (a throwaway one from
 * deploy/tls/make-certs.sh) — the AWS SDK for Java (JSON protocol) and boto3 (Query protocol) — and fail without it.
 */
class HttpsIT {
    private static Process server;
    private static Path dir;
    private static Path ca;
    private static int port;
    private static int adminPort;

    @BeforeAll
    static void start() throws Exception {
        dir = Files.createTempDirectory(SluiceProcess.itDir(), "https-");
        Path tls = dir.resolve("tls");
        Process make = new ProcessBuilder("bash", ClusterScriptIT.SCRIPT.resolveSibling("../tls/make-certs.sh")
                .normalize().toString(), tls.toString(), "server=IP:127.0.0.1,DNS:localhost").redirectErrorStream(true)
                .start();
        String made = new String(make.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(make.waitFor(60, TimeUnit.SECONDS) && make.exitValue() == 0, "make-certs.sh: " + made);
        ca = tls.resolve("ca.pem");
        port = Ports.free();
        adminPort = Ports.free();
        server = ProcessFixtures.launch(List.of("-Xmx256m", "-XX:+UseSerialGC"), List.of("dev",
                        "--port", Integer.toString(port), "--admin-port", Integer.toString(adminPort),
                        "--data-dir", dir.resolve("data").toString(),
                        "--access-key", SluiceProcess.ACCESS_KEY, "--secret-key", SluiceProcess.SECRET_KEY),
                dir.resolve("server.log"), Map.of("SLUICE_TLS_CERT_FILE", tls.resolve("server.pem").toString(),
                        "SLUICE_TLS_KEY_FILE", tls.resolve("server-key.pem").toString(),
                        "SLUICE_METADATA_PORT", Integer.toString(Ports.free())));
        HttpClient https = HttpClient.newBuilder().sslContext(trusting(ca)).build();
        await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(200)).until(() -> {
            if (!server.isAlive()) {
                throw new IllegalStateException("sluice dev exited; see " + dir.resolve("server.log"));
            }
            try {
                return https.send(HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + adminPort + "/health"))
                        .build(), HttpResponse.BodyHandlers.ofString()).statusCode() == 200;
            } catch (IOException e) {
                return false;
            }
        });
    }

    @AfterAll
    static void stop() throws InterruptedException {
        ProcessFixtures.stop(server);
    }

    @Test
    void theJavaSdkWorksWithTheCaAndHttpsQueueUrls() throws Exception {
        try (SqsClient sqs = client(trustManagers(ca))) {
            String url = sqs.createQueue(b -> b.queueName("over-tls")).queueUrl();
            assertEquals("https://127.0.0.1:" + port + "/000000000000/over-tls", url);
            sqs.sendMessage(b -> b.queueUrl(url).messageBody("sealed"));
            List<Message> got = sqs.receiveMessage(b -> b.queueUrl(url).waitTimeSeconds(5)).messages();
            assertEquals(List.of("sealed"), got.stream().map(Message::body).toList());
        }
    }

    @Test
    void aClientWithoutTheCaRefusesTheServer() {
        try (SqsClient sqs = client((TrustManager[]) null)) { // the JVM's default trust store: no throwaway CA
            SdkClientException e = assertThrows(SdkClientException.class, () -> sqs.listQueues());
            assertTrue(causes(e).contains("SSLHandshakeException"), causes(e));
        }
    }

    @Test
    void plainHttpIsNotServedOnEitherPort() {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        for (int p : List.of(port, adminPort)) {
            assertThrows(IOException.class, () -> http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + p
                    + "/health")).timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString()),
                    "plain HTTP on port " + p);
        }
    }

    @Test
    void theAdminPortSpeaksHttps() throws Exception {
        HttpClient https = HttpClient.newBuilder().sslContext(trusting(ca)).build();
        HttpResponse<String> metrics = https.send(ProcessFixtures.adminRequest(URI.create("https://127.0.0.1:" + adminPort
                + "/metrics")).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, metrics.statusCode());
        assertTrue(metrics.body().contains("sqs_http_connections_open"), "a Prometheus scrape");
    }

    /** Over HTTPS the console's cookies are Secure as well as HttpOnly and SameSite=Strict, and the session works. */
    @Test
    void theConsoleSetsSecureCookiesOverHttps() throws Exception {
        HttpClient https = HttpClient.newBuilder().sslContext(trusting(ca)).followRedirects(HttpClient.Redirect.NEVER)
                .build();
        String base = "https://127.0.0.1:" + adminPort;
        HttpResponse<String> page = https.send(HttpRequest.newBuilder(URI.create(base + "/console/login")).build(),
                HttpResponse.BodyHandlers.ofString());
        String loginCookie = page.headers().allValues("set-cookie").stream()
                .filter(c -> c.startsWith("sluice_console_login=")).findFirst().orElseThrow();
        assertTrue(loginCookie.contains("; Secure"), loginCookie);
        String form = "csrf=" + ConsoleSession.csrf(page.body()) + "&access_key=" + SluiceProcess.ACCESS_KEY
                + "&secret_key=" + SluiceProcess.SECRET_KEY;
        HttpResponse<String> signedIn = https.send(HttpRequest.newBuilder(URI.create(base + "/console/login"))
                .header("Content-Type", "application/x-www-form-urlencoded")
                .header("Cookie", loginCookie.substring(0, loginCookie.indexOf(';')))
                .POST(HttpRequest.BodyPublishers.ofString(form)).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(303, signedIn.statusCode(), signedIn.body());
        String session = signedIn.headers().allValues("set-cookie").stream()
                .filter(c -> c.startsWith("sluice_console=")).findFirst().orElseThrow();
        for (String attribute : List.of("; Secure", "; HttpOnly", "; SameSite=Strict", "; Path=/console")) {
            assertTrue(session.contains(attribute), attribute + " in " + session);
        }
        HttpResponse<String> queues = https.send(HttpRequest.newBuilder(URI.create(base + "/console/queues"))
                .header("Cookie", session.substring(0, session.indexOf(';'))).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, queues.statusCode(), "the session works over HTTPS");
    }

    @Test
    void boto3WorksWithTheCaBundle() throws Exception {
        Path python = Path.of("/usr/bin/python3");
        org.junit.jupiter.api.Assumptions.assumeTrue(Files.isExecutable(python)
                || System.getenv("SLUICE_REQUIRE_TOOLS") != null, "python3-boto3 not installed");
        String script = String.join("\n",
                "import boto3, os, sys",
                "sqs = boto3.client('sqs', endpoint_url=os.environ['ENDPOINT'], verify=os.environ['CA'],",
                "                   region_name='us-east-1')",
                "url = sqs.create_queue(QueueName='boto-over-tls')['QueueUrl']",
                "assert url.startswith('https://'), url",
                "sqs.send_message(QueueUrl=url, MessageBody='via boto3')",
                "m = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=5)['Messages']",
                "assert [x['Body'] for x in m] == ['via boto3'], m",
                "try:",
                "    boto3.client('sqs', endpoint_url=os.environ['ENDPOINT'], region_name='us-east-1').list_queues()",
                "    sys.exit('trusted a server whose CA it was not given')",
                "except Exception as e:",
                "    assert 'SSL' in type(e).__name__ or 'certificate' in str(e), repr(e)",
                "print('ok')");
        ProcessBuilder pb = new ProcessBuilder(python.toString(), "-c", script).redirectErrorStream(true);
        pb.environment().putAll(Map.of("ENDPOINT", "https://127.0.0.1:" + port, "CA", ca.toString(),
                "AWS_ACCESS_KEY_ID", SluiceProcess.ACCESS_KEY, "AWS_SECRET_ACCESS_KEY", SluiceProcess.SECRET_KEY));
        pb.environment().remove("AWS_CA_BUNDLE");
        pb.environment().remove("REQUESTS_CA_BUNDLE");
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), "boto3 timed out: " + out);
        assertEquals(0, p.exitValue(), out);
        assertTrue(out.contains("ok"), out);
    }

    /** An SDK client of the HTTPS endpoint trusting {@code trust}, or the JVM's default trust store if null. */
    private static SqsClient client(TrustManager[] trust) {
        UrlConnectionHttpClient.Builder http = UrlConnectionHttpClient.builder().socketTimeout(Duration.ofSeconds(30));
        if (trust != null) {
            http.tlsTrustManagersProvider(() -> trust);
        }
        return SqsClient.builder().endpointOverride(URI.create("https://127.0.0.1:" + port)).region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(
                        SluiceProcess.ACCESS_KEY, SluiceProcess.SECRET_KEY)))
                .httpClient(http.build())
                .overrideConfiguration(o -> o.retryStrategy(b -> b.maxAttempts(1)))
                .build();
    }

    private static String causes(Throwable e) {
        StringBuilder sb = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause()) {
            sb.append(t.getClass().getSimpleName()).append(": ").append(t.getMessage()).append(" | ");
        }
        return sb.toString();
    }

    private static TrustManager[] trustManagers(Path caFile) throws Exception {
        KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
        store.load(null, null);
        try (InputStream in = Files.newInputStream(caFile)) {
            store.setCertificateEntry("ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(store);
        return tmf.getTrustManagers();
    }

    private static SSLContext trusting(Path caFile) throws Exception {
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(null, trustManagers(caFile), null);
        return ctx;
    }
}
