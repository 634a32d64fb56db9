package io.sluice.backend.engine;

import io.sluice.partition.NewMessage;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionConfig;
import io.sluice.partition.PartitionResponse;
import io.sluice.partition.PayloadCodec;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import io.sluice.common.SqsError;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code SluiceMaxBacklog}: sends past the partition's limit are refused with RequestThrottled, nothing dropped. */
class BacklogLimitTest {
    @TempDir
    Path dir;

    @Test
    void sendsPastTheLimitAreThrottledUntilConsumersCatchUp() {
        try (EngineFixture q = new EngineFixture(dir, PartitionConfig.STANDARD_DEFAULTS.withMaxBacklog(3))) {
            q.send("a");
            q.send("b");
            PartitionResponse batch = q.apply(new PartitionCommand.Send(List.of(NewMessage.of("c", "c"),
                    NewMessage.of("d", "d")))).response();
            assertThrottled(batch); // 2 + 2 > 3: the whole batch is refused, none stored
            assertEquals(2, q.counts().visible());
            q.send("c");
            assertThrottled(q.apply(new PartitionCommand.Send(List.of(NewMessage.of("d", "d")))).response());
            assertEquals(3, q.counts().visible());
            assertEquals(3, q.engine.state().totals().sent(), "refused sends are not counted as sent");

            q.delete(q.receiveOne(30).delivery().receiptHandle());
            q.send("d"); // room again
            assertEquals(3, q.counts().visible() + q.counts().inflight());
        }
    }

    /**
     * A FIFO queue with a delay keeps its backlog in memory: past the partition's bound sends are throttled (a
     * retryable error, not an out-of-memory crash every replica would repeat), and accepted again once it drains.
     */
    @Test
    void aFifoQueueThatCannotPageIsThrottledAtItsMemoryBound() {
        try (EngineFixture q = new EngineFixture(dir, PartitionConfig.FIFO_DEFAULTS.withDelaySeconds(1))) {
            q.engine.state().maxIndexed = 3;
            q.sendFifo("g", "a");
            q.sendFifo("g", "b");
            q.sendFifo("h", "c");
            assertThrottled(q.apply(new PartitionCommand.Send(List.of(
                    NewMessage.fifo("d", "d", "g", "dedup-d")))).response());
            assertEquals(3, q.counts().delayed());
            q.advanceSeconds(1);
            q.delete(q.receiveOne(30).delivery().receiptHandle());
            q.sendFifo("g", "d"); // room again
            assertEquals(3, q.counts().visible() + q.counts().delayed());
        }
    }

    /**
     * Giving a FIFO queue a delay brings its backlog on disk into memory: with more than the bound queued the change
     * waits (nothing is paged in, the old configuration stays), and goes through once the backlog is under it.
     */
    @Test
    void aFifoDelayChangeWaitsWhileTheBacklogOnDiskIsPastTheBound() {
        try (EngineFixture q = new EngineFixture(dir, PartitionConfig.FIFO_DEFAULTS, 3)) {
            q.engine.state().maxIndexed = 5;
            for (int i = 0; i < 8; i++) {
                q.sendFifo("g" + i % 2, "m" + i);
            }
            assertEquals(5, q.engine.state().coldCount(), "three indexed, five on disk");
            assertThrottled(q.apply(new PartitionCommand.Configure(PartitionConfig.FIFO_DEFAULTS.withDelaySeconds(5)
                    .withVersion(2))).response());
            assertEquals(0, q.engine.state().config().delaySeconds(), "the old configuration stays");
            assertEquals(5, q.engine.state().coldCount(), "nothing paged in");
            List<io.sluice.partition.DeliveredMessage> got = q.receive(4, 30);
            assertEquals(4, got.size());
            got.forEach(d -> q.delete(d.delivery().receiptHandle())); // four left: under the bound
            assertInstanceOf(PartitionResponse.Done.class, q.apply(new PartitionCommand.Configure(
                    PartitionConfig.FIFO_DEFAULTS.withDelaySeconds(5).withVersion(2))).response());
            assertEquals(5, q.engine.state().config().delaySeconds());
        }
    }

    @Test
    void deadLetterHandOffsAreNeverRefusedButRedrivesAre() {
        try (EngineFixture q = new EngineFixture(dir, PartitionConfig.STANDARD_DEFAULTS.withMaxBacklog(1))) {
            q.send("a");
            NewMessage moved = new NewMessage("m", "dead", Map.of(), Map.of(), -1, null, null, null,
                    new NewMessage.Provenance(q.clock.nowMillis(), 3, q.clock.nowMillis(), "arn:source"));
            assertInstanceOf(PartitionResponse.Sent.class,
                    q.apply(new PartitionCommand.Send(List.of(moved))).response());
            assertEquals(2, q.counts().visible());
            NewMessage redriven = new NewMessage("r", "back", Map.of(), Map.of(), 0, null, null, null,
                    new NewMessage.Provenance(q.clock.nowMillis(), 0, 0, null));
            assertThrottled(q.apply(new PartitionCommand.Send(List.of(redriven))).response());
            assertEquals(2, q.counts().visible());
        }
    }

    @Test
    void limitIsPartOfTheStoredConfigAndOldConfigsHaveNone() {
        PartitionConfig limited = PartitionConfig.STANDARD_DEFAULTS.withMaxBacklog(500);
        byte[] bytes = PayloadCodec.encodeConfig(limited);
        assertEquals(limited, PayloadCodec.decodeConfig(bytes));
        // before the backlog, the version, the redelivery backoff (a 1-byte "none") and the reorder window
        byte[] old = java.util.Arrays.copyOf(bytes, bytes.length - 4 - 8 - 1 - 4);
        assertEquals(PartitionConfig.STANDARD_DEFAULTS, PayloadCodec.decodeConfig(old));
    }

    private static void assertThrottled(PartitionResponse response) {
        PartitionResponse.Rejected r = assertInstanceOf(PartitionResponse.Rejected.class, response);
        assertEquals(SqsError.REQUEST_THROTTLED, r.failure().error());
    }
}
