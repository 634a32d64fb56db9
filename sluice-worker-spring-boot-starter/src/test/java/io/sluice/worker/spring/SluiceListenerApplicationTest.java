package io.sluice.worker.spring;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.sluice.testing.Ports;
import io.sluice.worker.MessageContext;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.health.contributor.Status;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.stereotype.Component;
import software.amazon.awssdk.services.sqs.SqsAsyncClient;

/**
 * The starter in a real application context against a real {@code sluice dev} (the launcher jar, started here):
 * {@code @SluiceListener} methods with a String, a MessageContext and a batch parameter receive what is sent, settings
 * come from properties and the annotation, metrics land on the application's MeterRegistry, the health indicator
 * names each queue, and closing the context stops the workers gracefully (nothing left invisible).
 */
class SluiceListenerApplicationTest {
    private static Process server;
    private static int port;
    private static Path data;

    @BeforeAll
    static void startSluice() throws Exception {
        String jar = System.getProperty("sluice.jar");
        assertTrue(jar != null && Files.exists(Path.of(jar)), "the launcher jar is built first: " + jar);
        port = Ports.free();
        int admin = Ports.free();
        data = Files.createTempDirectory("sluice-starter");
        ProcessBuilder launch = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m", "-jar", jar, "dev", "--port", Integer.toString(port), "--admin-port",
                Integer.toString(admin), "--data-dir", data.resolve("data").toString())
                .redirectErrorStream(true).redirectOutput(data.resolve("server.log").toFile());
        launch.environment().put("SLUICE_METADATA_PORT", Integer.toString(Ports.free())); // not the default 9326
        server = launch.start();
        HttpClient http = HttpClient.newHttpClient();
        await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(200)).until(() -> {
            assertTrue(server.isAlive(), "sluice dev exited; see " + data.resolve("server.log"));
            try {
                return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + admin + "/ready")).build(),
                        HttpResponse.BodyHandlers.ofString()).statusCode() == 200;
            } catch (IOException e) {
                return false;
            }
        });
    }

    @AfterAll
    static void stopSluice() throws Exception {
        if (server != null) {
            server.destroy();
            if (!server.waitFor(30, TimeUnit.SECONDS)) {
                server.destroyForcibly();
            }
        }
    }


    static final Set<String> BODIES = ConcurrentHashMap.newKeySet();
    static final Map<String, String> GROUPS = new ConcurrentHashMap<>();
    static final Set<Integer> BATCH_SIZES = ConcurrentHashMap.newKeySet();

    @SpringBootApplication
    static class App {
        @Bean
        MeterRegistry meterRegistry() {
            return new SimpleMeterRegistry();
        }
    }

    @Component
    static class Listeners {
        @SluiceListener(queue = "${test.queue}", concurrency = 4)
        void bodies(String body) {
            BODIES.add(body);
        }

        @SluiceListener(queue = "starter-orders.fifo", waitTimeSeconds = 1)
        void orders(MessageContext context) {
            GROUPS.put(context.body(), context.messageGroupId().orElseThrow());
        }

        @SluiceListener(queue = "starter-batch", waitTimeSeconds = 1)
        void batch(List<MessageContext> batch) {
            BATCH_SIZES.add(batch.size());
        }
    }

    @Test
    void listenersRunInTheApplicationContext() throws Exception {
        ConfigurableApplicationContext context = new SpringApplicationBuilder(App.class, Listeners.class).properties(
                "sluice.worker.endpoint=http://127.0.0.1:" + port, "sluice.worker.access-key=sluice",
                "sluice.worker.secret-key=sluice-dev-secret", "sluice.worker.wait-time=1s",
                "sluice.worker.create-missing-queues=true", "test.queue=starter-bodies").run();
        SluiceWorkerHealthIndicator health = context.getBean(SluiceWorkerHealthIndicator.class);
        try {
            SqsAsyncClient sqs = context.getBean(SqsAsyncClient.class);
            String bodies = sqs.getQueueUrl(r -> r.queueName("starter-bodies")).get().queueUrl();
            String orders = sqs.getQueueUrl(r -> r.queueName("starter-orders.fifo")).get().queueUrl();
            String batch = sqs.getQueueUrl(r -> r.queueName("starter-batch")).get().queueUrl();
            for (int i = 0; i < 20; i++) {
                int n = i;
                sqs.sendMessage(r -> r.queueUrl(bodies).messageBody("body-" + n)).get();
                sqs.sendMessage(r -> r.queueUrl(orders).messageBody("order-" + n).messageGroupId("customer-" + n % 3))
                        .get();
                sqs.sendMessage(r -> r.queueUrl(batch).messageBody("item-" + n)).get();
            }
            await().atMost(Duration.ofSeconds(60)).until(() -> BODIES.size() == 20 && GROUPS.size() == 20);
            await().atMost(Duration.ofSeconds(60)).until(() -> context.getBean(MeterRegistry.class)
                    .find("sluice.worker.processed").tag("queue", "starter-batch").counter().count() == 20);
            assertEquals("customer-2", GROUPS.get("order-5"));
            assertEquals(20.0, context.getBean(MeterRegistry.class).find("sluice.worker.processed")
                    .tag("queue", "starter-bodies").counter().count(), "metrics on the application's registry");
            assertEquals(Status.UP, health.health().getStatus());
            assertTrue(health.health().getDetails().toString().contains("starter-orders.fifo"),
                    health.health().getDetails().toString());
            assertEquals(3, context.getBean(SluiceListenerRegistry.class).workers().size());
            assertTrue(keepAlive().isPresent(), "a non-daemon thread keeps an application without a web server up");
        } finally {
            context.close();
        }
        assertEquals(Status.DOWN, health.health().getStatus(), "stopped with the context");
        await().atMost(Duration.ofSeconds(10)).until(() -> keepAlive().isEmpty());
    }

    private static java.util.Optional<Thread> keepAlive() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().equals("sluice-worker-keepalive") && !t.isDaemon() && t.isAlive()).findFirst();
    }
}
