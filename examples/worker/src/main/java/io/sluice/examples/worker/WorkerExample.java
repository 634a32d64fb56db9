package io.sluice.examples.worker;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.sluice.worker.Backoff;
import io.sluice.worker.SluiceWorker;
import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.IntStream;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsAsyncClient;
import software.amazon.awssdk.services.sqs.model.MessageAttributeValue;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchRequestEntry;

/**
 * A worker on a running {@code sluice dev} (or any SQS endpoint): creates queue {@code worker-example}, sends 200
 * messages, and handles them with 8 handlers that take 50-250 ms and fail one time in ten (those back off and come
 * back), printing the worker's metrics each second until every message is handled. Each message carries a W3C
 * {@code traceparent} attribute, as a traced producer sets it: with OpenTelemetry on the worker's class path, each
 * handler run is a span in that trace (docs/worker.md, Tracing).
 *
 * <p>Usage: {@code WorkerExample [ENDPOINT (default http://localhost:9324)]}; credentials from SLUICE_ACCESS_KEY and
 * SLUICE_SECRET_KEY, default {@code sluice} / {@code sluice-dev-secret} (those of {@code sluice dev}).
 */
public final class WorkerExample {
    private WorkerExample() {
    }

    /**
     * A W3C trace context for a message (version 00, a random trace and span id, sampled): what a producer instrumented
     * with OpenTelemetry writes, e.g. {@code W3CTraceContextPropagator.getInstance().inject(Context.current(), ...)}.
     */
    static MessageAttributeValue traceparent() {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        String value = String.format("00-%016x%016x-%016x-01", r.nextLong() | 1, r.nextLong(), r.nextLong() | 1);
        return MessageAttributeValue.builder().dataType("String")
                .stringValue(value).build();
    }

    public static void main(String[] args) throws Exception {
        URI endpoint = URI.create(args.length > 0 ? args[0] : "http://localhost:9324");
        String accessKey = System.getenv().getOrDefault("SLUICE_ACCESS_KEY", "sluice");
        String secretKey = System.getenv().getOrDefault("SLUICE_SECRET_KEY", "sluice-dev-secret");
        try (SqsAsyncClient sqs = SqsAsyncClient.builder().endpointOverride(endpoint).region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(accessKey, secretKey)))
                .build()) {
            String url = sqs.createQueue(b -> b.queueName("worker-example")
                    .attributesWithStrings(Map.of("VisibilityTimeout", "10"))).get().queueUrl();
            for (int batch = 0; batch < 20; batch++) {
                int from = batch * 10;
                sqs.sendMessageBatch(b -> b.queueUrl(url).entries(IntStream.range(from, from + 10)
                        .mapToObj(i -> SendMessageBatchRequestEntry.builder()
                                .id("m" + i).messageBody("job " + i).messageAttributes(Map.of("traceparent",
                                        traceparent())).build()).toList())).get();
            }
            SimpleMeterRegistry metrics = new SimpleMeterRegistry();
            try (SluiceWorker worker = SluiceWorker.builder(sqs, url, message -> {
                Thread.sleep(ThreadLocalRandom.current().nextLong(50, 250));
                if (ThreadLocalRandom.current().nextInt(10) == 0) {
                    throw new IllegalStateException("downstream hiccup on " + message.body());
                }
            }).concurrency(8).visibilityTimeout(Duration.ofSeconds(10)).waitTime(Duration.ofSeconds(2))
                    .backoff(new Backoff(Duration.ofSeconds(1), 2, Duration.ofSeconds(8)))
                    .meterRegistry(metrics).build().start()) {
                for (int second = 0; second < 120; second++) {
                    double processed = metrics.get("sluice.worker.processed").counter().count();
                    System.out.printf("processed %.0f, failed %.0f (backed off), extended %.0f, in flight %d,"
                                    + " breaker %s%n", processed, metrics.get("sluice.worker.failed").counter().count(),
                            metrics.get("sluice.worker.extended").counter().count(), worker.inFlight(),
                            worker.circuitBreaker().getState());
                    if (processed >= 200) {
                        break;
                    }
                    Thread.sleep(1000);
                }
            }
        }
    }
}
