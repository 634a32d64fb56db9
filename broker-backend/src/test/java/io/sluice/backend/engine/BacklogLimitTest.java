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
     * A FIFO partition's index past its bound (messages in flight, a reorder window's stragglers: a backlog pages to disk
     * long before) throttles sends (a retryable error, not an out-of-memory crash every replica would repeat), and
     * accepts them again once it drains.
     */
    @Test
    void aFifoPartitionIsThrottledAtItsMemoryBound() {
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
     * Giving a FIFO queue a delay with its backlog on disk pages nothing in: the messages there take the new delay
     * (retroactive on FIFO queues) when they are read, and come out in their groups' order once it has passed.
     */
    @Test
    void aFifoDelayChangeLeavesTheBacklogOnDiskAndAppliesToIt() {
        try (EngineFixture q = new EngineFixture(dir, PartitionConfig.FIFO_DEFAULTS, 3)) {
            for (int i = 0; i < 8; i++) {
                q.sendFifo("g" + i % 2, "m" + i);
            }
            assertEquals(5, q.engine.state().coldCount(), "three indexed, five on disk");
            assertInstanceOf(PartitionResponse.Done.class, q.apply(new PartitionCommand.Configure(
                    PartitionConfig.FIFO_DEFAULTS.withDelaySeconds(5).withVersion(2))).response());
            assertEquals(5, q.engine.state().coldCount(), "nothing paged in");
            assertEquals(List.of(), q.receive(10, 30), "every message waits the new delay from its send");
            q.reopen(); // the change is in the stored meta record, not only in memory
            assertEquals(List.of(), q.receive(10, 30));
            q.advanceSeconds(5);
            List<String> order = new java.util.ArrayList<>();
            List<io.sluice.partition.DeliveredMessage> got;
            while (!(got = q.receive(10, 30)).isEmpty()) {
                for (io.sluice.partition.DeliveredMessage d : got) {
                    order.add(d.message().body());
                    q.delete(d.delivery().receiptHandle());
                }
            }
            assertEquals(8, order.size(), "all eight: " + order);
            assertEquals(order.stream().filter(m -> (m.charAt(1) - '0') % 2 == 0).toList(), List.of("m0", "m2", "m4", "m6"),
                    "group g0 in send order");
            assertEquals(order.stream().filter(m -> (m.charAt(1) - '0') % 2 == 1).toList(), List.of("m1", "m3", "m5", "m7"),
                    "group g1 in send order");
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
