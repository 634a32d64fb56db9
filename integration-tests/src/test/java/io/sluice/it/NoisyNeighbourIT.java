package io.sluice.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchRequestEntry;
import software.amazon.awssdk.services.sqs.model.SqsException;

/**
 * One queue flooded on the same shard as another: with the flooding key rate limited, the neighbour's send latency
 * stays within {@link #NEIGHBOUR_P99_BOUND_MILLIS}. The same flood from an unlimited key is measured first and
 * printed, to show what the limit buys (not asserted: it depends on the machine).
 */
class NoisyNeighbourIT {
    /** The stated bound: the quiet queue's send p99 while its neighbour is flooded through a limited key. */
    static final long NEIGHBOUR_P99_BOUND_MILLIS = 100;
    static final int FLOODERS = 8;
    static final int NOISY_RATE = 100;
    static final long PHASE_MILLIS = 8_000;

    static SluiceProcess server;

    @BeforeAll
    static void start() throws Exception {
        Path keys = Files.createTempFile(SluiceProcess.itDir(), "keys", ".json");
        Files.writeString(keys, "{\"keys\": [{\"accessKey\": \"noisy\", \"secretKey\": \"n\", \"admin\": true},"
                + " {\"accessKey\": \"greedy\", \"secretKey\": \"g\", \"admin\": true},"
                + " {\"accessKey\": \"quiet\", \"secretKey\": \"q\", \"admin\": true}]}");
        server = SluiceProcess.start("noisy", Map.of("SLUICE_AUTH_KEYS_FILE", keys.toString(),
                "SLUICE_FRONTEND_KEY_RATE_LIMITS", "noisy=" + NOISY_RATE, "SLUICE_ACCESS_LOG_LEVEL", "OFF"));
    }

    @AfterAll
    static void stop() throws Exception {
        server.stop();
    }

    @Test
    void aFloodedQueueDoesNotStarveItsNeighbour() throws Exception {
        try (SqsClient admin = SqsClients.client(server.endpoint())) {
            admin.createQueue(b -> b.queueName("flood"));
            admin.createQueue(b -> b.queueName("calm"));
        }
        String flood = server.endpoint() + "/000000000000/flood";
        String calm = server.endpoint() + "/000000000000/calm";

        Phase greedy = run("greedy", "g", flood, calm);
        System.out.printf("noisy neighbour, unlimited flood: calm send p50 %.1f ms p99 %.1f ms max %.1f ms;"
                        + " flood %d requests accepted, %d throttled%n", greedy.p(50), greedy.p(99), greedy.max(),
                greedy.accepted, greedy.throttled);
        Phase noisy = run("noisy", "n", flood, calm);
        System.out.printf("noisy neighbour, flood limited to %d req/s: calm send p50 %.1f ms p99 %.1f ms max %.1f ms;"
                        + " flood %d requests accepted, %d throttled%n", NOISY_RATE, noisy.p(50), noisy.p(99),
                noisy.max(), noisy.accepted, noisy.throttled);

        assertTrue(noisy.throttled > 0, "the flood was throttled");
        long allowed = NOISY_RATE * (PHASE_MILLIS / 1000 + 2) + NOISY_RATE; // rate over the phase, plus one burst
        assertTrue(noisy.accepted <= allowed, "flood accepted " + noisy.accepted + " > " + allowed);
        assertEquals(0, noisy.calmErrors, "the neighbour's sends all succeeded");
        assertTrue(noisy.latencies.getTotalCount() > 100, "the neighbour kept sending");
        assertTrue(noisy.p(99) <= NEIGHBOUR_P99_BOUND_MILLIS, "calm queue send p99 " + noisy.p(99) + " ms > "
                + NEIGHBOUR_P99_BOUND_MILLIS + " ms while its neighbour was flooded");
        PromScrape m = PromScrape.of(server.adminEndpoint());
        assertEquals(noisy.throttled, m.sum("sluice_queue_throttled_total", "queue", "flood", "reason", "rate"),
                "every refusal is counted");
    }

    /** Floods {@code flood} through the key for one phase while a quiet key sends to {@code calm} every 10 ms. */
    private static Phase run(String key, String secret, String flood, String calm) throws Exception {
        Phase phase = new Phase();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong accepted = new AtomicLong();
        AtomicLong throttled = new AtomicLong();
        List<Thread> flooders = new ArrayList<>();
        List<SqsClient> clients = new ArrayList<>();
        for (int t = 0; t < FLOODERS; t++) {
            SqsClient c = SqsClients.client(server.endpoint(), key, secret, false);
            clients.add(c);
            Thread th = new Thread(() -> {
                List<SendMessageBatchRequestEntry> batch = new ArrayList<>();
                for (int i = 0; i < 10; i++) {
                    batch.add(SendMessageBatchRequestEntry.builder().id("e" + i).messageBody("x".repeat(512)).build());
                }
                while (!stop.get()) {
                    try {
                        c.sendMessageBatch(b -> b.queueUrl(flood).entries(batch));
                        accepted.incrementAndGet();
                    } catch (SqsException e) {
                        throttled.incrementAndGet();
                    }
                }
            }, "flood-" + t);
            th.start();
            flooders.add(th);
        }
        try (SqsClient quiet = SqsClients.client(server.endpoint(), "quiet", "q", false)) {
            await().atMost(Duration.ofSeconds(120)).until(() -> accepted.get() + throttled.get() > FLOODERS); // flood on
            long end = System.currentTimeMillis() + PHASE_MILLIS;
            while (System.currentTimeMillis() < end) {
                long start = System.nanoTime();
                try {
                    quiet.sendMessage(b -> b.queueUrl(calm).messageBody("calm"));
                    phase.latencies.recordValue(Math.max(1, (System.nanoTime() - start) / 1000));
                } catch (SqsException e) {
                    phase.calmErrors++;
                }
                Thread.sleep(10); // the quiet key's pace: one send every ~10 ms
            }
        } finally {
            stop.set(true);
            for (Thread th : flooders) {
                th.join(TimeUnit.SECONDS.toMillis(30));
            }
            clients.forEach(SqsClient::close);
        }
        phase.accepted = accepted.get();
        phase.throttled = throttled.get();
        return phase;
    }

    static final class Phase {
        final Histogram latencies = new Histogram(TimeUnit.SECONDS.toMicros(60), 3);
        long accepted;
        long throttled;
        int calmErrors;

        double p(double percentile) {
            return latencies.getValueAtPercentile(percentile) / 1000.0;
        }

        double max() {
            return latencies.getMaxValue() / 1000.0;
        }
    }
}
