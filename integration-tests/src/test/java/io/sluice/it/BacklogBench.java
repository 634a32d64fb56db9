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
 *   fill  ENDPOINT QUEUE COUNT BODY_BYTES [DELAY_SECONDS]
 *                                           send COUNT random-letter messages (batches of 10, 16 threads), with a
 *                                           delay if given (a FIFO queue's DelaySeconds attribute); prints msg/s.
 *                                           FIFO (QUEUE ends in .fifo): 64 message groups, a deduplication id each;
 *                                           env BENCH_WINDOW (ms): the queue's SluiceReorderWindowMillis, and each
 *                                           message carries Sluice.ProducerTime up to 1 s behind (Sluice.ProducerId:
 *                                           its thread), so groups arrive out of producer order; env BENCH_RATE: at
 *                                           most that many msg/s (the deduplication window's entries stay in memory
 *                                           for 5 minutes: a 256 MB node holds ~1,500 msg/s of them)
 *   configure ENDPOINT QUEUE NAME=VALUE...  SetQueueAttributes; prints the attributes then
 *   lease ENDPOINT QUEUE VISIBILITY_SECONDS COUNT
 *                                           receive with that visibility timeout and never delete (8 threads, batches
 *                                           of 10) until COUNT receives were made (at most 30 minutes; past the
 *                                           in-flight limit it waits for leases to lapse); prints the count
 *   deadletter ENDPOINT QUEUE COUNT BODY_BYTES
 *                                           QUEUE becomes the dead-letter queue of QUEUE-src (maxReceiveCount 1): COUNT
 *                                           messages sent there are received (never deleted) until QUEUE holds them
 *                                           all; prints the dead-letter rate in msg/s
 *   drain ENDPOINT QUEUE SECONDS            receive and delete (batches of 10, 8 threads, 1 s polls); prints msg/s
 *   count ENDPOINT QUEUE                    visible + in flight + delayed, as the queue's attributes say
 *   heap  ADMIN_ENDPOINT PID                heap in use after full GCs (jcmd GC.run, then the JVM gauge)
 *   poison ENDPOINT ADMIN_ENDPOINTS QUEUE SECONDS BODY_BYTES
 *                                           a poison flood: 4 producers send at full rate into QUEUE (maxReceiveCount 1,
 *                                           dead-letter queue QUEUE-dlq), 8 consumers receive and never delete; prints
 *                                           a line every 10 s (send and dead-letter rates, pending hand-offs), then the
 *                                           totals once the source is drained, counted back (exit 1 on a mismatch);
 *                                           ADMIN_ENDPOINTS: every node's, comma-separated (pending hand-offs are
 *                                           exported by each partition's primary)
 * </pre>
 *
 * Credentials: AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, default the dev server's.
 */
public final class BacklogBench {
    private BacklogBench() {
    }

    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "fill" -> System.out.printf("%.0f%n", fill(URI.create(args[1]), args[2], Long.parseLong(args[3]),
                    Integer.parseInt(args[4]), args.length > 5 ? Integer.parseInt(args[5]) : -1));
            case "configure" -> configure(URI.create(args[1]), args[2], List.of(args).subList(3, args.length));
            case "lease" -> System.out.println(lease(URI.create(args[1]), args[2], Integer.parseInt(args[3]),
                    Long.parseLong(args[4])));
            case "deadletter" -> deadLetter(URI.create(args[1]), args[2], Long.parseLong(args[3]),
                    Integer.parseInt(args[4]));
            case "drain" -> drain(URI.create(args[1]), args[2], Integer.parseInt(args[3]));
            case "count" -> System.out.println(count(client(URI.create(args[1])), args[2]));
            case "heap" -> System.out.println(heapAfterGc(URI.create(args[1]), args[2]));
            case "poison" -> poison(URI.create(args[1]), List.of(args[2].split(",")), args[3],
                    Integer.parseInt(args[4]), Integer.parseInt(args[5]));
            default -> throw new IllegalArgumentException("unknown step " + args[0]);
        }
    }

    private static SqsClient client(URI endpoint) {
        return SqsClients.client(endpoint, System.getenv().getOrDefault("AWS_ACCESS_KEY_ID", "sluice"),
                System.getenv().getOrDefault("AWS_SECRET_ACCESS_KEY", "sluice-dev-secret"));
    }

    /** Sends the messages; returns the rate in msg/s. */
    private static double fill(URI endpoint, String queue, long count, int bodyBytes, int delaySeconds)
            throws Exception {
        SqsClient sqs = client(endpoint);
        boolean fifo = queue.endsWith(".fifo"); // 64 message groups, a deduplication id per message
        int window = Integer.parseInt(System.getenv().getOrDefault("BENCH_WINDOW", "0"));
        double rate = Double.parseDouble(System.getenv().getOrDefault("BENCH_RATE", "0"));
        Map<String, String> attributes = new java.util.HashMap<>();
        if (fifo) {
            attributes.put("FifoQueue", "true");
            if (window > 0) {
                attributes.put("SluiceReorderWindowMillis", Integer.toString(window));
            }
            if (delaySeconds >= 0) {
                attributes.put("DelaySeconds", Integer.toString(delaySeconds));
            }
        }
        String url = sqs.createQueue(b -> b.queueName(queue).attributesWithStrings(attributes)).queueUrl();
        AtomicLong next = new AtomicLong();
        long started = System.nanoTime();
        ExecutorService pool = Executors.newFixedThreadPool(16);
        List<Future<?>> workers = new ArrayList<>();
        for (int t = 0; t < 16; t++) {
            workers.add(pool.submit(() -> {
                long first;
                while ((first = next.getAndAdd(10)) < count) {
                    if (rate > 0) { // paced: message `first` is due at first / rate seconds into the fill
                        long due = started + (long) (first / rate * 1e9);
                        long wait = due - System.nanoTime();
                        if (wait > 0) {
                            TimeUnit.NANOSECONDS.sleep(wait);
                        }
                    }
                    List<SendMessageBatchRequestEntry> entries = new ArrayList<>();
                    for (long i = first; i < Math.min(first + 10, count); i++) {
                        var entry = SendMessageBatchRequestEntry.builder().id("e" + (i - first))
                                .messageBody(randomBody(bodyBytes));
                        if (fifo) {
                            entry.messageGroupId("g" + i % 64).messageDeduplicationId(queue + "-" + i);
                            if (window > 0) {
                                long producerTime = System.currentTimeMillis()
                                        - java.util.concurrent.ThreadLocalRandom.current().nextInt(1000);
                                entry.messageAttributes(Map.of(
                                        "Sluice.ProducerTime", software.amazon.awssdk.services.sqs.model
                                                .MessageAttributeValue.builder().dataType("Number")
                                                .stringValue(Long.toString(producerTime)).build(),
                                        "Sluice.ProducerId", software.amazon.awssdk.services.sqs.model
                                                .MessageAttributeValue.builder().dataType("String")
                                                .stringValue(Thread.currentThread().getName()).build()));
                            }
                        } else if (delaySeconds >= 0) {
                            entry.delaySeconds(delaySeconds);
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
        return count / seconds;
    }

    private static void configure(URI endpoint, String queue, List<String> settings) {
        SqsClient sqs = client(endpoint);
        String url = sqs.getQueueUrl(b -> b.queueName(queue)).queueUrl();
        Map<String, String> attributes = new java.util.HashMap<>();
        for (String s : settings) {
            attributes.put(s.substring(0, s.indexOf('=')), s.substring(s.indexOf('=') + 1));
        }
        sqs.setQueueAttributes(b -> b.queueUrl(url).attributesWithStrings(attributes));
        System.out.println(sqs.getQueueAttributes(b -> b.queueUrl(url).attributeNamesWithStrings("All"))
                .attributesAsStrings());
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

    private static long lease(URI endpoint, String queue, int visibilitySeconds, long count) throws Exception {
        SqsClient sqs = client(endpoint);
        String url = sqs.getQueueUrl(b -> b.queueName(queue)).queueUrl();
        AtomicLong leased = new AtomicLong();
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(30);
        ExecutorService pool = Executors.newFixedThreadPool(8);
        List<Future<?>> workers = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
            workers.add(pool.submit(() -> {
                while (leased.get() < count && System.nanoTime() < deadline) {
                    try {
                        leased.addAndGet(sqs.receiveMessage(b -> b.queueUrl(url).maxNumberOfMessages(10)
                                .waitTimeSeconds(1).visibilityTimeout(visibilitySeconds)).messages().size());
                    } catch (software.amazon.awssdk.services.sqs.model.SqsException e) {
                        Thread.sleep(200); // the in-flight limit (OverLimit): leases lapse in a few seconds
                    }
                }
                return null;
            }));
        }
        for (Future<?> w : workers) {
            w.get();
        }
        pool.shutdown();
        return leased.get();
    }

    private static void deadLetter(URI endpoint, String queue, long count, int bodyBytes) throws Exception {
        SqsClient sqs = client(endpoint);
        sqs.createQueue(b -> b.queueName(queue));
        String source = queue + "-src";
        fill(endpoint, source, count, bodyBytes, -1); // creates it
        String url = sqs.getQueueUrl(b -> b.queueName(source)).queueUrl();
        sqs.setQueueAttributes(b -> b.queueUrl(url).attributesWithStrings(Map.of("RedrivePolicy",
                "{\"deadLetterTargetArn\":\"arn:aws:sqs:us-east-1:000000000000:" + queue + "\",\"maxReceiveCount\":\"1\"}",
                "VisibilityTimeout", "0")));
        long started = System.nanoTime();
        long deadline = started + TimeUnit.MINUTES.toNanos(30);
        java.util.concurrent.atomic.AtomicBoolean done = new java.util.concurrent.atomic.AtomicBoolean();
        ExecutorService pool = Executors.newFixedThreadPool(8);
        List<Future<?>> workers = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
            workers.add(pool.submit(() -> {
                while (!done.get()) { // never deletes: a message's second receive hands it off
                    sqs.receiveMessage(b -> b.queueUrl(url).maxNumberOfMessages(10).waitTimeSeconds(1));
                }
                return null;
            }));
        }
        while (count(sqs, queue) < count && System.nanoTime() < deadline) {
            Thread.sleep(500);
        }
        double seconds = (System.nanoTime() - started) / 1e9;
        done.set(true);
        for (Future<?> w : workers) {
            w.get();
        }
        pool.shutdown();
        System.out.printf("%.0f%n", count(sqs, queue) / seconds);
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

    private static void poison(URI endpoint, List<String> admins, String queue, int seconds, int bodyBytes)
            throws Exception {
        SqsClient sqs = client(endpoint);
        String dlq = queue + "-dlq";
        sqs.createQueue(b -> b.queueName(dlq));
        String url = sqs.createQueue(b -> b.queueName(queue).attributesWithStrings(Map.of("RedrivePolicy",
                "{\"deadLetterTargetArn\":\"arn:aws:sqs:us-east-1:000000000000:" + dlq + "\",\"maxReceiveCount\":\"1\"}",
                "VisibilityTimeout", "0"))).queueUrl();
        String dlqUrl = sqs.getQueueUrl(b -> b.queueName(dlq)).queueUrl();
        AtomicLong sent = new AtomicLong();
        java.util.concurrent.atomic.AtomicBoolean producing = new java.util.concurrent.atomic.AtomicBoolean(true);
        java.util.concurrent.atomic.AtomicBoolean consuming = new java.util.concurrent.atomic.AtomicBoolean(true);
        ExecutorService pool = Executors.newFixedThreadPool(12);
        List<Future<?>> producers = new ArrayList<>();
        List<Future<?>> consumers = new ArrayList<>();
        String body = randomBody(bodyBytes);
        for (int t = 0; t < 4; t++) {
            producers.add(pool.submit(() -> {
                while (producing.get()) {
                    List<SendMessageBatchRequestEntry> entries = new ArrayList<>();
                    for (int i = 0; i < 10; i++) {
                        entries.add(SendMessageBatchRequestEntry.builder().id("e" + i).messageBody(body).build());
                    }
                    var reply = sqs.sendMessageBatch(b -> b.queueUrl(url).entries(entries));
                    sent.addAndGet(reply.successful().size());
                }
                return null;
            }));
        }
        for (int t = 0; t < 8; t++) {
            consumers.add(pool.submit(() -> {
                while (consuming.get()) { // never deletes: every message is received once, then dead-lettered
                    sqs.receiveMessage(b -> b.queueUrl(url).maxNumberOfMessages(10).waitTimeSeconds(1)
                            .visibilityTimeout(0));
                }
                return null;
            }));
        }
        long started = System.nanoTime();
        long lastSent = 0;
        long lastDead = 0;
        double maxPending = 0;
        long lastAt = started;
        while (System.nanoTime() - started < TimeUnit.SECONDS.toNanos(seconds)) {
            Thread.sleep(10_000);
            long now = System.nanoTime();
            long s = sent.get();
            long dead = visible(sqs, dlqUrl);
            double pending = pending(admins, queue);
            maxPending = Math.max(maxPending, pending);
            double interval = (now - lastAt) / 1e9;
            System.out.printf("t=%3.0fs sent %.0f msg/s, dead-lettered %.0f msg/s (%.2f of sent), pending hand-offs %.0f%n",
                    (now - started) / 1e9, (s - lastSent) / interval, (dead - lastDead) / interval,
                    s == lastSent ? 0.0 : (double) (dead - lastDead) / (s - lastSent), pending);
            lastSent = s;
            lastDead = dead;
            lastAt = now;
        }
        producing.set(false);
        for (Future<?> f : producers) {
            f.get();
        }
        long total = sent.get();
        long dead = visible(sqs, dlqUrl);
        double elapsed = (System.nanoTime() - started) / 1e9;
        System.out.printf("over %.0f s: sent %d (%.0f msg/s), dead-lettered %d (%.0f msg/s, %.2f of sent), most pending"
                + " hand-offs seen %.0f%n", elapsed, total, total / elapsed, dead, dead / elapsed, (double) dead / total,
                maxPending);
        long drainEnd = System.nanoTime() + TimeUnit.SECONDS.toNanos(300);
        while (System.nanoTime() < drainEnd && (count(sqs, queue) > 0
                || pending(admins, queue) > 0)) {
            Thread.sleep(1_000);
        }
        consuming.set(false);
        for (Future<?> f : consumers) {
            f.get();
        }
        pool.shutdown();
        long left = count(sqs, queue);
        long inDlq = count(sqs, dlq);
        System.out.printf("counted back: %d sent, %d in %s, %d left in %s%n", total, inDlq, dlq, left, queue);
        if (inDlq + left != total) {
            System.out.println("COUNT MISMATCH");
            System.exit(1);
        }
    }

    /** Pending hand-offs of a queue, over every node's metrics. */
    private static double pending(List<String> admins, String queue) throws Exception {
        double sum = 0;
        for (String admin : admins) {
            sum += PromScrape.of(URI.create(admin)).sum("sluice_queue_dead_letter_pending", "queue", queue);
        }
        return sum;
    }

    private static long visible(SqsClient sqs, String url) {
        return Long.parseLong(sqs.getQueueAttributes(b -> b.queueUrl(url).attributeNames(
                QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES)).attributes()
                .get(QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES));
    }
}
