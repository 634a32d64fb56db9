package io.sluice.backend.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.common.SqsLimits;
import io.sluice.partition.NewMessage;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionConfig;
import io.sluice.partition.PartitionResponse;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A copy's hand-off key is remembered for the deduplication window on disk, not in the heap ({@link HandOffKeys}):
 * a second copy of one hand-off is answered as a duplicate, before and after a restart; past the window the sweep
 * forgets it.
 */
class HandOffKeysTest {
    @TempDir
    Path dir;

    @Test
    void aSecondCopyOfOneHandOffIsADuplicateUntilTheWindowEnds() {
        try (EngineFixture q = new EngineFixture(dir, PartitionConfig.STANDARD_DEFAULTS)) {
            PartitionResponse.SentMessage first = q.send(copy("m1", "7/0/42/1"));
            assertTrue(q.send(copy("m1", "7/0/42/1")).duplicate(), "an old and a new leader: one copy");
            assertFalse(q.send(copy("m2", "7/0/43/1")).duplicate(), "another hand-off");
            assertEquals(2, q.counts().visible());
            assertTrue(q.engine.state().describe().contains("dedup={}"), "nothing in the heap's window");
            assertEquals(2, keys(q, PartitionKeys.HAND_OFF_KEY));

            q.reopen();
            PartitionResponse.SentMessage again = q.send(copy("m1", "7/0/42/1"));
            assertTrue(again.duplicate(), "found on disk after a restart");
            assertEquals(first.seq(), again.seq());

            q.clock.advanceMillis(SqsLimits.DEDUPLICATION_WINDOW_MILLIS);
            assertTrue(q.engine.state().needsSweep(q.clock.nowMillis()));
            q.apply(new PartitionCommand.Expire(10));
            assertEquals(0, keys(q, PartitionKeys.HAND_OFF_KEY));
            assertEquals(0, keys(q, PartitionKeys.HAND_OFF_EXPIRY));
            assertFalse(q.engine.state().needsSweep(q.clock.nowMillis()));
            assertFalse(q.send(copy("m1", "7/0/42/1")).duplicate(), "past the window: a new copy");
        }
    }

    /** A key remembered again after its first entry expired, before a sweep forgot it: the sweep keeps the new one. */
    @Test
    void aKeyRememberedAgainOutlivesTheSweepOfItsExpiredEntry() {
        try (EngineFixture q = new EngineFixture(dir, PartitionConfig.STANDARD_DEFAULTS)) {
            long first = q.send(copy("m1", "7/0/42/1")).seq();
            q.clock.advanceMillis(SqsLimits.DEDUPLICATION_WINDOW_MILLIS); // expired, not swept yet
            PartitionResponse.SentMessage again = q.send(copy("m1", "7/0/42/1"));
            assertFalse(again.duplicate(), "past its window: a new copy");
            assertTrue(again.seq() > first);
            q.apply(new PartitionCommand.Expire(10)); // forgets the first entry's expiry record only
            PartitionResponse.SentMessage third = q.send(copy("m1", "7/0/42/1"));
            assertTrue(third.duplicate(), "the second copy's window still holds");
            assertEquals(again.seq(), third.seq());
        }
    }

    private static NewMessage copy(String id, String handOffKey) {
        return new NewMessage(id, id, Map.of(), Map.of(), -1, null, null, null, new NewMessage.Provenance(
                EngineFixture.START, 1, EngineFixture.START, "arn:aws:sqs:us-east-1:000000000000:src", handOffKey));
    }

    private static int keys(EngineFixture q, byte type) {
        PartitionKeys keys = new PartitionKeys(EngineFixture.PARTITION);
        int[] n = {0};
        q.store.scan(keys.typePrefix(type), keys.typeEnd(type), (k, v) -> n[0]++);
        return n[0];
    }
}
