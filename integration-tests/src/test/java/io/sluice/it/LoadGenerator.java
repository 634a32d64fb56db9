package io.sluice.it;

import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.Recorder;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.DeleteMessageBatchRequestEntry;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchRequestEntry;

/**
 * End-to-end load: producers send batches, consumers long-poll, receive batches and delete them, all through the
 * AWS SDK for Java v2 against a running server. Bounded in time; prints messages per second and request latency
 * percentiles. Run with {@code scripts/load-e2e.sh} (which starts {@code sluice dev} on loopback).
 *
 * <p>Arguments: endpoint, seconds, producers, consumers, batch size (1-10), body bytes.
 */
public final class LoadGenerator {
    public static void main(String[] args) throws Exception {
        URI endpoint = URI.create(args.length > 0 ? args[0] : "http://127.0.0.1:9324");
        int seconds = args.length > 1 ? Integer.parseInt(args[1]) : 20;
        int producers = args.length > 2 ? Integer.parseInt(args[2]) : 4;
        int consumers = args.length > 3 ? Integer.parseInt(args[3]) : 4;
        int batch = args.length > 4 ? Integer.parseInt(args[4]) : 10;
        int bodyBytes = args.length > 5 ? Integer.parseInt(args[5]) : 1024;
        String accessKey = System.getenv().getOrDefault("AWS_ACCESS_KEY_ID", "sluice");
        String secretKey = System.getenv().getOrDefault("AWS_SECRET_ACCESS_KEY", "sluice-dev-secret");

        SqsClient admin = SqsClients.client(endpoint, accessKey, secretKey);
        String url = admin.createQueue(b -> b.queueName("load-" + System.currentTimeMillis())).queueUrl();
        String body = "x".repeat(bodyBytes);
        Recorder sendLatency = new Recorder(3);
        Recorder receiveLatency = new Recorder(3);
        Recorder deleteLatency = new Recorder(3);
        AtomicLong sent = new AtomicLong();
        AtomicLong received = new AtomicLong();
        AtomicLong errors = new AtomicLong();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);

        ExecutorService pool = Executors.newFixedThreadPool(producers + consumers);
        List<SqsClient> clients = new ArrayList<>();
        for (int p = 0; p < producers; p++) {
            SqsClient c = SqsClients.client(endpoint, accessKey, secretKey);
            clients.add(c);
            pool.execute(() -> {
                List<SendMessageBatchRequestEntry> entries = new ArrayList<>();
                for (int i = 0; i < batch; i++) {
                    entries.add(SendMessageBatchRequestEntry.builder().id("e" + i).messageBody(body).build());
                }
                while (System.nanoTime() < deadline) {
                    long t0 = System.nanoTime();
                    try {
                        int ok = c.sendMessageBatch(b -> b.queueUrl(url).entries(entries)).successful().size();
                        sent.addAndGet(ok);
                        sendLatency.recordValue((System.nanoTime() - t0) / 1000);
                    } catch (RuntimeException e) {
                        errors.incrementAndGet();
                    }
                }
            });
        }
        for (int k = 0; k < consumers; k++) {
            SqsClient c = SqsClients.client(endpoint, accessKey, secretKey);
            clients.add(c);
            pool.execute(() -> {
                while (System.nanoTime() < deadline) {
                    try {
                        long t0 = System.nanoTime();
                        List<Message> got = c.receiveMessage(b -> b.queueUrl(url).maxNumberOfMessages(batch)
                                .waitTimeSeconds(1)).messages();
                        receiveLatency.recordValue((System.nanoTime() - t0) / 1000);
                        if (got.isEmpty()) {
                            continue;
                        }
                        long t1 = System.nanoTime();
                        List<DeleteMessageBatchRequestEntry> del = new ArrayList<>();
                        for (int i = 0; i < got.size(); i++) {
                            del.add(DeleteMessageBatchRequestEntry.builder().id("d" + i)
                                    .receiptHandle(got.get(i).receiptHandle()).build());
                        }
                        c.deleteMessageBatch(b -> b.queueUrl(url).entries(del));
                        deleteLatency.recordValue((System.nanoTime() - t1) / 1000);
                        received.addAndGet(got.size());
                    } catch (RuntimeException e) {
                        errors.incrementAndGet();
                    }
                }
            });
        }
        pool.shutdown();
        pool.awaitTermination(seconds + 60L, TimeUnit.SECONDS);
        clients.forEach(SqsClient::close);
        admin.deleteQueue(b -> b.queueUrl(url));
        admin.close();

        System.out.printf("end-to-end load: %d s, %d producers, %d consumers, batch %d, %d-byte bodies%n", seconds,
                producers, consumers, batch, bodyBytes);
        System.out.printf("  sent     %,10d msgs  %,8.0f msg/s%n", sent.get(), sent.get() / (double) seconds);
        System.out.printf("  received %,10d msgs  %,8.0f msg/s (deleted after receipt)%n", received.get(),
                received.get() / (double) seconds);
        System.out.printf("  errors   %d%n", errors.get());
        print("SendMessageBatch", sendLatency);
        print("ReceiveMessage (long poll, 1 s)", receiveLatency);
        print("DeleteMessageBatch", deleteLatency);
    }

    private static void print(String name, Recorder recorder) {
        var h = recorder.getIntervalHistogram();
        System.out.printf("  %-32s n=%,d  p50=%.2f ms  p99=%.2f ms  p99.9=%.2f ms  max=%.2f ms%n", name,
                h.getTotalCount(), h.getValueAtPercentile(50) / 1000.0, h.getValueAtPercentile(99) / 1000.0,
                h.getValueAtPercentile(99.9) / 1000.0, h.getMaxValue() / 1000.0);
    }
}
