package io.sluice.backend.engine;

import io.sluice.partition.NewMessage;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionConfig;
import io.sluice.partition.PartitionResponse;
import io.sluice.partition.QueueCounts;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.sluice.common.ReceiptHandle;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The per-partition totals behind the queue counters: what each command adds, and that they are durable. */
class PartitionTotalsTest {
    @TempDir
    Path dir;

    @Test
    void totalsCountWhatHappenedAndSurviveReopen() {
        PartitionConfig config = PartitionConfig.STANDARD_DEFAULTS.withMaxReceiveCount(1).withRetentionSeconds(600);
        try (EngineFixture q = new EngineFixture(dir, config)) {
            for (int i = 0; i < 6; i++) {
                q.send("m" + i);
            }
            List<ReceiptHandle> leased = q.receive(4, 30).stream().map(d -> d.delivery().receiptHandle()).toList();
            q.delete(leased.get(0));
            q.delete(leased.get(1));
            q.delete(leased.get(1)); // deleting twice removes once
            q.advanceSeconds(31);
            // 2 leased-then-expired-lease messages exceed maxReceiveCount 1 on this receive; 2 never-received deliver
            assertEquals(2, q.receive(10, 30).size());
            assertEquals(new PartitionTotals(6, 6, 2, 0, 0, 2, 0, 0), q.engine.state().totals());

            // everything left is past retention: the 2 leased are dropped by the sweep, and so are the 2 hand-offs no
            // dead-letter queue acknowledged within a retention period
            q.advanceSeconds(601);
            q.apply(new PartitionCommand.Expire(100));
            PartitionTotals expected = new PartitionTotals(6, 6, 2, 4, 0, 2, 0, 0);
            assertEquals(expected, q.engine.state().totals());

            q.reopen();
            assertEquals(expected, q.engine.state().totals(), "totals are stored with the partition");
            q.send("after");
            assertEquals(7, q.engine.state().totals().sent());
        }
    }

    @Test
    void purgeCountsWhatItRemoved() {
        try (EngineFixture q = new EngineFixture(dir, PartitionConfig.STANDARD_DEFAULTS)) {
            q.send("a");
            q.send("b");
            q.apply(new PartitionCommand.Purge());
            assertEquals(2, q.engine.state().totals().purged());
        }
    }

    @Test
    void metaWrittenBeforeTotalsTheColdTailLateDeferredCountsOrDelayChangesExistedReadsAsZero() {
        RecordCodec.Meta meta = new RecordCodec.Meta(42, 1000, -1, false, new PartitionTotals(1, 2, 3, 4, 5, 6, 7, 8, 9),
                5, 37, 900, 11, 30, true);
        byte[] full = RecordCodec.encodeMeta(meta);
        assertEquals(meta, RecordCodec.decodeMeta(full));
        byte[] seqOrdered = java.util.Arrays.copyOf(full, full.length - 1); // cold members keyed by seq
        assertEquals(new RecordCodec.Meta(42, 1000, -1, false, new PartitionTotals(1, 2, 3, 4, 5, 6, 7, 8, 9), 5, 37,
                900, 11, 30, false), RecordCodec.decodeMeta(seqOrdered));
        byte[] current = java.util.Arrays.copyOf(full, full.length - 1 - 8); // no delay change yet
        assertEquals(new RecordCodec.Meta(42, 1000, -1, false, new PartitionTotals(1, 2, 3, 4, 5, 6, 7, 8, 9), 5, 37,
                900, 11), RecordCodec.decodeMeta(current));
        byte[] old = java.util.Arrays.copyOf(current, 1 + 8 + 8 + 8 + 1); // the original layout ended at retired
        RecordCodec.Meta decoded = RecordCodec.decodeMeta(old);
        assertEquals(new RecordCodec.Meta(42, 1000, -1, false, PartitionTotals.ZERO, 0, 42, -1, 0), decoded);
        byte[] beforeDeferred = java.util.Arrays.copyOf(current, current.length - 8); // no deferred count yet
        assertEquals(new RecordCodec.Meta(42, 1000, -1, false, new PartitionTotals(1, 2, 3, 4, 5, 6, 7, 8, 9), 5, 37,
                900, 0), RecordCodec.decodeMeta(beforeDeferred));
        byte[] beforeLate = java.util.Arrays.copyOf(current, current.length - 2 * 8); // no late count yet
        assertEquals(new RecordCodec.Meta(42, 1000, -1, false, new PartitionTotals(1, 2, 3, 4, 5, 6, 7, 8), 5, 37, 900,
                0), RecordCodec.decodeMeta(beforeLate));
        byte[] beforeCold = java.util.Arrays.copyOf(current, current.length - 5 * 8); // totals, no cold tail yet
        assertEquals(new RecordCodec.Meta(42, 1000, -1, false, new PartitionTotals(1, 2, 3, 4, 5, 6, 7, 8), 0, 42, -1,
                0), RecordCodec.decodeMeta(beforeCold));
    }

    @Test
    void countsAtNowSeeDeadlinesPassedSinceTheLastCommand() {
        try (EngineFixture q = new EngineFixture(dir, PartitionConfig.STANDARD_DEFAULTS)) {
            q.send("a");
            q.send(NewMessage.of("d", "delayed").withDelaySeconds(5));
            q.receiveOne(10);
            long now = q.clock.nowMillis();
            // the totals ride along (2 sent, 1 received): the console's rates are made from them
            assertEquals(new QueueCounts(0, 1, 1, 0, now, -1, -1, 2, 1), q.engine.state().countsAt(now));
            assertEquals(new QueueCounts(1, 1, 0, 0, now, -1, -1, 2, 1), q.engine.state().countsAt(now + 6_000),
                    "delay over");
            assertEquals(new QueueCounts(2, 0, 0, 0, now, -1, -1, 2, 1), q.engine.state().countsAt(now + 11_000),
                    "lease over");
            assertEquals(new QueueCounts(0, 1, 1, 0, now), q.counts(), "read-only: the state did not move");
        }
    }

    @Test
    void theBacklogLimitCountsNeitherPendingHandOffsNorFifoDuplicates() {
        PartitionConfig fifo = PartitionConfig.FIFO_DEFAULTS.withMaxBacklog(2);
        try (EngineFixture q = new EngineFixture(dir, fifo)) {
            NewMessage first = NewMessage.fifo("id-1", "one", "g", "dedup-1");
            q.send(first);
            q.send(NewMessage.fifo("id-2", "two", "g2", "dedup-2"));
            // full: a retry of a stored message is still answered with the original, not throttled
            PartitionResponse retry = q.apply(new PartitionCommand.Send(List.of(first))).response();
            PartitionResponse.Sent sent = org.junit.jupiter.api.Assertions.assertInstanceOf(PartitionResponse.Sent.class, retry);
            assertEquals("id-1", sent.messages().get(0).messageId());
            PartitionResponse fresh = q.apply(new PartitionCommand.Send(List.of(
                    NewMessage.fifo("id-3", "three", "g3", "dedup-3")))).response();
            assertEquals(io.sluice.common.SqsError.REQUEST_THROTTLED, org.junit.jupiter.api.Assertions.assertInstanceOf(
                    PartitionResponse.Rejected.class, fresh).failure().error());
        }
        try (EngineFixture q = new EngineFixture(dir.resolve("std"), PartitionConfig.STANDARD_DEFAULTS.withMaxBacklog(2)
                .withMaxReceiveCount(1))) {
            q.send("a");
            q.send("b");
            q.receive(10, 1);
            q.advanceSeconds(2);
            q.receive(10, 1); // both exceed maxReceiveCount: handed off, pending until acknowledged
            assertEquals(2, q.engine.state().pendingDeadLetters().size());
            q.send("c"); // pending hand-offs are leaving: they do not count against the limit
            assertEquals(1, q.counts().visible());
        }
    }
}
