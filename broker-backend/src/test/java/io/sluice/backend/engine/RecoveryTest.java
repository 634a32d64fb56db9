package io.sluice.backend.engine;

import io.sluice.partition.NewMessage;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionConfig;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.common.ReceiptHandle;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Closing and reopening the store rebuilds exactly the state that was there. */
class RecoveryTest {
    @TempDir
    Path dir;

    @Test
    void reopenedStandardPartitionHasTheSameStateAndBehaviour() {
        try (EngineFixture q = new EngineFixture(dir, PartitionConfig.STANDARD_DEFAULTS.withMaxReceiveCount(1))) {
            for (int i = 0; i < 20; i++) {
                q.send(NewMessage.of("id-" + i, "m" + i).withDelaySeconds(i % 3 == 0 ? 30 : 0));
            }
            List<ReceiptHandle> leased = q.receive(5, 60).stream().map(d -> d.delivery().receiptHandle()).toList();
            q.delete(leased.get(0));
            q.changeVisibility(leased.get(1), 0);
            q.advanceSeconds(61);
            q.receive(10, 60);
            q.advanceSeconds(61);
            q.receive(10, 60);
            String before = q.engine.state().describe();
            var dumpBefore = q.dump();

            q.reopen();
            assertEquals(before, q.engine.state().describe());
            assertEquals(dumpBefore, q.dump());
            assertTrue(q.engine.state().pendingDeadLetters().size() > 0, "pending hand-offs survive");
            assertEquals(1, q.delete(leased.get(0)) == null ? 1 : 0, "old handles still resolve after reopen");
        }
    }

    @Test
    void reopenedFifoPartitionKeepsGroupsDedupAndAttempts() {
        try (EngineFixture q = new EngineFixture(dir, PartitionConfig.FIFO_DEFAULTS)) {
            q.send(NewMessage.fifo("1", "a1", "a", "d1"));
            q.send(NewMessage.fifo("2", "a2", "a", "d2"));
            q.send(NewMessage.fifo("3", "b1", "b", "d3"));
            var leased = q.apply(new PartitionCommand.Receive(1, 30, "attempt")).delivered();
            String before = q.engine.state().describe();

            q.reopen();
            assertEquals(before, q.engine.state().describe());
            assertTrue(q.send(NewMessage.fifo("4", "again", "a", "d1")).duplicate(), "dedup window survives");
            var retried = q.apply(new PartitionCommand.Receive(1, 30, "attempt")).delivered();
            assertEquals(leased.get(0).delivery().receiptHandle(), retried.get(0).delivery().receiptHandle());
            assertEquals(List.of("b1"), q.bodies(q.receive(10, 30)), "group a stays blocked after reopen");
        }
    }
}
