package io.sluice.it;

import io.sluice.common.ReceiptHandle;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

/**
 * What the nemesis test's clients did and saw, and the checker of it. Every operation is recorded with the times it
 * started and ended on the test's monotonic clock (one machine: the servers' clocks read the same time, give or take
 * a clock fault's offset). The checker only reasons from what clients observed, so whatever the cluster did inside,
 * a finding is a promise broken as a client sees it.
 */
final class History {
    /** A send: {@code messageId} null when its outcome is unknown (an error or a timeout: it may be stored). */
    record Send(String queue, String body, String group, String dedupId, boolean poison, long start, long end,
                String messageId) {
    }

    /** One message of a receive's answer, with its place in the batch. */
    record Receive(String queue, String body, String messageId, String receipt, int receiveCount, long start,
                   long end, int visibilitySeconds, int position) {
    }

    /** A ChangeMessageVisibility attempted (it may have been applied even if its answer was lost). */
    record VisibilityChange(String receipt, int seconds, long start, long end) {
    }

    /** A DeleteMessage that succeeded. */
    record Delete(String receipt, long start, long end) {
    }

    /** A fault the nemesis injected, from its start until the cluster was whole again. */
    record Fault(String kind, String target, long start, long end) {
    }

    final ConcurrentLinkedQueue<Send> sends = new ConcurrentLinkedQueue<>();
    final ConcurrentLinkedQueue<Receive> receives = new ConcurrentLinkedQueue<>();
    final ConcurrentLinkedQueue<VisibilityChange> changes = new ConcurrentLinkedQueue<>();
    final ConcurrentLinkedQueue<Delete> deletes = new ConcurrentLinkedQueue<>();
    final ConcurrentLinkedQueue<Fault> faults = new ConcurrentLinkedQueue<>();

    static long now() {
        return System.nanoTime();
    }

    /** What the checker found. Only the first lists must be empty; pause anomalies are allowed, counted and listed. */
    record Findings(int acknowledged, int unknownOutcome, List<String> lost, List<String> unexplainedDoubleDeliveries,
                    List<String> doubleDeliveriesAcrossAPause, List<String> fifoViolations,
                    List<String> dedupViolations, List<String> missingFromDeadLetterQueue,
                    int duplicateDeliveries, int deliveries) {

        boolean clean() {
            return lost.isEmpty() && unexplainedDoubleDeliveries.isEmpty() && fifoViolations.isEmpty()
                    && dedupViolations.isEmpty() && missingFromDeadLetterQueue.isEmpty();
        }

        String summary() {
            return String.format("acknowledged sends %,d (outcome unknown %,d), deliveries %,d (redeliveries %,d),"
                            + " lost %d, double deliveries inside a visibility window %d unexplained + %d across a"
                            + " pause, FIFO order violations %d, dedup violations %d, dead-lettered missing from the"
                            + " DLQ %d", acknowledged, unknownOutcome, deliveries, duplicateDeliveries, lost.size(),
                    unexplainedDoubleDeliveries.size(), doubleDeliveriesAcrossAPause.size(), fifoViolations.size(),
                    dedupViolations.size(), missingFromDeadLetterQueue.size());
        }

        String details() {
            StringBuilder b = new StringBuilder();
            Map<String, List<String>> lists = new LinkedHashMap<>();
            lists.put("lost", lost);
            lists.put("unexplained double deliveries", unexplainedDoubleDeliveries);
            lists.put("double deliveries across a pause", doubleDeliveriesAcrossAPause);
            lists.put("FIFO violations", fifoViolations);
            lists.put("dedup violations", dedupViolations);
            lists.put("missing from the DLQ", missingFromDeadLetterQueue);
            lists.forEach((k, v) -> {
                if (!v.isEmpty()) {
                    b.append('\n').append(k).append(": ").append(v.subList(0, Math.min(10, v.size())));
                }
            });
            return b.toString();
        }
    }

    /**
     * Checks the history.
     *
     * @param deadLetterQueueOf each source queue's dead-letter queue
     * @param fifoQueues        the FIFO source queues (order and deduplication are checked on them)
     * @param slackMillis       clock uncertainty: how much earlier than the client's reckoning a lease may end (the
     *                          largest clock offset injected, plus scheduling noise)
     */
    Findings check(Map<String, String> deadLetterQueueOf, Set<String> fifoQueues, long slackMillis) {
        List<Send> acked = sends.stream().filter(s -> s.messageId() != null).toList();
        int unknown = (int) sends.stream().filter(s -> s.messageId() == null).count();
        Map<String, List<Receive>> byBody = new HashMap<>();
        for (Receive r : receives) {
            byBody.computeIfAbsent(r.queue() + "|" + r.body(), k -> new ArrayList<>()).add(r);
        }

        // 1. no acknowledged send lost: received from its queue (a poison message: from its dead-letter queue)
        List<String> lost = new ArrayList<>();
        List<String> missingFromDlq = new ArrayList<>();
        for (Send s : acked) {
            String dlq = deadLetterQueueOf.get(s.queue());
            boolean inSource = byBody.containsKey(s.queue() + "|" + s.body());
            boolean inDlq = dlq != null && byBody.containsKey(dlq + "|" + s.body());
            if (s.poison()) {
                if (!inDlq) {
                    (inSource ? missingFromDlq : lost).add(s.queue() + ": " + s.body());
                }
            } else if (!inSource && !inDlq) {
                lost.add(s.queue() + ": " + s.body());
            }
        }

        // 2. never delivered again inside an unexpired visibility window
        Map<String, List<VisibilityChange>> changesByReceipt = new HashMap<>();
        changes.forEach(c -> changesByReceipt.computeIfAbsent(c.receipt(), k -> new ArrayList<>()).add(c));
        Map<String, Delete> deleteByReceipt = new HashMap<>();
        deletes.forEach(d -> deleteByReceipt.putIfAbsent(d.receipt(), d));
        List<String> unexplained = new ArrayList<>();
        List<String> acrossPause = new ArrayList<>();
        int redeliveries = 0;
        long slack = TimeUnit.MILLISECONDS.toNanos(slackMillis);
        Map<String, List<Receive>> byMessage = new HashMap<>();
        for (Receive r : receives) {
            byMessage.computeIfAbsent(r.queue() + "|" + r.messageId(), k -> new ArrayList<>()).add(r);
        }
        for (List<Receive> list : byMessage.values()) {
            // In the order the server leased them: by receive count (each lease counts one more), then by when the
            // answer came. Not by answer alone: an older lease whose answer was held up (a paused or deposed leader)
            // can reach its client after a newer one, and was never in force at the same time.
            list.sort(Comparator.comparingInt(Receive::receiveCount).thenComparingLong(Receive::end));
            redeliveries += list.size() - 1;
            for (int i = 1; i < list.size(); i++) {
                Receive first = list.get(i - 1);
                Receive second = list.get(i);
                long windowEnd = first.start() + TimeUnit.SECONDS.toNanos(first.visibilitySeconds());
                for (VisibilityChange c : changesByReceipt.getOrDefault(first.receipt(), List.of())) {
                    windowEnd = Math.min(windowEnd, c.start() + TimeUnit.SECONDS.toNanos(c.seconds()));
                }
                if (second.end() >= windowEnd - slack) {
                    continue; // the window had ended (as far as the client can tell)
                }
                String what = String.format("%s: %s received at +%d ms and again at +%d ms (window to +%d ms;"
                                + " receive counts %d then %d; stored at %s then %s; the first request +%d..+%d ms,"
                                + " the second +%d..+%d ms; faults meanwhile: %s; +0 is %s)", first.queue(),
                        first.body(), ms(first.start()), ms(second.end()), ms(windowEnd), first.receiveCount(),
                        second.receiveCount(), storedAt(first), storedAt(second), ms(first.start()),
                        ms(first.end()), ms(second.start()), ms(second.end()),
                        faultsBetween(first.start() - TimeUnit.SECONDS.toNanos(10), second.end()),
                        originWallClock());
                if (overlapsPause(first.start(), second.end())) {
                    acrossPause.add(what);
                } else {
                    unexplained.add(what);
                }
            }
        }

        // 3. FIFO: within a group, first deliveries come in send order; 4. one message per deduplication id
        List<String> fifo = new ArrayList<>();
        List<String> dedup = new ArrayList<>();
        Map<String, Integer> sendIndex = new HashMap<>();
        Map<String, Integer> nextIndex = new HashMap<>();
        for (Send s : sends) { // in the order each producer sent (one producer per group, sequential)
            if (fifoQueues.contains(s.queue()) && !sendIndex.containsKey(s.queue() + "|" + s.body())) {
                String groupKey = s.queue() + "|" + s.group();
                int index = nextIndex.merge(groupKey, 1, Integer::sum);
                sendIndex.put(s.queue() + "|" + s.body(), index);
            }
        }
        for (String queue : fifoQueues) {
            Map<String, List<Receive>> firstByGroup = new HashMap<>();
            Map<String, Set<String>> idsByDedup = new HashMap<>();
            Map<String, String> groupOfBody = new HashMap<>();
            for (Send s : sends) {
                if (s.queue().equals(queue)) {
                    groupOfBody.put(s.body(), s.group());
                }
            }
            Set<String> seen = new HashSet<>();
            List<Receive> ordered = receives.stream().filter(r -> r.queue().equals(queue))
                    .sorted(Comparator.comparingLong(Receive::end).thenComparingInt(Receive::position)).toList();
            for (Receive r : ordered) {
                idsByDedup.computeIfAbsent(r.body(), k -> new HashSet<>()).add(r.messageId()); // dedup id = body
                if (seen.add(r.body())) {
                    firstByGroup.computeIfAbsent(groupOfBody.get(r.body()), k -> new ArrayList<>()).add(r);
                }
            }
            String dlq = deadLetterQueueOf.get(queue);
            receives.stream().filter(r -> r.queue().equals(dlq))
                    .forEach(r -> idsByDedup.computeIfAbsent(r.body(), k -> new HashSet<>()).add(r.messageId()));
            firstByGroup.forEach((group, list) -> {
                int last = 0;
                for (Receive r : list) {
                    int index = sendIndex.getOrDefault(queue + "|" + r.body(), -1);
                    if (index < last) {
                        fifo.add(queue + " group " + group + ": " + r.body() + " (sent #" + index
                                + ") first delivered after #" + last);
                    }
                    last = Math.max(last, index);
                }
            });
            idsByDedup.forEach((dedupId, ids) -> {
                if (ids.size() > 1) {
                    dedup.add(queue + ": deduplication id " + dedupId + " stored as " + ids.size() + " messages");
                }
            });
        }
        return new Findings(acked.size(), unknown, lost, unexplained, acrossPause, fifo, dedup, missingFromDlq,
                redeliveries, receives.size());
    }

    /** The faults that overlap {@code [from, to]}, with their times, for a finding's report. */
    private String faultsBetween(long from, long to) {
        List<String> out = new ArrayList<>();
        for (Fault f : faults) {
            if (f.start() <= to && f.end() >= from) {
                out.add(f.kind() + " " + f.target() + " +" + ms(f.start()) + "..+" + ms(f.end()) + " ms");
            }
        }
        return out.isEmpty() ? "none" : out.toString();
    }

    private boolean overlapsPause(long from, long to) {
        for (Fault f : faults) {
            if (f.kind().equals("pause") && f.start() <= to && f.end() >= from) {
                return true;
            }
        }
        return false;
    }

    private long origin = Long.MAX_VALUE;

    /** +0 ms of the findings (nanoTime): the first send's start. */
    private long origin() {
        if (origin == Long.MAX_VALUE) {
            origin = sends.stream().mapToLong(Send::start).min().orElse(0);
        }
        return origin;
    }

    private long ms(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(nanos - origin());
    }

    /** The wall clock (UTC) of +0 ms in the findings, to find their moments in the nodes' logs. */
    private String originWallClock() {
        return Instant.now().minusNanos(System.nanoTime() - origin()).toString();
    }

    /** Faults by kind, for the report. */
    Map<String, Integer> faultCounts() {
        Map<String, Integer> counts = new java.util.TreeMap<>();
        faults.forEach(f -> counts.merge(f.kind(), 1, Integer::sum));
        return counts;
    }

    /**
     * Where a delivered message is stored, from its receipt handle: partition and sequence number. Two deliveries of
     * one message id at the same place are one stored message leased twice; at two places, the send was stored twice.
     */
    static String storedAt(Receive r) {
        // a client's handle is sealed: the handle's own encoding, then a MAC (ReceiptHandleSeal)
        return r.receipt() == null || r.receipt().length() < ReceiptHandle.ENCODED_LENGTH ? "?"
                : ReceiptHandle.decode(r.receipt().substring(0, ReceiptHandle.ENCODED_LENGTH))
                        .map(h -> "partition " + h.partition() + " seq " + h.seq()).orElse("?");
    }
}
