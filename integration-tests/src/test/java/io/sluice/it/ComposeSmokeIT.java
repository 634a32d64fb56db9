package io.sluice.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.File;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.testcontainers.containers.ComposeContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.junit.jupiter.Testcontainers;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.Message;

/**
 * deploy/docker-compose.yml for real: builds the image from deploy/docker/Dockerfile, starts 3 metadata members,
 * 3 backends, 2 frontends, HAProxy and Prometheus, then sends, receives and deletes a message through the load
 * balancer with the AWS SDK, and checks that Prometheus scrapes all 8 Sluice processes.
 *
 * <p>Needs a Docker engine and the {@code docker compose} plugin; skipped without an engine (and without the
 * plugin, unless SLUICE_REQUIRE_TOOLS=1). The image build runs Maven inside Docker: allow it several minutes.
 */
@Testcontainers(disabledWithoutDocker = true)
class ComposeSmokeIT {
    private static final String ACCESS_KEY = "compose-smoke";
    private static final String SECRET_KEY = "compose-smoke-secret";

    private static ComposeContainer cluster;

    @BeforeAll
    @Timeout(value = 30, unit = TimeUnit.MINUTES)
    static void startCluster() throws Exception {
        assumeComposePlugin();
        File compose = DeployFiles.deploy("docker-compose.yml").toFile();
        // new ComposeContainer(File) runs the local `docker compose` (the build context is the repository root)
        cluster = new ComposeContainer(compose)
                .withBuild(true)
                .withEnv("SLUICE_ACCESS_KEY", ACCESS_KEY)
                .withEnv("SLUICE_SECRET_KEY", SECRET_KEY)
                .withEnv("SLUICE_SHARDS", "3")
                .withEnv("SLUICE_IMAGE", "sluice:compose-smoke")
                // the load balancer starts only once the whole cluster is healthy (depends_on in the file)
                .withExposedService("lb", 9324, Wait.forListeningPort())
                .withExposedService("prometheus", 9090, Wait.forHttp("/-/ready").forStatusCode(200))
                .withStartupTimeout(Duration.ofMinutes(25));
        cluster.start();
    }

    @AfterAll
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    static void stopCluster() {
        if (cluster != null) {
            cluster.stop(); // down -v: containers and volumes
        }
    }

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void sendReceiveDeleteThroughTheLoadBalancer() {
        URI endpoint = URI.create("http://" + cluster.getServiceHost("lb", 9324) + ":"
                + cluster.getServicePort("lb", 9324));
        try (SqsClient sqs = SqsClients.client(endpoint, ACCESS_KEY, SECRET_KEY)) {
            // the shards may still be forming right after start: CreateQueue is retried until it works
            String url = await().atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofSeconds(2))
                    .ignoreExceptionsInstanceOf(SdkException.class)
                    .until(() -> sqs.createQueue(b -> b.queueName("compose-smoke")).queueUrl(), u -> u != null);
            sqs.sendMessage(b -> b.queueUrl(url).messageBody("through haproxy"));
            List<Message> got = await().atMost(Duration.ofMinutes(1)).until(
                    () -> sqs.receiveMessage(b -> b.queueUrl(url).waitTimeSeconds(5)).messages(), m -> !m.isEmpty());
            assertEquals("through haproxy", got.get(0).body());
            sqs.deleteMessage(b -> b.queueUrl(url).receiptHandle(got.get(0).receiptHandle()));
            assertTrue(sqs.receiveMessage(b -> b.queueUrl(url).waitTimeSeconds(1).visibilityTimeout(0)).messages()
                    .isEmpty(), "deleted");
        }
    }

    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void prometheusScrapesAllEightNodes() {
        URI query = URI.create("http://" + cluster.getServiceHost("prometheus", 9090) + ":"
                + cluster.getServicePort("prometheus", 9090)
                + "/api/v1/query?query=count(up%7Bjob%3D~%22sluice-.*%22%7D%20%3D%3D%201)");
        HttpClient http = HttpClient.newHttpClient();
        await().atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofSeconds(5)).untilAsserted(() -> {
            String body = http.send(HttpRequest.newBuilder(query).build(), HttpResponse.BodyHandlers.ofString()).body();
            assertTrue(body.contains("\"8\""), "8 Sluice targets up: " + body);
        });
    }

    /** `docker compose` must exist besides the engine; without it skip, or fail where tools are required (CI). */
    private static void assumeComposePlugin() throws Exception {
        boolean present;
        try {
            Process p = new ProcessBuilder("docker", "compose", "version").redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            present = p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (java.io.IOException e) {
            present = false;
        }
        if (!present && "1".equals(System.getenv("SLUICE_REQUIRE_TOOLS"))) {
            fail("a Docker engine is there but not the `docker compose` plugin, and SLUICE_REQUIRE_TOOLS=1");
        }
        Assumptions.assumeTrue(present, "the `docker compose` plugin is not installed");
    }
}
