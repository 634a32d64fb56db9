package io.sluice.it;

import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.DeleteMessageBatchRequestEntry;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchRequestEntry;

/**
 * The steps of {@code scripts/bench-backlog.sh} (a backlog costs disk, not heap): each prints one figure.
 *
 * <pre>
 *   fill  ENDPOINT QUEUE COUNT BODY_BYTES   send COUNT random-letter messages (batches of 10, 16 threads); msg/s
 *   drain ENDPOINT QUEUE SECONDS            receive and delete (batches of 10, 8 threads, 1 s polls); prints msg/s
 *   count ENDPOINT QUEUE                    visible + in flight + delayed, as the queue's attributes say
 *   heap  ADMIN_ENDPOINT PID                heap in use after full GCs (jcmd GC.run, then the JVM gauge)
 * </pre>
 *
 * Credentials: AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, default the dev server's.
 */
public final class BacklogBench {
    private BacklogBench() {
    }

    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "fill" -> fill(URI.create(args[1]), args[2], Long.parseLong(args[3]), Integer.parseInt(args[4]));
            case "drain" -> drain(URI.create(args[1]), args[2], Integer.parseInt(args[3]));
            case "count" -> System.out.println(count(client(URI.create(args[1])), args[2]));
            case "heap" -> System.out.println(heapAfterGc(URI.create(args[1]), args[2]));
            default -> throw new IllegalArgumentException("unknown step " + args[0]);
        }
    }

    private static SqsClient client(URI endpoint) {
        return SqsClients.client(endpoint, System.getenv().getOrDefault("AWS_ACCESS_KEY_ID", "sluice"),
                System.getenv().getOrDefault("AWS_SECRET_ACCESS_KEY", "sluice-dev-secret"));
    }

    private static void fill(URI endpoint, String queue, long count, int bodyBytes) throws Exception {
        SqsClient sqs = client(endpoint);
        boolean fifo = queue.endsWith(".fifo"); // 64 message groups, a deduplication id per message
        String url = sqs.createQueue(b -> b.queueName(queue).attributesWithStrings(
                fifo ? Map.of("FifoQueue", "true") : Map.of())).queueUrl();
        AtomicLong next = new AtomicLong();
        long started = System.nanoTime();
        ExecutorService pool = Executors.newFixedThreadPool(16);
        List<Future<?>> workers = new ArrayList<>();
        for (int t = 0; t < 16; t++) {
            workers.add(pool.submit(() -> {
                long first;
                while ((first = next.getAndAdd(10)) < count) {
                    List<SendMessageBatchRequestEntry> entries = new ArrayList<>();
                    for (long i = first; i < Math.min(first + 10, count); i++) {
                        var entry = SendMessageBatchRequestEntry.builder().id("e" + (i - first))
                                .messageBody(randomBody(bodyBytes));
                        if (fifo) {
                            entry.messageGroupId("g" + i % 64).messageDeduplicationId(queue + "-" + i);
                        }
                        entries.add(entry.build());
                    }
                    var reply = sqs.sendMessageBatch(b -> b.queueUrl(url).entries(entries));
                    if (!reply.failed().isEmpty()) {
                        throw new IllegalStateException("sends failed: " + reply.failed());
                    }
                }
                return null;
            }));
        }
        for (Future<?> w : workers) {
            w.get();
        }
        pool.shutdown();
        double seconds = (System.nanoTime() - started) / 1e9;
        System.out.printf("%.0f%n", count / seconds);
    }

    /** Random letters: what is stored is not compressed away, so the disk figure is a real one. */
    private static String randomBody(int bytes) {
        char[] c = new char[bytes];
        java.util.concurrent.ThreadLocalRandom r = java.util.concurrent.ThreadLocalRandom.current();
        for (int i = 0; i < bytes; i++) {
            c[i] = (char) ('a' + r.nextInt(26));
        }
        return new String(c);
    }

    private static void drain(URI endpoint, String queue, int seconds) throws Exception {
        SqsClient sqs = client(endpoint);
        String url = sqs.getQueueUrl(b -> b.queueName(queue)).queueUrl();
        AtomicLong done = new AtomicLong();
        long started = System.nanoTime();
        long end = started + TimeUnit.SECONDS.toNanos(seconds);
        AtomicLong emptyAt = new AtomicLong(Long.MAX_VALUE);
        ExecutorService pool = Executors.newFixedThreadPool(8);
        List<Future<?>> workers = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
            workers.add(pool.submit(() -> {
                while (System.nanoTime() < end) {
                    List<Message> got = sqs.receiveMessage(b -> b.queueUrl(url).maxNumberOfMessages(10)
                            .waitTimeSeconds(1)).messages();
                    if (got.isEmpty()) {
                        emptyAt.accumulateAndGet(System.nanoTime(), Math::min);
                        return null; // the queue ran dry: the rate is over the time it lasted
                    }
                    List<DeleteMessageBatchRequestEntry> entries = new ArrayList<>();
                    for (int i = 0; i < got.size(); i++) {
                        entries.add(DeleteMessageBatchRequestEntry.builder().id("d" + i)
                                .receiptHandle(got.get(i).receiptHandle()).build());
                    }
                    sqs.deleteMessageBatch(b -> b.queueUrl(url).entries(entries));
                    done.addAndGet(got.size());
                }
                return null;
            }));
        }
        for (Future<?> w : workers) {
            w.get();
        }
        pool.shutdown();
        long stopped = Math.min(System.nanoTime(), emptyAt.get());
        System.out.printf("%.0f%n", done.get() / ((stopped - started) / 1e9));
    }

    static long count(SqsClient sqs, String queue) {
        String url = sqs.getQueueUrl(b -> b.queueName(queue)).queueUrl();
        Map<QueueAttributeName, String> a = sqs.getQueueAttributes(b -> b.queueUrl(url).attributeNames(
                QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES,
                QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES_NOT_VISIBLE,
                QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES_DELAYED)).attributes();
        return a.values().stream().mapToLong(Long::parseLong).sum();
    }

    private static long heapAfterGc(URI admin, String pid) throws Exception {
        for (int i = 0; i < 2; i++) {
            Process gc = new ProcessBuilder("jcmd", pid, "GC.run").redirectErrorStream(true).start();
            gc.getInputStream().readAllBytes();
            if (gc.waitFor() != 0) {
                throw new IllegalStateException("jcmd GC.run failed for " + pid);
            }
        }
        return (long) PromScrape.of(admin).sum("jvm_memory_used_bytes", "area", "heap");
    }
}
