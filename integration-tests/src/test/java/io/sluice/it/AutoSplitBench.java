package io.sluice.it;

import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import software.amazon.awssdk.services.sqs.SqsAsyncClient;
import software.amazon.awssdk.services.sqs.model.DeleteMessageBatchRequestEntry;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchRequestEntry;

/**
 * A flooded queue and its partition count over time (issue 16, run by {@code scripts/bench-autosplit.sh}): one
 * standard queue "hot" created with one partition, closed-loop producers (batches of 10, 1 KiB) and consumers
 * (receive 10, delete the batch) spread over the endpoints for SECONDS; every WINDOW seconds it prints the window's
 * send and end-to-end rates and the queue's SluicePartitions, so the rate before and after each split shows.
 *
 * <p>Usage: {@code AutoSplitBench SECONDS WINDOW PRODUCERS CONSUMERS ENDPOINT...}
 */
public final class AutoSplitBench {
    private AutoSplitBench() {
    }

    private static Thread started(Runnable r) {
        Thread t = new Thread(r);
        t.setDaemon(true);
        t.start();
        return t;
    }

    public static void main(String[] args) throws Exception {
        int seconds = Integer.parseInt(args[0]);
        int window = Integer.parseInt(args[1]);
        int producers = Integer.parseInt(args[2]);
        int consumers = Integer.parseInt(args[3]);
        List<SqsAsyncClient> clients = new ArrayList<>();
        for (int i = 4; i < args.length; i++) {
            clients.add(SqsClients.async(URI.create(args[i]), // cluster.sh's credentials
                    System.getenv().getOrDefault("SLUICE_ACCESS_KEY", "sluice"),
                    System.getenv().getOrDefault("SLUICE_SECRET_KEY", "sluice-dev-secret"), producers + consumers + 8));
        }
        String url = clients.get(0).createQueue(b -> b.queueName("hot")
                .attributesWithStrings(Map.of("VisibilityTimeout", "60"))).get().queueUrl();
        String body = "x".repeat(1024);
        AtomicBoolean running = new AtomicBoolean(true);
        AtomicLong sent = new AtomicLong();
        AtomicLong received = new AtomicLong();
        AtomicLong errors = new AtomicLong();
        java.util.Set<String> errorKinds = java.util.concurrent.ConcurrentHashMap.newKeySet(); // printed at the end
        List<Thread> threads = new ArrayList<>();
        for (int p = 0; p < producers; p++) {
            SqsAsyncClient c = clients.get(p % clients.size());
            threads.add(started(() -> {
                List<SendMessageBatchRequestEntry> entries = new ArrayList<>();
                for (int i = 0; i < 10; i++) {
                    entries.add(SendMessageBatchRequestEntry.builder().id("e" + i).messageBody(body).build());
                }
                while (running.get()) {
                    try {
                        sent.addAndGet(c.sendMessageBatch(b -> b.queueUrl(url).entries(entries)).get()
                                .successful().size());
                    } catch (Exception e) {
                        errors.incrementAndGet();
                        errorKinds.add(String.valueOf(e.getCause() != null ? e.getCause() : e));
                    }
                }
            }));
        }
        for (int k = 0; k < consumers; k++) {
            SqsAsyncClient c = clients.get(k % clients.size());
            threads.add(started(() -> {
                while (running.get()) {
                    try {
                        List<Message> got = c.receiveMessage(b -> b.queueUrl(url).maxNumberOfMessages(10)
                                .waitTimeSeconds(1)).get().messages();
                        if (got.isEmpty()) {
                            continue;
                        }
                        List<DeleteMessageBatchRequestEntry> del = new ArrayList<>();
                        for (int i = 0; i < got.size(); i++) {
                            del.add(DeleteMessageBatchRequestEntry.builder().id("d" + i)
                                    .receiptHandle(got.get(i).receiptHandle()).build());
                        }
                        received.addAndGet(c.deleteMessageBatch(b -> b.queueUrl(url).entries(del)).get()
                                .successful().size());
                    } catch (Exception e) {
                        errors.incrementAndGet();
                        errorKinds.add(String.valueOf(e.getCause() != null ? e.getCause() : e));
                    }
                }
            }));
        }
        long lastSent = 0;
        long lastReceived = 0;
        for (int t = window; t <= seconds; t += window) {
            Thread.sleep(window * 1000L);
            long s = sent.get();
            long r = received.get();
            String partitions = clients.get(0).getQueueAttributes(b -> b.queueUrl(url)
                    .attributeNamesWithStrings("SluicePartitions")).get().attributesAsStrings()
                    .getOrDefault("SluicePartitions", "1");
            System.out.printf("t=%4d s  partitions %2s  sent %,6.0f msg/s  end to end %,6.0f msg/s  errors %d%n", t,
                    partitions, (s - lastSent) / (double) window, (r - lastReceived) / (double) window,
                    errors.get());
            lastSent = s;
            lastReceived = r;
        }
        running.set(false);
        for (Thread th : threads) {
            th.join(30_000);
        }
        clients.forEach(SqsAsyncClient::close);
        errorKinds.stream().limit(5).forEach(k -> System.out.println("error: " + k));
    }
}
