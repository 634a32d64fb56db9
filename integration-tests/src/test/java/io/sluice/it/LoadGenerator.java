package io.sluice.it;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.client.config.ClientOverrideConfiguration;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.http.nio.netty.NettyNioAsyncHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsAsyncClient;
import software.amazon.awssdk.services.sqs.model.DeleteMessageBatchRequestEntry;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchRequestEntry;

/**
 * End-to-end load through the AWS SDK for Java v2 <em>async</em> client: producers send batches, consumers
 * long-poll, receive batches and delete them. Each producer and consumer is one outstanding request chain (closed
 * loop), optionally paced to a total send rate. Every message carries its producer, sequence number and send time,
 * so the run counts losses (acknowledged sends never received) and duplicates exactly, and measures end-to-end
 * latency (send issued to message received).
 *
 * <p>Phases: warm-up (JIT, connections; not measured), measurement, then a drain in which producers stop and
 * consumers empty the queue (bounded). The CPU the server processes spent during the measurement comes from
 * {@code /proc/PID/stat} of the pids given, so the figure includes every thread (JIT, GC, RocksDB, fsync).
 *
 * <p>Run with {@code scripts/load-e2e.sh} (starts {@code sluice dev}), {@code scripts/load-cluster.sh} (the 3/3/2
 * cluster) or {@code scripts/load-elasticmq.sh}; flags: see {@link Options#parse}.
 */
public final class LoadGenerator {
    /** The knobs of one run. */
    public static final class Options {
        List<URI> endpoints = new ArrayList<>();
        int warmupSeconds = 10;
        int seconds = 20;
        int producers = 8;
        int consumers = 8;
        int batch = 10;
        int bodyBytes = 1024;
        int rate; // total messages/s to send; 0 = as fast as the closed loops go
        /**
         * Total messages/s to send during the warm-up only (0: the measured phase's pace from the start). An unpaced
         * run on 2 shared cores keeps them saturated (the JIT compilers starved, a backlog growing); a paced warm-up
         * avoids both. Whether it reaches a long-running server's steady state is not settled (docs/performance.md).
         */
        int warmupRate;
        /**
         * Closed loop (0: none): a producer holds its next batch while this many messages or more are sent but not
         * yet received, so what is sent is what the consumers take (sent = received: a rate the server sustains) and
         * the backlog stays small, instead of unpaced producers filling the queue at about twice the rate the
         * consumers (two requests per batch of theirs, one per producer's) empty it. The time a batch is held is
         * not send latency (it is counted from when the batch goes); not with {@code rate}. Approximate: released
         * producers may overshoot N by a batch each, and a send that failed at the client but was stored loosens
         * the bound by its messages when they are received.
         */
        int maxBacklog;
        int partitions; // SluicePartitions on create; 0 = leave the default
        int drainSeconds = 60;
        int visibilitySeconds = 30;
        String queueName = "load-" + System.currentTimeMillis();
        List<Long> pids = new ArrayList<>();
        /** A name per pid (its pid file's name, else the pid), for the per-process CPU figures. */
        List<String> pidNames = new ArrayList<>();
        /**
         * FIFO queue with this many message groups (0: a standard queue): each message goes to group
         * {@code id % groups}, deduplicated by its id, and carries {@code Sluice.ProducerTime}.
         */
        int fifoGroups;
        /** The FIFO queue's {@code SluiceReorderWindowMillis}. */
        int reorderWindowMillis;
        /** Seconds of idle CPU measured before the load starts (0: none). */
        int idleSeconds;
        /** Where to record a JFR profile of every server process during the measurement (null: none). */
        Path jfrDir;
        /** The servers' CPU per request by thread group and process, the N largest groups (0: not measured). */
        int threadGroups;
        String accessKey = System.getenv().getOrDefault("AWS_ACCESS_KEY_ID", "sluice");
        String secretKey = System.getenv().getOrDefault("AWS_SECRET_ACCESS_KEY", "sluice-dev-secret");
        /**
         * For fault tests (no flag): when set, the measured phase lasts until this completes (a fault scenario is
         * over), then {@code seconds} more as a tail, so the load covers the whole scenario however slow the day.
         */
        CompletableFuture<?> until;
        /** The ceiling on waiting for {@link #until}: a scenario that never ends still ends the load. */
        int untilCeilingSeconds = 600;

        /**
         * {@code --endpoint URL} (repeatable: clients spread over them and move to the next after a failure),
         * {@code --warmup S}, {@code --seconds S}, {@code --producers N}, {@code --consumers N}, {@code --batch N},
         * {@code --body BYTES}, {@code --rate MSGS_PER_S}, {@code --warmup-rate MSGS_PER_S} (the warm-up paced at
         * that rate, then the measurement unpaced; not with {@code --rate}), {@code --max-backlog N} (closed loop:
         * producers hold while N messages are sent and not yet received; not with {@code --rate}),
         * {@code --partitions N}, {@code --drain S},
         * {@code --visibility S} (the queue's VisibilityTimeout), {@code --queue NAME},
         * {@code --pid PID} (repeatable), {@code --pid-dir DIR} (every {@code *.pid} file in it), {@code --idle S}
         * (first measure the servers' idle CPU for S seconds), {@code --jfr DIR} (a JFR profile of every server process
         * over the measurement, {@code DIR/<name>.jfr}, through {@code jcmd}), {@code --threads N} (the servers' CPU
         * per request over the measurement by thread group and process, the N largest groups), {@code --fifo-groups N} (a FIFO queue
         * with N message groups), {@code --reorder-window MS} (its {@code SluiceReorderWindowMillis}).
         */
        public static Options parse(String[] args) throws java.io.IOException {
            Options o = new Options();
            for (int i = 0; i + 1 < args.length; i += 2) {
                String v = args[i + 1];
                switch (args[i]) {
                    case "--endpoint" -> o.endpoints.add(URI.create(v));
                    case "--warmup" -> o.warmupSeconds = Integer.parseInt(v);
                    case "--seconds" -> o.seconds = Integer.parseInt(v);
                    case "--producers" -> o.producers = Integer.parseInt(v);
                    case "--consumers" -> o.consumers = Integer.parseInt(v);
                    case "--batch" -> o.batch = Integer.parseInt(v);
                    case "--body" -> o.bodyBytes = Integer.parseInt(v);
                    case "--rate" -> o.rate = Integer.parseInt(v);
                    case "--warmup-rate" -> o.warmupRate = Integer.parseInt(v);
                    case "--max-backlog" -> o.maxBacklog = Integer.parseInt(v);
                    case "--partitions" -> o.partitions = Integer.parseInt(v);
                    case "--drain" -> o.drainSeconds = Integer.parseInt(v);
                    case "--visibility" -> o.visibilitySeconds = Integer.parseInt(v);
                    case "--queue" -> o.queueName = v;
                    case "--fifo-groups" -> o.fifoGroups = Integer.parseInt(v);
                    case "--reorder-window" -> o.reorderWindowMillis = Integer.parseInt(v);
                    case "--pid" -> {
                        o.pids.add(Long.parseLong(v));
                        o.pidNames.add(v);
                    }
                    case "--pid-dir" -> {
                        try (var files = Files.list(Path.of(v))) {
                            for (Path f : files.filter(f -> f.toString().endsWith(".pid")).sorted().toList()) {
                                o.pids.add(Long.parseLong(Files.readString(f).trim()));
                                o.pidNames.add(f.getFileName().toString().replace(".pid", ""));
                            }
                        }
                    }
                    case "--idle" -> o.idleSeconds = Integer.parseInt(v);
                    case "--jfr" -> o.jfrDir = Path.of(v);
                    case "--threads" -> o.threadGroups = Integer.parseInt(v);
                    default -> throw new IllegalArgumentException("unknown flag " + args[i]);
                }
            }
            if (o.endpoints.isEmpty()) {
                o.endpoints.add(URI.create("http://127.0.0.1:9324"));
            }
            if (o.maxBacklog < 0) {
                throw new IllegalArgumentException("--max-backlog takes a number of messages (0: no bound)");
            }
            if (o.maxBacklog > 0 && o.rate > 0) { // a held batch would keep its slot: held time counted as latency
                throw new IllegalArgumentException("--max-backlog is for unpaced runs, not with --rate");
            }
            if (o.warmupRate < 0 || o.rate < 0) {
                throw new IllegalArgumentException("--rate and --warmup-rate take messages per second (0: unpaced)");
            }
            if (o.warmupRate > 0 && o.rate > 0) { // one pacing anchor: a paced measurement keeps the warm-up's pace
                throw new IllegalArgumentException("--warmup-rate is for unpaced runs; with --rate, the warm-up is paced"
                        + " at that rate already");
            }
            return o;
        }
    }

    /**
     * What one run measured. Rates and latencies cover the measurement phase; counts cover the whole run;
     * {@code acknowledgedInTail} counts sends acknowledged after {@link Options#until} completed (-1 without it): the
     * service took writes again after the scenario.
     */
    public record Result(double sentPerSecond, double receivedPerSecond, Histogram sendLatencyMicros,
                         Histogram endToEndMicros, long acknowledged, long lost, long duplicates, long errors,
                         double serverCpuSecondsPer1000, double generatorCpuSecondsPer1000, long longestSendGapMillis,
                         long longestReceiveGapMillis, long acknowledgedInTail) {
    }

    private final Options o;
    private final List<SqsAsyncClient> clients = new ArrayList<>();
    private final Set<Long> acknowledged = ConcurrentHashMap.newKeySet();
    private final Map<Long, Integer> receivedCount = new ConcurrentHashMap<>();
    /** When each message was first received (nanoTime): a second receipt within its visibility timeout is early. */
    private final Map<Long, Long> firstReceived = new ConcurrentHashMap<>();
    /**
     * Duplicates received before the first receipt's visibility timeout could have ended (a second copy: a send or a
     * lease applied twice), as against after it (redelivered because the first receipt was not deleted in time).
     */
    private final AtomicLong earlyDuplicates = new AtomicLong();
    private final Recorder sendLatency = new Recorder(3);
    private final Recorder endToEnd = new Recorder(3);
    private final AtomicLong sentInWindow = new AtomicLong();
    private final AtomicLong receivedInWindow = new AtomicLong();
    /** Requests answered in the measured window, by action: SendMessageBatch, ReceiveMessage, DeleteMessageBatch. */
    private final AtomicLong sendsInWindow = new AtomicLong();
    private final AtomicLong receivesInWindow = new AtomicLong();
    private final AtomicLong deletesInWindow = new AtomicLong();
    private final AtomicLong errors = new AtomicLong();
    private final Map<String, AtomicLong> errorKinds = new ConcurrentHashMap<>();
    /** Attempts answered with an HTTP error, by request and status, the SDK's retried ones included. */
    private final Map<String, AtomicLong> attemptFailures = new ConcurrentHashMap<>();
    private final AtomicLong lastSendOk = new AtomicLong();
    private final AtomicLong lastReceiveOk = new AtomicLong();
    private final AtomicLong longestSendGap = new AtomicLong();
    private final AtomicLong longestReceiveGap = new AtomicLong();
    private final AtomicInteger consumersRunning = new AtomicInteger();
    /** Messages acknowledged to a producer and not yet received once (for {@code --max-backlog}). */
    private final AtomicLong unreceived = new AtomicLong();
    /** Producers holding their next batch until the backlog is below {@code --max-backlog}. */
    private final java.util.Queue<Runnable> held = new java.util.concurrent.ConcurrentLinkedQueue<>();
    private final ScheduledExecutorService pacer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "load-pacer");
        t.setDaemon(true);
        return t;
    });
    private volatile boolean measuring;
    /** Until the warm-up ends; with {@code --warmup-rate}, producers are paced while it is set. */
    private volatile boolean warmingUp = true;
    private volatile boolean producing = true;
    private volatile boolean consuming = true;
    private volatile long lastArrivalNanos = System.nanoTime();
    private volatile long acknowledgedBeforeTail;
    private String queueUrl;
    private String padding;

    public LoadGenerator(Options options) {
        this.o = options;
    }

    public static void main(String[] args) throws Exception {
        Options options = Options.parse(args);
        LoadGenerator generator = new LoadGenerator(options);
        Result r = generator.run();
        print(options, r);
        if (!generator.attemptFailures.isEmpty()) {
            System.out.println("  attempts answered with an HTTP error (the SDK retries most): "
                    + new java.util.TreeMap<>(generator.attemptFailures));
        }
        if (r.duplicates() > 0) {
            long early = generator.earlyDuplicates.get();
            System.out.printf("  duplicates: %d within the visibility timeout of the first receipt (a second copy),"
                    + " %d after it (redelivered: the first receipt not deleted in time)%n", early,
                    r.duplicates() - early);
        }
        if (!generator.perProcessCpu.isEmpty()) {
            StringBuilder line = new StringBuilder("  server CPU s per 1,000 messages by process:");
            generator.perProcessCpu.forEach((name, cpu) -> line.append(String.format(" %s %.3f", name, cpu)));
            System.out.println(line);
        }
        if (generator.threadBudget != null) {
            long requests = generator.sendsInWindow.get() + generator.receivesInWindow.get()
                    + generator.deletesInWindow.get();
            System.out.printf("  requests answered in the window: %,d (SendMessageBatch %,d, ReceiveMessage %,d,"
                    + " DeleteMessageBatch %,d)%n", requests, generator.sendsInWindow.get(),
                    generator.receivesInWindow.get(), generator.deletesInWindow.get());
            System.out.print(generator.threadBudget.table(Math.max(1, requests), "request", options.threadGroups,
                    clockTicksPerSecond()));
        }
        if (!generator.drainedEmpty) {
            System.out.println("  NOT DRAINED: the queue still held messages when the drain ended (--drain): \"lost\""
                    + " counts those too; run again with a longer --drain to tell");
        }
        if (!Double.isNaN(generator.idleCpuPercent)) {
            System.out.printf("  idle server CPU before the load: %.1f%% of a core (%d s)%n", generator.idleCpuPercent,
                    options.idleSeconds);
        }
        generator.errorKinds().forEach((kind, n) -> System.out.printf("  error x%d: %s%n", n, kind));
        System.exit(r.lost() == 0 ? 0 : 1);
    }

    private SqsAsyncClient clientFor(int index) {
        return clients.get(Math.floorMod(index, clients.size()));
    }

    public Result run() throws Exception {
        if (o.idleSeconds > 0 && !o.pids.isEmpty()) {
            idleCpuPercent = measureIdle(o.idleSeconds);
        }
        for (URI endpoint : o.endpoints) {
            clients.add(SqsAsyncClient.builder().endpointOverride(endpoint).region(Region.US_EAST_1)
                    .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(o.accessKey,
                            o.secretKey)))
                    .httpClient(NettyNioAsyncHttpClient.builder().maxConcurrency(o.producers + o.consumers + 8)
                            .connectionAcquisitionTimeout(Duration.ofSeconds(30)).readTimeout(Duration.ofSeconds(30))
                            .build())
                    .overrideConfiguration(ClientOverrideConfiguration.builder()
                            .addExecutionInterceptor(new ExecutionInterceptor() {
                                @Override // an attempt the SDK retries is invisible to the load otherwise
                                public void afterTransmission(Context.AfterTransmission c,
                                                              ExecutionAttributes attributes) {
                                    int status = c.httpResponse().statusCode();
                                    if (status >= 400) {
                                        attemptFailures.computeIfAbsent(c.request().getClass().getSimpleName()
                                                + " " + status, k -> new AtomicLong()).incrementAndGet();
                                    }
                                }
                            })
                            .apiCallAttemptTimeout(Duration.ofSeconds(25)).build())
                    .build());
        }
        Map<String, String> attributes = new java.util.HashMap<>(Map.of("VisibilityTimeout",
                Integer.toString(o.visibilitySeconds)));
        if (o.partitions > 0) {
            attributes.put("SluicePartitions", Integer.toString(o.partitions));
        }
        String name = o.queueName;
        if (o.fifoGroups > 0) {
            attributes.put("FifoQueue", "true");
            attributes.put("SluiceReorderWindowMillis", Integer.toString(o.reorderWindowMillis));
            name = name.endsWith(".fifo") ? name : name + ".fifo";
        }
        String queueName = name;
        queueUrl = clients.get(0).createQueue(b -> b.queueName(queueName)
                .attributesWithStrings(attributes)).get(60, TimeUnit.SECONDS).queueUrl();
        padding = "x".repeat(Math.max(0, o.bodyBytes - 40));

        long start = System.nanoTime();
        lastSendOk.set(start);
        lastReceiveOk.set(start);
        for (int p = 0; p < o.producers; p++) {
            int id = p;
            produce(id, 0, p, start);
        }
        for (int c = 0; c < o.consumers; c++) {
            consumersRunning.incrementAndGet();
            consume(c);
        }
        Thread.sleep(o.warmupSeconds * 1000L);
        warmingUp = false; // producers paced for the warm-up go unpaced from their next batch
        if (o.warmupRate > 0) { // one that is waiting for its warm-up slot may sleep up to an interval more
            TimeUnit.NANOSECONDS.sleep(batchInterval(o.warmupRate));
        }

        if (o.jfrDir != null) {
            startProfiles();
        }
        long[] cpuBefore = serverCpuTicks();
        ThreadCpu.Threads threadsBefore = o.threadGroups > 0 ? ThreadCpu.snapshot(o.pids, o.pidNames) : null;
        long genBefore = generatorCpuNanos();
        sendLatency.reset();
        endToEnd.reset();
        longestSendGap.set(0);
        longestReceiveGap.set(0);
        measuring = true;
        long t0 = System.nanoTime();
        if (o.until != null) {
            try {
                o.until.get(o.untilCeilingSeconds, TimeUnit.SECONDS);
            } catch (java.util.concurrent.TimeoutException | java.util.concurrent.ExecutionException e) {
                // the scenario failed or hung: it reports that itself; the load still drains and counts losses
            }
            acknowledgedBeforeTail = acknowledged.size();
        }
        Thread.sleep(o.seconds * 1000L);
        measuring = false;
        double elapsed = (System.nanoTime() - t0) / 1e9;
        long[] cpuAfter = serverCpuTicks();
        if (threadsBefore != null) {
            threadBudget = ThreadCpu.between(threadsBefore, ThreadCpu.snapshot(o.pids, o.pidNames));
        }
        long genAfter = generatorCpuNanos();
        Histogram sendHistogram = sendLatency.getIntervalHistogram();
        Histogram e2eHistogram = endToEnd.getIntervalHistogram();
        long sendGap = longestSendGap.get();
        long receiveGap = longestReceiveGap.get();

        producing = false;
        drain();
        drainedEmpty = queueEmpty();
        long lost = acknowledged.stream().filter(id -> !receivedCount.containsKey(id)).count();
        long duplicates = receivedCount.values().stream().mapToLong(n -> n - 1).sum();
        double ticks = 0;
        double messages = Math.max(1, receivedInWindow.get());
        perProcessCpu = new java.util.LinkedHashMap<>();
        for (int i = 0; i < cpuBefore.length; i++) {
            ticks += cpuAfter[i] - cpuBefore[i];
            perProcessCpu.put(o.pidNames.get(i), (cpuAfter[i] - cpuBefore[i]) / (double) clockTicksPerSecond()
                    / messages * 1000);
        }
        double serverCpuPer1000 = o.pids.isEmpty() ? Double.NaN : ticks / clockTicksPerSecond() / messages * 1000;
        double generatorCpuPer1000 = (genAfter - genBefore) / 1e9 / messages * 1000;
        try {
            clients.get(0).deleteQueue(b -> b.queueUrl(queueUrl)).get(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            // the numbers are what matters; a leftover queue does no harm
        }
        clients.forEach(SqsAsyncClient::close);
        pacer.shutdownNow();
        return new Result(sentInWindow.get() / elapsed, receivedInWindow.get() / elapsed, sendHistogram,
                e2eHistogram, acknowledged.size(), lost, duplicates, errors.get(), serverCpuPer1000,
                generatorCpuPer1000, sendGap / 1_000_000, receiveGap / 1_000_000,
                o.until == null ? -1 : acknowledged.size() - acknowledgedBeforeTail);
    }

    /**
     * Stops consumers once the queue is empty (nothing visible, in flight or delayed, nothing arrived for 3 s) after
     * the producers stopped, or after drainSeconds. Waiting for in-flight messages matters after faults: a receive
     * whose answer was lost comes back only when its visibility timeout ends.
     */
    private void drain() throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(o.drainSeconds);
        lastArrivalNanos = System.nanoTime();
        while (System.nanoTime() < end) {
            Thread.sleep(500);
            if (System.nanoTime() - lastArrivalNanos > TimeUnit.SECONDS.toNanos(3) && queueEmpty()) {
                break;
            }
        }
        consuming = false;
        CountDownLatch stopped = new CountDownLatch(1);
        pacer.execute(() -> {
            while (consumersRunning.get() > 0) {
                try {
                    Thread.sleep(50);
                } catch (InterruptedException e) {
                    return;
                }
            }
            stopped.countDown();
        });
        stopped.await(30, TimeUnit.SECONDS);
    }

    private boolean queueEmpty() {
        for (SqsAsyncClient client : clients) {
            try {
                Map<String, String> a = client.getQueueAttributes(b -> b.queueUrl(queueUrl)
                        .attributeNamesWithStrings("All")).get(10, TimeUnit.SECONDS).attributesAsStrings();
                return "0".equals(a.get("ApproximateNumberOfMessages"))
                        && "0".equals(a.get("ApproximateNumberOfMessagesNotVisible"))
                        && "0".equals(a.get("ApproximateNumberOfMessagesDelayed"));
            } catch (Exception e) {
                // that frontend is down: ask the next
            }
        }
        return false;
    }

    private static long id(int producer, long seq) {
        return ((long) producer << 40) | seq;
    }

    /** Nanoseconds between one producer's batches when all of them together send {@code rate} messages/s. */
    private long batchInterval(int rate) {
        return (long) (1e9 * o.producers * o.batch / rate);
    }

    /** One producer: a chain of batch sends; with a rate, each batch waits for its slot. */
    private void produce(int producer, long seq, int endpoint, long start) {
        if (!producing) {
            return;
        }
        long issued = System.nanoTime();
        int rate = o.warmupRate > 0 && warmingUp ? o.warmupRate : o.rate;
        if (rate > 0) {
            long interval = batchInterval(rate);
            long slot = start + (seq / o.batch) * interval;
            if (slot > issued) {
                pacer.schedule(() -> produce(producer, seq, endpoint, start), slot - issued, TimeUnit.NANOSECONDS);
                return;
            }
            issued = slot; // latency counts from the intended time: no coordinated omission
        }
        if (o.maxBacklog > 0 && unreceived.get() >= o.maxBacklog) {
            held.add(() -> produce(producer, seq, endpoint, start));
            releaseHeld(); // the consumers may have taken the backlog down since the check
            return;
        }
        List<SendMessageBatchRequestEntry> entries = new ArrayList<>(o.batch);
        for (int i = 0; i < o.batch; i++) {
            long id = id(producer, seq + i);
            SendMessageBatchRequestEntry.Builder entry = SendMessageBatchRequestEntry.builder().id("e" + i)
                    .messageBody(id + ":" + System.nanoTime() + ":" + padding);
            if (o.fifoGroups > 0) {
                entry.messageGroupId("g" + id % o.fifoGroups).messageDeduplicationId(Long.toString(id))
                        .messageAttributes(Map.of("Sluice.ProducerTime", software.amazon.awssdk.services.sqs.model
                                .MessageAttributeValue.builder().dataType("Number")
                                .stringValue(Long.toString(System.currentTimeMillis())).build()));
            }
            entries.add(entry.build());
        }
        long sentAt = issued;
        clientFor(endpoint).sendMessageBatch(b -> b.queueUrl(queueUrl).entries(entries)).whenComplete((r, e) -> {
            if (e != null) {
                error(e); // back off a little, then another frontend, as a load balancer would
                pacer.schedule(() -> produce(producer, seq + o.batch, endpoint + 1, start), 100, TimeUnit.MILLISECONDS);
                return;
            } else {
                long now = System.nanoTime();
                r.successful().forEach(ok -> acknowledged.add(id(producer, seq + Integer.parseInt(ok.id().substring(1)))));
                unreceived.addAndGet(r.successful().size());
                noteGap(lastSendOk, longestSendGap, now);
                if (measuring) {
                    sendsInWindow.incrementAndGet();
                    sendLatency.recordValue((now - sentAt) / 1000);
                    sentInWindow.addAndGet(r.successful().size());
                }
                errors.addAndGet(r.failed().size());
            }
            produce(producer, seq + o.batch, endpoint, start);
        });
    }

    /** One consumer: receive (long poll, 1 s), then delete what came, then again. */
    private void consume(int endpoint) {
        if (!consuming) {
            consumersRunning.decrementAndGet();
            return;
        }
        SqsAsyncClient client = clientFor(endpoint);
        client.receiveMessage(b -> b.queueUrl(queueUrl).maxNumberOfMessages(o.batch).waitTimeSeconds(1)
                .messageSystemAttributeNamesWithStrings(QueueAttributeName.ALL.toString())).whenComplete((r, e) -> {
                    if (e != null) {
                        error(e);
                        pacer.schedule(() -> consume(endpoint + 1), 100, TimeUnit.MILLISECONDS);
                        return;
                    }
                    long now = System.nanoTime();
                    noteGap(lastReceiveOk, longestReceiveGap, now);
                    if (measuring) {
                        receivesInWindow.incrementAndGet();
                    }
                    List<Message> got = r.messages();
                    if (got.isEmpty()) {
                        releaseHeld();
                        consume(endpoint);
                        return;
                    }
                    lastArrivalNanos = now;
                    List<DeleteMessageBatchRequestEntry> deletes = new ArrayList<>(got.size());
                    for (int i = 0; i < got.size(); i++) {
                        Message m = got.get(i);
                        String[] parts = m.body().split(":", 3);
                        long id = Long.parseLong(parts[0]);
                        Long first = firstReceived.putIfAbsent(id, now);
                        if (first != null && now - first < TimeUnit.SECONDS.toNanos(o.visibilitySeconds) - 500_000_000L) {
                            earlyDuplicates.incrementAndGet();
                        }
                        if (receivedCount.merge(id, 1, Integer::sum) == 1) {
                            unreceived.decrementAndGet();
                        }
                        if (measuring) {
                            endToEnd.recordValue(Math.max(0, (now - Long.parseLong(parts[1])) / 1000));
                        }
                        deletes.add(DeleteMessageBatchRequestEntry.builder().id("d" + i)
                                .receiptHandle(m.receiptHandle()).build());
                    }
                    if (measuring) {
                        receivedInWindow.addAndGet(got.size());
                    }
                    releaseHeld();
                    client.deleteMessageBatch(b -> b.queueUrl(queueUrl).entries(deletes)).whenComplete((d, de) -> {
                        if (de != null) {
                            error(de); // the messages come back after their visibility timeout
                        } else {
                            // an entry the batch refused comes back after its visibility timeout: a duplicate
                            d.failed().forEach(f -> error(new IllegalStateException("delete refused: " + f.code())));
                            if (measuring) {
                                deletesInWindow.incrementAndGet();
                            }
                        }
                        consume(de == null ? endpoint : endpoint + 1);
                    });
                });
    }

    /** Lets held producers go (on the pacer's thread) while the backlog is below {@code --max-backlog}. */
    private void releaseHeld() {
        Runnable next;
        while (unreceived.get() < o.maxBacklog && (next = held.poll()) != null) {
            pacer.execute(next);
        }
    }

    private void error(Throwable e) {
        errors.incrementAndGet();
        Throwable cause = e instanceof java.util.concurrent.CompletionException && e.getCause() != null ? e.getCause() : e;
        String message = String.valueOf(cause.getMessage());
        int details = message.indexOf(" (Service:");
        String kind = cause.getClass().getSimpleName() + ": " + (details > 0 ? message.substring(0, details) : message);
        errorKinds.computeIfAbsent(kind.substring(0, Math.min(kind.length(), 160)), k -> new AtomicLong())
                .incrementAndGet();
    }

    /** Messages received so far in the measured window (0 during the warm-up): to wait until the load is on. */
    public long receivedInWindow() {
        return receivedInWindow.get();
    }

    /** The most frequent kinds of error, for the report. */
    public Map<String, Long> errorKinds() {
        Map<String, Long> out = new java.util.LinkedHashMap<>();
        errorKinds.entrySet().stream().sorted((a, b) -> Long.compare(b.getValue().get(), a.getValue().get())).limit(5)
                .forEach(en -> out.put(en.getKey(), en.getValue().get()));
        return out;
    }

    /** Longest time between two successful completions: how long the service was unavailable to this client. */
    private void noteGap(AtomicLong last, AtomicLong longest, long now) {
        long previous = last.getAndSet(now);
        if (measuring) {
            longest.accumulateAndGet(now - previous, Math::max);
        }
    }

    /** Whether the queue was empty after the drain: if not, "lost" counts messages still queued, not lost ones. */
    private volatile boolean drainedEmpty = true;

    /** What each server thread group spent over the measurement ({@code --threads}), after {@link #run}. */
    private ThreadCpu threadBudget;

    /** Server CPU s per 1,000 messages of each process, after {@link #run}. */
    private Map<String, Double> perProcessCpu = Map.of();
    /** The servers' CPU while idle, in % of one core, before the load ({@code --idle}); NaN if not measured. */
    private double idleCpuPercent = Double.NaN;

    /** Idle CPU of the server processes, in % of one core, over {@code seconds}. */
    private double measureIdle(int seconds) throws Exception {
        long[] before = serverCpuTicks();
        Thread.sleep(seconds * 1000L);
        long[] after = serverCpuTicks();
        long ticks = 0;
        for (int i = 0; i < before.length; i++) {
            ticks += after[i] - before[i];
        }
        return ticks * 100.0 / clockTicksPerSecond() / seconds;
    }

    /** {@code jcmd PID JFR.start} on every server process, recording the measurement (profile settings). */
    private void startProfiles() throws Exception {
        Files.createDirectories(o.jfrDir);
        for (int i = 0; i < o.pids.size(); i++) {
            Path file = o.jfrDir.resolve(o.pidNames.get(i) + ".jfr").toAbsolutePath();
            new ProcessBuilder("jcmd", Long.toString(o.pids.get(i)), "JFR.start", "name=load", "settings=profile",
                    "duration=" + o.seconds + "s", "filename=" + file).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start().waitFor(30, TimeUnit.SECONDS);
        }
    }

    private long[] serverCpuTicks() throws java.io.IOException {
        long[] ticks = new long[o.pids.size()];
        for (int i = 0; i < ticks.length; i++) {
            Path stat = Path.of("/proc", Long.toString(o.pids.get(i)), "stat");
            if (Files.exists(stat)) {
                String s = Files.readString(stat);
                String[] f = s.substring(s.lastIndexOf(')') + 2).split(" ");
                ticks[i] = Long.parseLong(f[11]) + Long.parseLong(f[12]); // utime, stime
            }
        }
        return ticks;
    }

    private static long clockTicksPerSecond() {
        return 100; // USER_HZ on Linux x86-64
    }

    private static long generatorCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory
                .getOperatingSystemMXBean()).getProcessCpuTime();
    }

    public static void print(Options o, Result r) {
        System.out.printf("load: %d s measured after %s, %d producers, %d consumers, batch %d, %d-byte"
                        + " bodies, rate %s, %d endpoint(s)%s%n", o.seconds, o.warmupSeconds + " s warm-up"
                        + (o.warmupRate > 0 ? " paced at " + o.warmupRate + " msg/s" : ""), o.producers, o.consumers,
                o.batch, o.bodyBytes, (o.rate > 0 ? o.rate + " msg/s" : "unpaced")
                        + (o.maxBacklog > 0 ? ", closed loop at " + o.maxBacklog + " unreceived" : ""),
                o.endpoints.size(),
                o.fifoGroups > 0 ? ", FIFO, " + o.fifoGroups + " groups, reorder window " + o.reorderWindowMillis + " ms"
                        : "");
        System.out.printf("  sent          %,10.0f msg/s%n", r.sentPerSecond());
        System.out.printf("  end to end    %,10.0f msg/s (received and deleted)%n", r.receivedPerSecond());
        latency("send (batch)", r.sendLatencyMicros());
        latency("end to end", r.endToEndMicros());
        System.out.printf("  acknowledged %,d, lost %d, duplicates %d, errors %d%n", r.acknowledged(), r.lost(),
                r.duplicates(), r.errors());
        System.out.printf("  CPU s per 1,000 messages end to end: server %.3f, generator %.3f%n",
                r.serverCpuSecondsPer1000(), r.generatorCpuSecondsPer1000());
        System.out.printf("  longest gap between successes: send %d ms, receive %d ms%n", r.longestSendGapMillis(),
                r.longestReceiveGapMillis());
    }

    private static void latency(String name, Histogram h) {
        System.out.printf("  %-13s p50 %7.1f ms  p99 %7.1f ms  p99.9 %7.1f ms  max %7.1f ms  (n=%,d)%n", name,
                h.getValueAtPercentile(50) / 1000.0, h.getValueAtPercentile(99) / 1000.0,
                h.getValueAtPercentile(99.9) / 1000.0, h.getMaxValue() / 1000.0, h.getTotalCount());
    }
}
