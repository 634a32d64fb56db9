package io.sluice.backend.engine;

import io.sluice.partition.DeadLetterReason;
import io.sluice.partition.Effect;
import io.sluice.partition.NewMessage;
import io.sluice.partition.PartitionCommand;
import io.sluice.common.MessageAttributeValue;
import io.sluice.common.ProducerOrder;
import io.sluice.common.validation.RedeliveryBackoff;
import io.sluice.partition.PartitionConfig;
import io.sluice.partition.PartitionOutcome;
import io.sluice.partition.PartitionResponse;
import io.sluice.partition.QueueCounts;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.common.ReceiptHandle;
import io.sluice.common.SqsFailure;
import io.sluice.partition.DeliveredMessage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * Random command sequences against the engine on RocksDB, checked step by step against a model of the rules,
 * and at the end against a twin engine fed the same log and against a reopened copy. jqwik prints the seed and
 * the shrunk sequence of a failure.
 */
class EnginePropertiesTest {

    sealed interface Op {
    }

    /** {@code producerSkew}: the producer time's offset from the partition's time, or {@link #UNTIMED} for none. */
    record SendOp(int group, int delaySeconds, int reuseDedupOf, int producerSkew) implements Op {
    }

    static final int UNTIMED = Integer.MIN_VALUE;

    /** Several messages in one Send command (a SendMessageBatch reaching one partition). */
    record SendBatchOp(List<SendOp> entries) implements Op {
    }

    record ReceiveOp(int max, int visibilitySeconds) implements Op {
    }

    record DeleteOp(int pick) implements Op {
    }

    record ChangeVisibilityOp(int pick, int visibilitySeconds) implements Op {
    }

    record AdvanceOp(int millis) implements Op {
    }

    record ExpireOp() implements Op {
    }

    record AckDeadLettersOp() implements Op {
    }

    /** Both replicas restart from disk (the twin between two of its entries). */
    record ReopenOp() implements Op {
    }

    /** PurgeQueue: everything stored goes, pending hand-offs included; refused within 60 s of the last one. */
    record PurgeOp() implements Op {
    }

    /**
     * The queue's delay changes (retroactive for FIFO messages never received, those on disk included, which take it
     * when read). The model keeps each message's earliest delivery time as if there were no delay: a later one is allowed.
     */
    record DelayOp(int seconds) implements Op {
    }

    /**
     * {@code hotLimit}: the index's size before sends go to the cold tail (small: paging happens all the time).
     * {@code backoff}: the queue's redelivery backoff, or null. The model keeps a lease's end as the earliest time the
     * message may come back (the jittered wait on top is the engine's), so a delivery before it fails the property.
     * {@code reorderWindowMillis}: FIFO only; sends carry producer times ahead of, at and behind the partition's clock.
     */
    record Scenario(boolean fifo, int maxReceiveCount, int retentionSeconds, int hotLimit, RedeliveryBackoff backoff,
                    int reorderWindowMillis, List<Op> ops) {
    }

    @Provide
    Arbitrary<Scenario> scenarios() {
        return Combinators.combine(Arbitraries.of(true, false), Arbitraries.of(0, 1, 3),
                Arbitraries.of(600, 1_209_600), Arbitraries.of(PartitionQueueState.DEFAULT_HOT_LIMIT, 3), backoffs(),
                Arbitraries.of(0, 500, 2_000), ops().list().ofMinSize(1).ofMaxSize(80)).as(Scenario::new);
    }

    /**
     * FIFO queues whose backlog pages (a limit of 3; with or without a reorder window, delays coming and going): groups
     * in memory, on disk, and between.
     */
    @Provide
    Arbitrary<Scenario> fifoColdScenarios() {
        return Combinators.combine(Arbitraries.of(0, 1, 3), Arbitraries.of(600, 1_209_600), backoffs(),
                Arbitraries.of(0, 0, 500, 2_000), ops().list().ofMinSize(10).ofMaxSize(100))
                .as((maxReceiveCount, retention, backoff, window, ops) ->
                        new Scenario(true, maxReceiveCount, retention, 3, backoff, window, ops));
    }

    private static Arbitrary<RedeliveryBackoff> backoffs() {
        return Arbitraries.of(new RedeliveryBackoff(2, 2, 60, RedeliveryBackoff.Jitter.FULL),
                new RedeliveryBackoff(1, 3, 30, RedeliveryBackoff.Jitter.EQUAL)).injectNull(0.5);
    }

    private static Arbitrary<SendOp> sendOps() {
        return Combinators.combine(Arbitraries.integers().between(0, 3), Arbitraries.of(0, 0, 0, 2, 30),
                Arbitraries.integers().between(-3, 12), Arbitraries.of(UNTIMED, 0, -100, -700, -2_500, 4_000))
                .as(SendOp::new);
    }

    private static Arbitrary<Op> ops() {
        return Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(6, sendOps()),
                net.jqwik.api.Tuple.of(2, sendOps().list().ofMinSize(2).ofMaxSize(6).map(SendBatchOp::new)),
                net.jqwik.api.Tuple.of(5, Combinators.combine(Arbitraries.integers().between(1, 10),
                        Arbitraries.of(0, 1, 5, 30, 43_200)).as(ReceiveOp::new)),
                net.jqwik.api.Tuple.of(3, Arbitraries.integers().between(0, 40).map(DeleteOp::new)),
                net.jqwik.api.Tuple.of(2, Combinators.combine(Arbitraries.integers().between(0, 40),
                        Arbitraries.of(0, 3, 60, 43_200)).as(ChangeVisibilityOp::new)),
                net.jqwik.api.Tuple.of(4, Arbitraries.of(1, 999, 1000, 4_000, 30_000, 200_000).map(AdvanceOp::new)),
                net.jqwik.api.Tuple.of(1, Arbitraries.just(new ExpireOp())),
                net.jqwik.api.Tuple.of(1, Arbitraries.just(new AckDeadLettersOp())),
                net.jqwik.api.Tuple.of(1, Arbitraries.just(new ReopenOp())),
                net.jqwik.api.Tuple.of(1, Arbitraries.just(new PurgeOp())),
                net.jqwik.api.Tuple.of(1, Arbitraries.of(0, 0, 3).map(DelayOp::new)));
    }

    @Property(tries = 150)
    void engineFollowsTheRules(@ForAll("scenarios") Scenario scenario) throws IOException {
        simulate(scenario);
    }

    @Property(tries = 200)
    void aFifoBacklogOnDiskAnswersAsIfIndexed(@ForAll("fifoColdScenarios") Scenario scenario) throws IOException {
        simulate(scenario);
    }

    private static void simulate(Scenario scenario) throws IOException {
        Path root = Files.createTempDirectory("sluice-prop");
        try {
            new Simulation(scenario, root).run();
        } finally {
            try (Stream<Path> walk = Files.walk(root)) {
                walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    /** The model of one message. */
    static final class ModelMessage {
        final String id;
        final int group;
        final long sentMillis;
        final int order;
        /** FIFO producer order: (order time, producer id, seq); arrival order without a window. */
        long orderMillis;
        String producerId = "";
        boolean late;
        long seq;
        long visibleAtMillis;
        long receivedAtMillis;
        int receiveCount;
        long handedOffMillis;
        String fate; // null while live: deleted, expired, dead-letter, acknowledged, hand-off expired

        ModelMessage(String id, int group, long sentMillis, int order) {
            this.id = id;
            this.group = group;
            this.sentMillis = sentMillis;
            this.order = order;
        }
    }

    static final class Simulation {
        final Scenario s;
        final PartitionConfig config;
        final EngineFixture engine;
        final EngineFixture twin;
        /** With a small limit: the same log with every message indexed, whose answers must be the same. */
        final EngineFixture indexedOnly;
        final Map<String, ModelMessage> byId = new HashMap<>();
        final Map<Long, ModelMessage> bySeq = new HashMap<>();
        final List<ModelMessage> sendOrder = new ArrayList<>();
        final List<ReceiptHandle> handles = new ArrayList<>();
        final Map<String, Long> dedupFirstSent = new HashMap<>();
        final Map<String, String> dedupOwner = new HashMap<>();
        final List<String> dedupIds = new ArrayList<>();
        final Set<Long> pendingDeadLetters = new HashSet<>();
        /** Per group: the latest producer order delivered, and when (a mark is kept 5 minutes after). */
        final Map<Integer, ModelMessage> markOf = new HashMap<>();
        final Map<Integer, Long> markedAt = new HashMap<>();
        int sent;
        /** Message ids are unique per send attempt (a duplicate's id is never stored). */
        int nextId;
        long lastPurgeMillis = -1;

        Simulation(Scenario s, Path root) throws IOException {
            this.s = s;
            PartitionConfig base = s.fifo() ? PartitionConfig.FIFO_DEFAULTS : PartitionConfig.STANDARD_DEFAULTS;
            this.config = base.withMaxReceiveCount(s.maxReceiveCount()).withRetentionSeconds(s.retentionSeconds())
                    .withRedeliveryBackoff(s.backoff()).withReorderWindowMillis(s.fifo() ? s.reorderWindowMillis() : 0);
            this.engine = new EngineFixture(Files.createDirectory(root.resolve("a")), config, s.hotLimit());
            this.twin = new EngineFixture(Files.createDirectory(root.resolve("b")), config, s.hotLimit());
            this.indexedOnly = s.hotLimit() == PartitionQueueState.DEFAULT_HOT_LIMIT ? null
                    : new EngineFixture(Files.createDirectory(root.resolve("c")), config);
        }

        long now() {
            return engine.clock.nowMillis();
        }

        final List<Mutation> twinEntry = new ArrayList<>();
        int twinEntryCommands;

        void writeTwinEntry() {
            twin.store.write(twinEntry, twin.logIndex);
            twin.engine.written();
            twinEntry.clear();
            twinEntryCommands = 0;
        }

        PartitionOutcome apply(PartitionCommand command) {
            PartitionOutcome outcome = engine.apply(command);
            // the twin applies the log as a shard does: three commands to an entry, written once at its end
            PartitionResponse twinResponse = twin.engine.applyBuffered(command, now(), twinEntry).response();
            twin.logIndex++;
            if (++twinEntryCommands == 3) {
                writeTwinEntry();
            }
            assertEquals(outcome.response(), twinResponse, "a replica writing entries of three commands answered "
                    + command + " differently");
            if (indexedOnly != null) { // where a message waits (index or cold tail) never changes an answer
                indexedOnly.clock.set(now());
                PartitionOutcome reference = indexedOnly.apply(command);
                assertEquals(reference.response(), outcome.response(), "the cold tail changed the answer to " + command);
                assertEquals(wakeless(reference.effects()), wakeless(outcome.effects()),
                        "the cold tail changed the effects of " + command);
            }
            for (Effect e : outcome.effects()) {
                if (e instanceof Effect.DeadLetter d) {
                    onDeadLetter(d);
                }
            }
            return outcome;
        }

        /**
         * Effects less the wake-ups of parked polls (when a message becomes visible, that some are): a FIFO partition
         * looks at its groups' heads on disk, not at every message's deadline (ColdTailTest checks its wake-ups).
         * Deliveries and hand-offs must still match.
         */
        static List<Effect> wakeless(List<Effect> effects) {
            return effects.stream()
                    .filter(e -> !(e instanceof Effect.VisibleAt) && !(e instanceof Effect.MessagesAvailable)).toList();
        }

        void run() {
            try {
                for (Op op : s.ops()) {
                    step(op);
                    checkCounts();
                }
                drainAndCompare();
            } finally {
                engine.close();
                twin.close();
                if (indexedOnly != null) {
                    indexedOnly.close();
                }
            }
        }

        void step(Op op) {
            if (op instanceof SendOp o) {
                send(List.of(o));
            } else if (op instanceof SendBatchOp o) {
                send(o.entries());
            } else if (op instanceof PurgeOp) {
                purge();
            } else if (op instanceof ReceiveOp o) {
                receive(o.max(), o.visibilitySeconds());
            } else if (op instanceof DeleteOp o && !handles.isEmpty()) {
                delete(handles.get(o.pick() % handles.size()));
            } else if (op instanceof ChangeVisibilityOp o && !handles.isEmpty()) {
                changeVisibility(handles.get(o.pick() % handles.size()), o.visibilitySeconds());
            } else if (op instanceof AdvanceOp o) {
                engine.clock.advanceMillis(o.millis());
            } else if (op instanceof ExpireOp) {
                apply(new PartitionCommand.Expire(1000));
                expireInModel();
            } else if (op instanceof AckDeadLettersOp) {
                List<Long> seqs = new ArrayList<>(pendingDeadLetters);
                apply(new PartitionCommand.AcknowledgeDeadLetters(seqs));
                seqs.forEach(seq -> bySeq.get(seq).fate = "acknowledged");
                pendingDeadLetters.clear();
            } else if (op instanceof DelayOp o) {
                apply(new PartitionCommand.Configure(config.withDelaySeconds(o.seconds())));
            } else if (op instanceof ReopenOp) {
                String before = engine.engine.state().describe();
                engine.reopen();
                assertEquals(before, engine.engine.state().describe(), "reopen rebuilt a different state");
                writeTwinEntry(); // a replica restarts between entries
                twin.reopen();
                assertEquals(before, twin.engine.state().describe(), "the twin reopened to a different state");
            }
        }

        /** One message of a Send command, with what the model needs to check its outcome. */
        record Sending(SendOp op, NewMessage message, String dedupId, long producerTime, String producerId) {
        }

        /** One Send command carrying {@code ops}' messages, checked entry by entry in order. */
        void send(List<SendOp> ops) {
            List<Sending> sending = new ArrayList<>();
            for (SendOp o : ops) {
                String id = "m" + nextId++;
                String dedupId = o.reuseDedupOf() >= 0 && o.reuseDedupOf() < dedupIds.size()
                        ? dedupIds.get(o.reuseDedupOf()) : "d" + id;
                NewMessage m = s.fifo() ? NewMessage.fifo(id, "body-" + id, "g" + o.group(), dedupId)
                        : NewMessage.of(id, "body-" + id).withDelaySeconds(o.delaySeconds());
                long producerTime = o.producerSkew() == UNTIMED ? -1 : Math.max(0, now() + o.producerSkew());
                String producerId = "p" + nextId % 3;
                if (producerTime >= 0) {
                    m = m.withAttributes(Map.of(ProducerOrder.PRODUCER_TIME,
                            new MessageAttributeValue("Number", Long.toString(producerTime), null),
                            ProducerOrder.PRODUCER_ID, new MessageAttributeValue("String", producerId, null)));
                }
                sending.add(new Sending(o, m, dedupId, producerTime, producerId));
            }
            List<PartitionResponse.SentMessage> results = ((PartitionResponse.Sent) apply(new PartitionCommand.Send(
                    sending.stream().map(Sending::message).toList())).response()).messages();
            assertEquals(ops.size(), results.size());
            for (int i = 0; i < ops.size(); i++) {
                sent(sending.get(i), results.get(i));
            }
        }

        /** The model's side of one sent message, in the command's order. */
        void sent(Sending sending, PartitionResponse.SentMessage result) {
            SendOp o = sending.op();
            String id = sending.message().messageId();
            String dedupId = sending.dedupId();
            long producerTime = sending.producerTime();
            String producerId = sending.producerId();
            Long first = dedupFirstSent.get(dedupId);
            boolean expectDuplicate = s.fifo() && first != null && now() < first + 300_000;
            assertEquals(expectDuplicate, result.duplicate(), "deduplication of " + dedupId);
            if (expectDuplicate) {
                assertEquals(dedupOwner.get(dedupId), result.messageId(), "a duplicate returns the original id");
                return;
            }
            assertEquals(id, result.messageId());
            dedupFirstSent.put(dedupId, now());
            dedupOwner.put(dedupId, id);
            dedupIds.add(dedupId);
            ModelMessage mm = new ModelMessage(id, o.group(), now(), sent++);
            mm.seq = result.seq();
            mm.visibleAtMillis = now() + (s.fifo() ? 0 : o.delaySeconds() * 1000L);
            mm.orderMillis = now();
            int window = s.fifo() ? s.reorderWindowMillis() : 0;
            if (window > 0) {
                if (producerTime >= 0) {
                    mm.orderMillis = Math.min(producerTime, now());
                    mm.producerId = producerId;
                }
                ModelMessage mark = markOf.get(o.group());
                boolean markLive = mark != null && now() < markedAt.get(o.group()) + 300_000;
                // a live mark decides; without one, a later message of the group still in flight does
                mm.late = markLive ? compareProducerTime(mm, mark) < 0 : sendOrder.stream().anyMatch(other ->
                        other.group == o.group() && other.fate == null && other.receiveCount > 0
                                && other.visibleAtMillis > now() && compareProducerTime(other, mm) > 0);
                if (!mm.late) {
                    mm.visibleAtMillis = Math.max(mm.visibleAtMillis, mm.orderMillis + window);
                }
            }
            byId.put(id, mm);
            bySeq.put(mm.seq, mm);
            sendOrder.add(mm);
        }

        /** Everything stored goes (messages past retention not yet swept too); at most one purge a minute. */
        void purge() {
            expireInModel();
            long stillStoredAtMost = sendOrder.stream().filter(m -> m.fate == null || "dead-letter".equals(m.fate)
                    || "expired".equals(m.fate) || "hand-off expired".equals(m.fate)).count();
            long liveOrPending = sendOrder.stream().filter(m -> m.fate == null || "dead-letter".equals(m.fate)).count();
            PartitionResponse r = apply(new PartitionCommand.Purge()).response();
            if (lastPurgeMillis >= 0 && now() - lastPurgeMillis < 60_000) {
                assertInstanceOf(PartitionResponse.Rejected.class, r, "a second purge within 60 s");
                return;
            }
            int purged = assertInstanceOf(PartitionResponse.Count.class, r).count();
            assertTrue(purged >= liveOrPending && purged <= stillStoredAtMost,
                    "purged " + purged + ", model " + liveOrPending + " to " + stillStoredAtMost);
            lastPurgeMillis = now();
            for (ModelMessage m : sendOrder) {
                if (m.fate == null || "dead-letter".equals(m.fate) || "expired".equals(m.fate)
                        || "hand-off expired".equals(m.fate)) {
                    m.fate = "purged";
                }
            }
            pendingDeadLetters.clear();
        }

        List<DeliveredMessage> receive(int max, int visibilitySeconds) {
            expireInModel();
            PartitionOutcome outcome = apply(new PartitionCommand.Receive(max, visibilitySeconds, null));
            if (outcome.response() instanceof PartitionResponse.Rejected) {
                return List.of();
            }
            List<DeliveredMessage> got = outcome.delivered();
            assertTrue(got.size() <= max);
            Set<String> inThisBatch = new HashSet<>();
            for (DeliveredMessage d : got) {
                ModelMessage m = byId.get(d.message().messageId());
                assertNotNull(m, "delivered a message that was never acknowledged as sent");
                assertNull(m.fate, "delivered a message that is " + m.fate);
                assertTrue(m.visibleAtMillis <= now(), "delivered while invisible or delayed: " + m.id);
                assertEquals(m.receiveCount + 1, d.delivery().receiveCount(), "receive count must go up by one");
                assertEquals(m.late, d.message().attributes().containsKey(ProducerOrder.LATE),
                        "late flag of " + m.id);
                if (s.fifo()) {
                    for (ModelMessage other : sendOrder) {
                        if (other.group == m.group && compareProducerOrder(other, m) < 0 && other.fate == null) {
                            assertTrue(inThisBatch.contains(other.id), "FIFO producer order broken in group " + m.group
                                    + ": " + m.id + " delivered before " + other.id);
                        }
                        if (other.group == m.group && other != m && other.fate == null && !inThisBatch.contains(other.id)
                                && other.receiveCount > 0 && other.visibleAtMillis > now()) {
                            throw new AssertionError("group " + m.group + " delivered while " + other.id + " in flight");
                        }
                    }
                }
                inThisBatch.add(m.id);
                if (s.fifo() && s.reorderWindowMillis() > 0) {
                    ModelMessage mark = markOf.get(m.group);
                    if (mark == null || now() >= markedAt.get(m.group) + 300_000 || compareProducerTime(mark, m) < 0) {
                        markOf.put(m.group, m);
                    }
                    markedAt.put(m.group, now());
                }
                m.receiveCount++;
                m.receivedAtMillis = now();
                m.visibleAtMillis = now() + visibilitySeconds * 1000L;
                handles.add(d.delivery().receiptHandle());
            }
            return got;
        }

        /** Producer order of two messages of a group: (order time, producer id, seq). */
        static int compareProducerOrder(ModelMessage a, ModelMessage b) {
            int c = compareProducerTime(a, b);
            return c != 0 ? c : Long.compare(a.seq, b.seq);
        }

        /** (order time, producer id) only: what a group's mark compares. */
        static int compareProducerTime(ModelMessage a, ModelMessage b) {
            int c = Long.compare(a.orderMillis, b.orderMillis);
            return c != 0 ? c : a.producerId.compareTo(b.producerId);
        }

        void delete(ReceiptHandle h) {
            expireInModel();
            ModelMessage m = bySeq.get(h.seq());
            boolean live = m.fate == null;
            boolean current = live && m.receiveCount == h.receiveCount() && m.visibleAtMillis > now();
            boolean expectOk = !s.fifo() || !live || current;
            SqsFailure f = ((PartitionResponse.EntryOutcomes) apply(new PartitionCommand.Delete(List.of(h))).response())
                    .failures().get(0);
            assertEquals(expectOk, f == null, "delete outcome for " + m.id + ": " + f);
            if (expectOk && live) {
                m.fate = "deleted";
            }
        }

        void changeVisibility(ReceiptHandle h, int seconds) {
            expireInModel(); // a message past retention is gone here too, swept or not
            ModelMessage m = bySeq.get(h.seq());
            boolean inflight = m.visibleAtMillis > now();
            boolean expectOk = m.fate == null && m.receiveCount == h.receiveCount() && (!s.fifo() || inflight)
                    && now() - m.receivedAtMillis + seconds * 1000L <= 43_200_000L;
            SqsFailure f = ((PartitionResponse.EntryOutcomes) apply(new PartitionCommand.ChangeVisibility(
                    List.of(new PartitionCommand.VisibilityChange(h, seconds)))).response()).failures().get(0);
            assertEquals(expectOk, f == null, "change visibility outcome for " + m.id + ": " + f);
            if (expectOk) {
                m.visibleAtMillis = now() + seconds * 1000L;
            }
        }

        void onDeadLetter(Effect.DeadLetter d) {
            ModelMessage m = bySeq.get(d.seq());
            assertNull(m.fate, "dead-lettered a message that is " + m.fate);
            assertEquals(DeadLetterReason.MAX_RECEIVES_EXCEEDED, d.reason());
            assertEquals(s.maxReceiveCount(), m.receiveCount, "handed off only on the receive that exceeds the count");
            assertTrue(m.visibleAtMillis <= now(), "handed off while in flight");
            m.fate = "dead-letter";
            m.handedOffMillis = now();
            pendingDeadLetters.add(d.seq());
        }

        /**
         * Messages past retention may disappear at any command; the model forgets them when they are due. So may a
         * hand-off nobody acknowledged for a retention period (its dead-letter queue is gone: dropped).
         */
        void expireInModel() {
            for (ModelMessage m : sendOrder) {
                if (m.fate == null && now() - m.sentMillis >= s.retentionSeconds() * 1000L) {
                    m.fate = "expired";
                } else if ("dead-letter".equals(m.fate) && now() - m.handedOffMillis >= s.retentionSeconds() * 1000L) {
                    m.fate = "hand-off expired";
                    pendingDeadLetters.remove(m.seq);
                }
            }
        }

        void checkCounts() {
            QueueCounts c = engine.counts();
            long liveOrPending = sendOrder.stream().filter(m -> m.fate == null || m.fate.equals("dead-letter")).count();
            long expiredButStillStored = sendOrder.stream().filter(m -> "expired".equals(m.fate)).count();
            long handOffsExpired = sendOrder.stream().filter(m -> "hand-off expired".equals(m.fate)).count();
            int stored = c.visible() + c.inflight() + c.delayed() + c.deadLetterPending();
            assertTrue(stored >= liveOrPending && stored <= liveOrPending + expiredButStillStored + handOffsExpired,
                    "no acknowledged message may vanish: engine holds " + stored + ", model " + liveOrPending);
            assertTrue(c.deadLetterPending() >= pendingDeadLetters.size()
                    && c.deadLetterPending() <= pendingDeadLetters.size() + handOffsExpired,
                    "pending hand-offs: engine " + c.deadLetterPending() + ", model " + pendingDeadLetters.size());
        }

        /** Same log, same state; then every live message is still deliverable. */
        void drainAndCompare() {
            writeTwinEntry();
            assertEquals(engine.engine.state().describe(), twin.engine.state().describe(), "replicas diverged");
            assertEquals(engine.dump(), twin.dump(), "stored bytes diverged");
            Set<String> received = new HashSet<>();
            // past every lease and every backoff after one
            engine.clock.advanceMillis(43_200_001L + (s.backoff() == null ? 0 : s.backoff().maxSeconds() * 1000L));
            expireInModel();
            for (int round = 0; round < 1000; round++) {
                List<DeliveredMessage> got = receive(10, 43_200);
                if (got.isEmpty()) {
                    break;
                }
                for (DeliveredMessage d : got) {
                    received.add(d.message().messageId());
                    delete(d.delivery().receiptHandle());
                }
            }
            Set<String> expected = new HashSet<>();
            sendOrder.stream().filter(m -> m.fate == null || m.fate.equals("deleted") && received.contains(m.id))
                    .forEach(m -> expected.add(m.id));
            assertEquals(expected, received, "every live message is delivered in the end");
        }
    }
}
