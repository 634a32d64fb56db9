package io.sluice.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.sluice.testing.Ports;
import io.sluice.worker.Backoff;
import io.sluice.worker.DownstreamException;
import io.sluice.worker.MessageContext;
import io.sluice.worker.SluiceWorker;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.elasticmq.rest.sqs.SQSRestServer;
import org.elasticmq.rest.sqs.SQSRestServerBuilder;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.services.sqs.SqsAsyncClient;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.MessageAttributeValue;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchRequestEntry;

/**
 * Issue 43: what a fleet operator relies on in {@code sluice-worker}, against {@code sluice dev} and ElasticMQ (both
 * real servers started here, reached over HTTP through the AWS SDK): FIFO groups run one message at a time and in
 * order while groups run in parallel; poison messages back off to their dead-letter queue without opening the
 * default breaker; a downstream outage opens it, receives stop, and recovery resumes them; the handler's context
 * (system attributes, retry after a set time, dead-letter now with a reason, acknowledge early) and a batch handler's
 * per-message outcomes; the log says what happened, once per interval.
 */
class WorkerSemanticsIT {
    /** A server the worker runs against. */
    record Server(String name, URI endpoint, SqsClient sqs) {
        @Override
        public String toString() {
            return name;
        }
    }

    private static SluiceProcess sluice;
    private static SQSRestServer elasticMq;
    private static final List<Server> SERVERS = new ArrayList<>();

    @BeforeAll
    static void start() throws Exception {
        sluice = SluiceProcess.start("worker-semantics");
        SERVERS.add(new Server("sluice dev", sluice.endpoint(), SqsClients.client(sluice.endpoint())));
        int port = Ports.free();
        elasticMq = SQSRestServerBuilder.withInterface("127.0.0.1").withPort(port).start();
        elasticMq.waitUntilStarted();
        URI endpoint = URI.create("http://127.0.0.1:" + port);
        SERVERS.add(new Server("ElasticMQ", endpoint, SqsClients.client(endpoint)));
    }

    @AfterAll
    static void stop() throws Exception {
        SERVERS.forEach(s -> s.sqs().close());
        SERVERS.clear();
        if (elasticMq != null) {
            elasticMq.stopAndWait();
        }
        if (sluice != null) {
            sluice.close();
        }
    }

    static Stream<Server> servers() {
        return SERVERS.stream();
    }

    private static SqsAsyncClient async(Server s) {
        return SqsClients.async(s.endpoint(), SluiceProcess.ACCESS_KEY, SluiceProcess.SECRET_KEY, 64);
    }

    private static String name(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    /** A queue and its dead-letter queue (maxReceiveCount given); returns {queue, dead-letter queue}. */
    private static String[] withDeadLetters(Server s, String prefix, boolean fifo, int maxReceives) {
        String suffix = fifo ? ".fifo" : "";
        Map<String, String> dlqAttributes = fifo ? Map.of("FifoQueue", "true") : Map.of();
        String dlq = s.sqs().createQueue(b -> b.queueName(name(prefix + "-dlq") + suffix)
                .attributesWithStrings(dlqAttributes)).queueUrl();
        String arn = s.sqs().getQueueAttributes(b -> b.queueUrl(dlq).attributeNamesWithStrings("QueueArn"))
                .attributesAsStrings().get("QueueArn");
        Map<String, String> attributes = new java.util.HashMap<>(Map.of("VisibilityTimeout", "30", "RedrivePolicy",
                "{\"maxReceiveCount\":\"" + maxReceives + "\",\"deadLetterTargetArn\":\"" + arn + "\"}"));
        if (fifo) {
            attributes.put("FifoQueue", "true");
            attributes.put("ContentBasedDeduplication", "true");
        }
        String url = s.sqs().createQueue(b -> b.queueName(name(prefix) + suffix).attributesWithStrings(attributes))
                .queueUrl();
        return new String[] {url, dlq};
    }

    private static void send(Server s, String url, List<SendMessageBatchRequestEntry> entries) {
        for (int from = 0; from < entries.size(); from += 10) {
            List<SendMessageBatchRequestEntry> batch = entries.subList(from, Math.min(entries.size(), from + 10));
            assertEquals(batch.size(), s.sqs().sendMessageBatch(b -> b.queueUrl(url).entries(batch)).successful()
                    .size());
        }
    }

    private static int visible(Server s, String url) {
        return Integer.parseInt(s.sqs().getQueueAttributes(b -> b.queueUrl(url).attributeNamesWithStrings(
                "ApproximateNumberOfMessages")).attributesAsStrings().get("ApproximateNumberOfMessages"));
    }

    private static List<Message> drain(Server s, String url, int expected) {
        List<Message> out = new ArrayList<>();
        await().atMost(Duration.ofSeconds(120)).until(() -> {
            out.addAll(s.sqs().receiveMessage(b -> b.queueUrl(url).maxNumberOfMessages(10).waitTimeSeconds(1)
                    .messageAttributeNames("All").messageSystemAttributeNamesWithStrings("All")).messages());
            return out.size() >= expected;
        });
        return out;
    }

    /**
     * 16 groups of 200 messages at concurrency 16: no two messages of a group ever run at once, each group runs in
     * its send order exactly once, and groups run side by side (the most groups running at once, and the handler time
     * over the wall time, show it).
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("servers")
    void fifoGroupsRunInOrderOneAtATimeAndSideBySide(Server s) throws Exception {
        String url = s.sqs().createQueue(b -> b.queueName(name("fifo-order") + ".fifo").attributesWithStrings(Map.of(
                "FifoQueue", "true", "ContentBasedDeduplication", "true", "VisibilityTimeout", "30"))).queueUrl();
        int groups = 16;
        int perGroup = 200;
        List<SendMessageBatchRequestEntry> entries = new ArrayList<>();
        for (int i = 0; i < perGroup; i++) {
            for (int g = 0; g < groups; g++) {
                entries.add(SendMessageBatchRequestEntry.builder().id("e" + g).messageGroupId("g" + g)
                        .messageBody("g" + g + ":" + i).build());
            }
        }
        send(s, url, entries);
        Map<String, List<Integer>> order = new ConcurrentHashMap<>();
        Map<String, AtomicInteger> runningInGroup = new ConcurrentHashMap<>();
        AtomicInteger overlaps = new AtomicInteger();
        AtomicInteger groupsRunning = new AtomicInteger();
        AtomicInteger mostGroupsRunning = new AtomicInteger();
        AtomicInteger handled = new AtomicInteger();
        long start = System.nanoTime();
        try (SqsAsyncClient client = async(s);
             SluiceWorker worker = SluiceWorker.builder(client, url, m -> {
                 String[] parts = m.body().split(":");
                 AtomicInteger mine = runningInGroup.computeIfAbsent(parts[0], g -> new AtomicInteger());
                 if (mine.incrementAndGet() > 1) {
                     overlaps.incrementAndGet();
                 }
                 mostGroupsRunning.accumulateAndGet(groupsRunning.incrementAndGet(), Math::max);
                 try {
                     order.computeIfAbsent(parts[0], g -> new CopyOnWriteArrayList<>()).add(Integer.parseInt(parts[1]));
                     Thread.sleep(10);
                 } finally {
                     groupsRunning.decrementAndGet();
                     mine.decrementAndGet();
                     handled.incrementAndGet();
                 }
             }).concurrency(16).waitTime(Duration.ofSeconds(1)).build().start()) {
            await().atMost(Duration.ofMinutes(5)).until(() -> handled.get() >= groups * perGroup);
        }
        double wall = (System.nanoTime() - start) / 1e9;
        double handlerSeconds = groups * perGroup * 0.010;
        System.out.printf("%s FIFO: %d groups x %d at concurrency 16 in %.1f s (%.1f s of handler time, %.1fx);"
                        + " at most %d groups at once; %d overlaps%n", s, groups, perGroup, wall, handlerSeconds,
                handlerSeconds / wall, mostGroupsRunning.get(), overlaps.get());
        assertEquals(0, overlaps.get(), "two messages of one group ran at once");
        List<Integer> expected = java.util.stream.IntStream.range(0, perGroup).boxed().toList();
        for (int g = 0; g < groups; g++) {
            assertEquals(expected, order.get("g" + g), "group g" + g + " in send order, each once");
        }
        assertTrue(mostGroupsRunning.get() >= 8, "groups run side by side: at most " + mostGroupsRunning.get());
        assertTrue(handlerSeconds / wall >= 2, String.format("parallel: %.1f s of handler time in %.1f s",
                handlerSeconds, wall));
    }

    /**
     * A FIFO message that does not succeed holds back its group and not the others: a:3 asks to be retried in 3 s
     * (group b finishes meanwhile), a:6 fails once (a jittered back-off); group a still runs in order.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("servers")
    void aFifoMessageThatDoesNotSucceedHoldsBackItsGroupOnly(Server s) throws Exception {
        String url = s.sqs().createQueue(b -> b.queueName(name("fifo-fail") + ".fifo").attributesWithStrings(Map.of(
                "FifoQueue", "true", "ContentBasedDeduplication", "true", "VisibilityTimeout", "30"))).queueUrl();
        List<SendMessageBatchRequestEntry> entries = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            entries.add(SendMessageBatchRequestEntry.builder().id("a" + i).messageGroupId("a").messageBody("a:" + i)
                    .build());
            entries.add(SendMessageBatchRequestEntry.builder().id("b" + i).messageGroupId("b").messageBody("b:" + i)
                    .build());
        }
        send(s, url, entries);
        List<String> done = new CopyOnWriteArrayList<>();
        Set<String> triedOnce = ConcurrentHashMap.newKeySet();
        try (SqsAsyncClient client = async(s);
             SluiceWorker worker = SluiceWorker.contextBuilder(client, url, c -> {
                 if (c.body().equals("a:3") && triedOnce.add(c.body())) {
                     c.retryAfter(Duration.ofSeconds(3));
                     return;
                 }
                 if (c.body().equals("a:6") && triedOnce.add(c.body())) {
                     throw new IllegalStateException("a:6 fails once");
                 }
                 done.add(c.body());
             }).concurrency(4).waitTime(Duration.ofSeconds(1))
                     .backoff(new Backoff(Duration.ofSeconds(2), 1, Duration.ofSeconds(2))).build().start()) {
            await().atMost(Duration.ofSeconds(120)).until(() -> done.size() == 20);
        }
        List<String> a = done.stream().filter(b -> b.startsWith("a:")).toList();
        List<String> b = done.stream().filter(x -> x.startsWith("b:")).toList();
        assertEquals(java.util.stream.IntStream.range(0, 10).mapToObj(i -> "a:" + i).toList(), a, "group a in order");
        assertEquals(java.util.stream.IntStream.range(0, 10).mapToObj(i -> "b:" + i).toList(), b, "group b in order");
        assertTrue(done.indexOf("b:9") < done.indexOf("a:3"), "group b did not wait for a:3's retry: " + done);
    }

    /**
     * 5 % poison messages (always failing) with the default breaker: every good message is done, every poison one is
     * in the dead-letter queue within maxReceiveCount back-offs, the breaker never opens, and the failures are logged
     * at WARN naming the queue, at most one line per interval.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("servers")
    void poisonMessagesGoToTheDeadLetterQueueWithoutOpeningTheBreaker(Server s) throws Exception {
        String[] queues = withDeadLetters(s, "poison", false, 3);
        List<SendMessageBatchRequestEntry> entries = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            entries.add(SendMessageBatchRequestEntry.builder().id("e" + i)
                    .messageBody((i % 20 == 0 ? "poison-" : "good-") + i).build());
        }
        send(s, queues[0], entries);
        Set<String> good = ConcurrentHashMap.newKeySet();
        List<String> transitions = new CopyOnWriteArrayList<>();
        List<Long> failedAt = new CopyOnWriteArrayList<>();
        ListAppender<ILoggingEvent> log = capture();
        long start = System.nanoTime();
        try (SqsAsyncClient client = async(s);
             SluiceWorker worker = SluiceWorker.builder(client, queues[0], m -> {
                 if (m.body().startsWith("poison-")) {
                     failedAt.add(System.nanoTime());
                     throw new IllegalArgumentException("cannot parse " + m.body());
                 }
                 good.add(m.body());
             }).concurrency(16).waitTime(Duration.ofSeconds(1)).failureLogInterval(Duration.ofSeconds(2))
                     .backoff(new Backoff(Duration.ofSeconds(1), 1, Duration.ofSeconds(1))).build()) {
            worker.circuitBreaker().getEventPublisher().onStateTransition(e -> transitions.add(e.toString()));
            worker.start();
            await().atMost(Duration.ofSeconds(120)).until(() -> good.size() == 190);
            // 3 receives, each followed by a back-off of at most 1 s: the third receive moves it
            await().atMost(Duration.ofSeconds(3 * 1 + 30)).until(() -> visible(s, queues[1]) == 10);
            assertEquals(CircuitBreaker.State.CLOSED, worker.circuitBreaker().getState());
            assertEquals(0, worker.circuitBreaker().getMetrics().getNumberOfFailedCalls(),
                    "a message's own failures are not the downstream's: not counted");
            assertTrue(worker.circuitBreaker().getMetrics().getNumberOfSuccessfulCalls() > 0, "successes are");
        } finally {
            release(log);
        }
        System.out.printf("%s poison: 190 good done and 10 poison dead-lettered in %.1f s; breaker transitions %s%n",
                s, (System.nanoTime() - start) / 1e9, transitions);
        assertEquals(List.of(), transitions, "the breaker never left CLOSED");
        assertEquals(10, drain(s, queues[1], 10).stream().filter(m -> m.body().startsWith("poison-")).count());
        List<ILoggingEvent> failures = log.list.stream().filter(e -> e.getLevel() == Level.WARN
                && e.getFormattedMessage().contains("handler failed")).toList();
        assertFalse(failures.isEmpty(), "handler failures are logged at WARN");
        failures.forEach(e -> assertTrue(e.getFormattedMessage().contains(queueName(queues[0])), e.getFormattedMessage()));
        assertTrue(failures.size() < 20, "rate-limited: " + failures.size() + " lines for 20+ failures");
        // a later line, counting those not logged, comes with the first failure after the 2 s interval; the back-off
        // (whole seconds, jittered down to 0) can fit every failure into the first interval on a fast run
        long spanMillis = TimeUnit.NANOSECONDS.toMillis(failedAt.get(failedAt.size() - 1) - failedAt.get(0));
        if (spanMillis > 2_500) {
            assertTrue(failures.stream().skip(1).anyMatch(e -> e.getFormattedMessage().contains("more failures since")),
                    "a later line counts those not logged (failures over " + spanMillis + " ms)");
        }
        assertTrue(log.list.stream().anyMatch(e -> e.getLevel() == Level.INFO && e.getFormattedMessage().contains(
                "worker started")), "start at INFO");
        assertTrue(log.list.stream().anyMatch(e -> e.getLevel() == Level.INFO && e.getFormattedMessage().contains(
                "worker stopped and drained")), "stop at INFO");
    }

    /**
     * The downstream down (handlers throw {@link DownstreamException}): the default-predicate breaker opens, logs it
     * at WARN, receives stop; the downstream back, it closes and every message is done.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("servers")
    void aDownstreamOutageOpensTheBreakerAndRecoveryResumes(Server s) throws Exception {
        String url = s.sqs().createQueue(b -> b.queueName(name("downstream"))).queueUrl();
        List<SendMessageBatchRequestEntry> entries = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            entries.add(SendMessageBatchRequestEntry.builder().id("e" + i).messageBody("m" + i).build());
        }
        send(s, url, entries);
        AtomicBoolean up = new AtomicBoolean(false);
        AtomicInteger receives = new AtomicInteger();
        Set<String> done = ConcurrentHashMap.newKeySet();
        CircuitBreaker breaker = CircuitBreaker.of("downstream", io.github.resilience4j.circuitbreaker
                .CircuitBreakerConfig.custom().slidingWindowSize(10).minimumNumberOfCalls(5).failureRateThreshold(50)
                .waitDurationInOpenState(Duration.ofSeconds(5)).permittedNumberOfCallsInHalfOpenState(2)
                .automaticTransitionFromOpenToHalfOpenEnabled(true).build());
        ListAppender<ILoggingEvent> log = capture();
        try (SqsAsyncClient client = WorkerIT.asyncClient(s.endpoint(), receives);
             SluiceWorker worker = SluiceWorker.builder(client, url, m -> {
                 if (!up.get()) {
                     throw new DownstreamException("ledger service unavailable");
                 }
                 done.add(m.body());
             }).concurrency(2).waitTime(Duration.ofSeconds(1)).circuitBreaker(breaker)
                     .backoff(new Backoff(Duration.ofSeconds(1), 1, Duration.ofSeconds(1))).build().start()) {
            await().atMost(Duration.ofSeconds(120)).until(() -> breaker.getState() == CircuitBreaker.State.OPEN);
            Thread.sleep(1_500); // a long poll begun before it opened has returned (wait 1 s)
            int whileOpen = receives.get();
            Thread.sleep(2_000); // the window under test: no receive in it
            assertEquals(whileOpen, receives.get(), "no receive while the breaker is open");
            up.set(true);
            await().atMost(Duration.ofSeconds(120)).until(() -> done.size() == 30);
            assertEquals(CircuitBreaker.State.CLOSED, breaker.getState());
        } finally {
            release(log);
        }
        assertTrue(log.list.stream().anyMatch(e -> e.getLevel() == Level.WARN && e.getFormattedMessage().contains(
                "circuit breaker") && e.getFormattedMessage().contains("from CLOSED to OPEN")
                && e.getFormattedMessage().contains(queueName(url))), "the opening is logged at WARN");
    }

    /**
     * The context: every system attribute (SentTimestamp, MessageGroupId, SequenceNumber); retryAfter brings the
     * message back after the time asked, not as a failure; deadLetterNow puts it in the dead-letter queue at once, the
     * reason in SluiceDeadLetterReason and its own attributes kept; acknowledge deletes it before the handler ends.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("servers")
    void theHandlerActsOnItsMessageThroughItsContext(Server s) throws Exception {
        String[] queues = withDeadLetters(s, "context", true, 5);
        List<SendMessageBatchRequestEntry> entries = new ArrayList<>();
        for (String body : List.of("retry", "poison", "plain")) {
            entries.add(SendMessageBatchRequestEntry.builder().id(body).messageGroupId(body).messageBody(body)
                    .messageAttributes(Map.of("origin", MessageAttributeValue.builder().dataType("String")
                            .stringValue("test").build())).build());
        }
        send(s, queues[0], entries);
        Map<String, List<Long>> seenAt = new ConcurrentHashMap<>();
        Map<String, MessageContext> contexts = new ConcurrentHashMap<>();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (SqsAsyncClient client = async(s);
             SluiceWorker worker = SluiceWorker.contextBuilder(client, queues[0], c -> {
                 seenAt.computeIfAbsent(c.body(), b -> new CopyOnWriteArrayList<>()).add(System.nanoTime());
                 contexts.put(c.body(), c);
                 switch (c.body()) {
                     case "retry" -> {
                         if (c.receiveCount() == 1) {
                             c.retryAfter(Duration.ofSeconds(3));
                         }
                     }
                     case "poison" -> c.deadLetterNow("schema v1 is no longer supported");
                     default -> { }
                 }
             }).concurrency(4).waitTime(Duration.ofSeconds(1)).meterRegistry(registry).build().start()) {
            await().atMost(Duration.ofSeconds(120)).until(() -> seenAt.getOrDefault("retry", List.of()).size() == 2
                    && seenAt.containsKey("plain"));
            await().atMost(Duration.ofSeconds(60)).until(() -> registry.find("sluice.worker.processed").counter()
                    .count() == 2);
        }
        MessageContext plain = contexts.get("plain");
        assertTrue(plain.sentTimestamp().isPresent(), "SentTimestamp");
        assertEquals("plain", plain.messageGroupId().orElseThrow());
        assertTrue(plain.sequenceNumber().isPresent(), "SequenceNumber");
        assertTrue(plain.systemAttributes().containsKey("MessageDeduplicationId"), plain.systemAttributes().toString());
        assertEquals(1, plain.receiveCount());
        List<Long> retry = seenAt.get("retry");
        long afterMillis = (retry.get(1) - retry.get(0)) / 1_000_000;
        assertTrue(afterMillis >= 2_900 && afterMillis < 3_000 + 10_000, "back after the 3 s asked: " + afterMillis);
        assertEquals(0.0, registry.find("sluice.worker.failed").counter().count(), "a retry is not a failure");
        assertEquals(1.0, registry.find("sluice.worker.retried").counter().count());
        assertEquals(1.0, registry.find("sluice.worker.dead_lettered").counter().count());
        assertEquals(1, seenAt.get("poison").size(), "dead-lettered at the first receive");
        Message dead = drain(s, queues[1], 1).get(0);
        assertEquals("poison", dead.body());
        assertEquals("schema v1 is no longer supported", dead.messageAttributes().get("SluiceDeadLetterReason")
                .stringValue());
        assertEquals("test", dead.messageAttributes().get("origin").stringValue(), "its own attributes kept");
        assertEquals("poison", dead.attributes().get(
                software.amazon.awssdk.services.sqs.model.MessageSystemAttributeName.MESSAGE_GROUP_ID));
        await().atMost(Duration.ofSeconds(30)).until(() -> visible(s, queues[0]) == 0);
    }

    /** acknowledge() deletes the message while its handler still runs. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("servers")
    void acknowledgeDeletesTheMessageBeforeTheHandlerReturns(Server s) throws Exception {
        String url = s.sqs().createQueue(b -> b.queueName(name("early"))).queueUrl();
        s.sqs().sendMessage(b -> b.queueUrl(url).messageBody("long job"));
        java.util.concurrent.CountDownLatch acknowledged = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch finish = new java.util.concurrent.CountDownLatch(1);
        try (SqsAsyncClient client = async(s);
             SluiceWorker worker = SluiceWorker.contextBuilder(client, url, c -> {
                 c.acknowledge();
                 acknowledged.countDown();
                 finish.await(60, java.util.concurrent.TimeUnit.SECONDS);
             }).waitTime(Duration.ofSeconds(1)).build().start()) {
            assertTrue(acknowledged.await(60, java.util.concurrent.TimeUnit.SECONDS));
            Map<String, String> counts = s.sqs().getQueueAttributes(b -> b.queueUrl(url).attributeNamesWithStrings(
                    "ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible")).attributesAsStrings();
            assertEquals(Map.of("ApproximateNumberOfMessages", "0", "ApproximateNumberOfMessagesNotVisible", "0"),
                    counts, "deleted while the handler runs");
            finish.countDown();
        }
    }

    /** A batch handler's per-message outcomes: failed ones come back, the rest are deleted. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("servers")
    void aBatchHandlerDecidesPerMessage(Server s) throws Exception {
        String url = s.sqs().createQueue(b -> b.queueName(name("batch"))).queueUrl();
        List<SendMessageBatchRequestEntry> entries = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            entries.add(SendMessageBatchRequestEntry.builder().id("e" + i).messageBody("m" + i).build());
        }
        send(s, url, entries);
        Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
        AtomicInteger largestBatch = new AtomicInteger();
        try (SqsAsyncClient client = async(s);
             SluiceWorker worker = SluiceWorker.batchBuilder(client, url, batch -> {
                 largestBatch.accumulateAndGet(batch.size(), Math::max);
                 for (MessageContext c : batch) {
                     int n = calls.computeIfAbsent(c.body(), b -> new AtomicInteger()).incrementAndGet();
                     if (Integer.parseInt(c.body().substring(1)) % 4 == 0 && n == 1) {
                         c.fail(new IllegalStateException("first try of " + c.body()));
                     }
                 }
             }).concurrency(2).waitTime(Duration.ofSeconds(1))
                     .backoff(new Backoff(Duration.ofSeconds(1), 1, Duration.ofSeconds(1))).build().start()) {
            await().atMost(Duration.ofSeconds(120)).until(() -> calls.size() == 40 && calls.entrySet().stream()
                    .allMatch(e -> Integer.parseInt(e.getKey().substring(1)) % 4 != 0 || e.getValue().get() == 2));
            await().atMost(Duration.ofSeconds(60)).until(() -> visible(s, url) == 0 && worker.inFlight() == 0);
        }
        calls.forEach((body, n) -> assertEquals(Integer.parseInt(body.substring(1)) % 4 == 0 ? 2 : 1, n.get(), body));
        assertTrue(largestBatch.get() > 1, "handled in batches: " + largestBatch.get());
    }

    private static String queueName(String url) {
        return url.substring(url.lastIndexOf('/') + 1);
    }

    private static ListAppender<ILoggingEvent> capture() {
        ListAppender<ILoggingEvent> appender = new ListAppender<>();
        appender.start();
        Logger logger = (Logger) LoggerFactory.getLogger(SluiceWorker.class);
        logger.addAppender(appender);
        logger.setLevel(Level.INFO);
        return appender;
    }

    private static void release(ListAppender<ILoggingEvent> appender) {
        ((Logger) LoggerFactory.getLogger(SluiceWorker.class)).detachAppender(appender);
    }
}
