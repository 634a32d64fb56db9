package io.sluice.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.MessageAttributeValue;
import software.amazon.awssdk.services.sqs.model.MessageSystemAttributeName;
import software.amazon.awssdk.services.sqs.model.SqsException;

/**
 * Producer order on a FIFO queue with {@code SluiceReorderWindowMillis}, through the AWS SDK against {@code sluice dev}
 * (the cluster runs the same check in {@link ClusterEndToEndIT}): three producers whose clocks lag by 0, 150 and 400 ms
 * send interleaved events for the same users, each after a random pause of up to 300 ms, so events often arrive out
 * of producer order; consumers see each user's events in producer order (by {@code Sluice.ProducerTime}, then
 * {@code Sluice.ProducerId}), a message flagged {@code Sluice.Late} exactly when something later in producer order was
 * delivered before it, and stragglers sent 10 s late are all flagged and counted in the arrival skew's p99.
 */
class ProducerOrderIT extends SharedServer {
    static final int WINDOW_MILLIS = 2000;
    static final int USERS = 8;
    static final int EVENTS_PER_PRODUCER = 40;
    static final long[] CLOCK_LAG_MILLIS = {0, 150, 400};

    @Test
    void eachUsersEventsArriveInProducerOrderAndStragglersAreFlagged() throws Exception {
        producerOrderHolds(sqs, unique("order"));
    }

    @Test
    void theAttributesAreCheckedAndTheNamesReserved() {
        SqsException standard = assertThrows(SqsException.class, () -> sqs.createQueue(b -> b
                .queueName(unique("no-window")).attributesWithStrings(Map.of("SluiceReorderWindowMillis", "100"))));
        assertEquals("InvalidAttributeName", standard.awsErrorDetails().errorCode());
        assertEquals(400, standard.statusCode());
        String url = sqs.createQueue(b -> b.queueName(unique("window") + ".fifo").attributesWithStrings(Map.of(
                "FifoQueue", "true", "SluiceReorderWindowMillis", "1500"))).queueUrl();
        SqsException tooLong = assertThrows(SqsException.class, () -> sqs.setQueueAttributes(b -> b.queueUrl(url)
                .attributesWithStrings(Map.of("SluiceReorderWindowMillis", "60001"))));
        assertEquals("InvalidAttributeValue", tooLong.awsErrorDetails().errorCode());
        assertEquals("1500", attributes(sqs, url).get("SluiceReorderWindowMillis"), "a refused value changes nothing");
        assertFalse(attributes(sqs, url).containsKey("SluiceArrivalSkewP99Millis"), "not in All before timed messages");
        assertEquals("0", sqs.getQueueAttributes(b -> b.queueUrl(url).attributeNamesWithStrings(
                "SluiceArrivalSkewP99Millis")).attributesAsStrings().get("SluiceArrivalSkewP99Millis"), "named: 0");
        SqsException spoofed = assertThrows(SqsException.class, () -> sqs.sendMessage(b -> b.queueUrl(url)
                .messageBody("x").messageGroupId("g").messageDeduplicationId("x")
                .messageAttributes(Map.of("Sluice.Late", string("true")))));
        assertEquals("InvalidParameterValue", spoofed.awsErrorDetails().errorCode());
        SqsException badTime = assertThrows(SqsException.class, () -> sqs.sendMessage(b -> b.queueUrl(url)
                .messageBody("x").messageGroupId("g").messageDeduplicationId("x")
                .messageAttributes(Map.of("Sluice.ProducerTime", number("1.5")))));
        assertEquals("InvalidParameterValue", badTime.awsErrorDetails().errorCode());
        assertEquals("0", attributes(sqs, url).get("ApproximateNumberOfMessages"), "refused sends stored nothing");
    }

    /** One delivered event, as a consumer saw it. */
    record Seen(String body, long producerTime, String producerId, boolean late, long sequenceNumber) {
        int compareProducerOrder(Seen o) {
            int c = Long.compare(producerTime, o.producerTime);
            return c != 0 ? c : producerId.compareTo(o.producerId);
        }
    }

    /** The whole check, on any server: creates its queue under {@code name}. */
    static void producerOrderHolds(SqsClient sqs, String name) throws Exception {
        String url = sqs.createQueue(b -> b.queueName(name + ".fifo").attributesWithStrings(Map.of(
                "FifoQueue", "true", "SluiceReorderWindowMillis", Integer.toString(WINDOW_MILLIS)))).queueUrl();
        assertEquals(Integer.toString(WINDOW_MILLIS), attributes(sqs, url).get("SluiceReorderWindowMillis"));
        Map<String, List<Seen>> seen = new ConcurrentHashMap<>();
        AtomicInteger delivered = new AtomicInteger();
        int total = CLOCK_LAG_MILLIS.length * EVENTS_PER_PRODUCER;
        ExecutorService pool = Executors.newFixedThreadPool(CLOCK_LAG_MILLIS.length + 2);
        try {
            List<Future<?>> producers = new ArrayList<>();
            for (int p = 0; p < CLOCK_LAG_MILLIS.length; p++) {
                String producer = "p" + p;
                long lag = CLOCK_LAG_MILLIS[p];
                producers.add(pool.submit(() -> {
                    for (int i = 0; i < EVENTS_PER_PRODUCER; i++) {
                        long producerTime = System.currentTimeMillis() - lag;
                        Thread.sleep(ThreadLocalRandom.current().nextLong(300)); // the way to the queue takes a while
                        send(sqs, url, "user-" + ThreadLocalRandom.current().nextInt(USERS), producer + "-" + i,
                                producerTime, producer);
                    }
                    return null;
                }));
            }
            List<Future<?>> consumers = new ArrayList<>();
            for (int c = 0; c < 2; c++) {
                consumers.add(pool.submit(() -> consume(sqs, url, seen, delivered, total)));
            }
            for (Future<?> f : producers) {
                f.get(120, TimeUnit.SECONDS);
            }
            for (Future<?> f : consumers) {
                f.get(180, TimeUnit.SECONDS);
            }
            assertEquals(total, delivered.get(), "every event delivered once");
            int reordered = 0;
            int late = 0;
            for (List<Seen> events : seen.values()) {
                reordered += checkOneUser(events);
                late += (int) events.stream().filter(Seen::late).count();
            }
            System.out.printf("producer order: %d events, %d delivered out of arrival order, %d late%n", total,
                    reordered, late);
            assertTrue(reordered > 0, "the window reordered nothing: arrival order was producer order every time?");
            assertTrue(late < total / 2, "most events arrived inside the " + WINDOW_MILLIS + " ms window: " + late);

            // stragglers: produced 10 s ago, arriving after later events of the same user were delivered
            long old = System.currentTimeMillis() - 10_000;
            List<String> users = new ArrayList<>(seen.keySet());
            for (String user : users) {
                send(sqs, url, user, "straggler-" + user, old, "p9");
            }
            delivered.set(0);
            Map<String, List<Seen>> stragglers = new ConcurrentHashMap<>();
            pool.submit(() -> consume(sqs, url, stragglers, delivered, users.size())).get(180, TimeUnit.SECONDS);
            for (List<Seen> events : stragglers.values()) {
                for (Seen s : events) {
                    assertTrue(s.late(), s.body() + " arrived after later events of its user and must be flagged");
                }
            }
            assertEquals(users.size(), stragglers.values().stream().mapToInt(List::size).sum());
            long p99 = Long.parseLong(attributes(sqs, url).get("SluiceArrivalSkewP99Millis"));
            assertTrue(p99 >= 9_000, "stragglers 10 s late are more than 1% of the events: p99 " + p99);
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * One user's events in delivery order: each is late exactly when an event after it in producer order was
     * delivered before it; the others come in producer order. Returns how many were delivered before an event that
     * arrived earlier (a lower SequenceNumber): the window's reordering.
     */
    private static int checkOneUser(List<Seen> events) {
        Seen latest = null;
        int reordered = 0;
        long maxSequence = -1;
        for (Seen s : events) {
            boolean shouldBeLate = latest != null && s.compareProducerOrder(latest) < 0;
            assertEquals(shouldBeLate, s.late(), s.body() + " late flag; delivered after " + latest);
            if (!s.late()) {
                latest = s;
            }
            if (s.sequenceNumber() < maxSequence) {
                reordered++;
            }
            maxSequence = Math.max(maxSequence, s.sequenceNumber());
        }
        List<Seen> onTime = events.stream().filter(s -> !s.late()).toList();
        List<Seen> sorted = new ArrayList<>(onTime);
        sorted.sort(Seen::compareProducerOrder);
        assertEquals(sorted, onTime, "on-time events in producer order");
        return reordered;
    }

    private static Void consume(SqsClient sqs, String url, Map<String, List<Seen>> seen, AtomicInteger delivered,
                                int total) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(150);
        while (delivered.get() < total && System.nanoTime() < deadline) {
            List<Message> got = sqs.receiveMessage(b -> b.queueUrl(url).maxNumberOfMessages(10).waitTimeSeconds(1)
                    .messageAttributeNames("All").messageSystemAttributeNames(MessageSystemAttributeName.ALL))
                    .messages();
            for (Message m : got) {
                Map<String, MessageAttributeValue> a = m.messageAttributes();
                MessageAttributeValue late = a.get("Sluice.Late");
                Seen s = new Seen(m.body(), Long.parseLong(a.get("Sluice.ProducerTime").stringValue()),
                        a.get("Sluice.ProducerId").stringValue(), late != null && "true".equals(late.stringValue()),
                        Long.parseLong(m.attributes().get(MessageSystemAttributeName.SEQUENCE_NUMBER)));
                // recorded before the delete: the group's next message cannot be delivered before it
                seen.computeIfAbsent(m.attributes().get(MessageSystemAttributeName.MESSAGE_GROUP_ID),
                        k -> java.util.Collections.synchronizedList(new ArrayList<>())).add(s);
                sqs.deleteMessage(b -> b.queueUrl(url).receiptHandle(m.receiptHandle()));
                delivered.incrementAndGet();
            }
        }
        return null;
    }

    private static void send(SqsClient sqs, String url, String user, String body, long producerTime,
                             String producer) {
        sqs.sendMessage(b -> b.queueUrl(url).messageGroupId(user).messageDeduplicationId(body).messageBody(body)
                .messageAttributes(Map.of("Sluice.ProducerTime", number(Long.toString(producerTime)),
                        "Sluice.ProducerId", string(producer))));
    }

    private static MessageAttributeValue number(String value) {
        return MessageAttributeValue.builder().dataType("Number").stringValue(value).build();
    }

    private static MessageAttributeValue string(String value) {
        return MessageAttributeValue.builder().dataType("String").stringValue(value).build();
    }

    private static Map<String, String> attributes(SqsClient sqs, String url) {
        return sqs.getQueueAttributes(b -> b.queueUrl(url).attributeNamesWithStrings("All")).attributesAsStrings();
    }
}
