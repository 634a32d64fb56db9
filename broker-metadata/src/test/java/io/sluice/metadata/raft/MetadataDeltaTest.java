package io.sluice.metadata.raft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.common.ManualClock;
import io.sluice.metadata.image.ClusterImage;
import io.sluice.metadata.image.MetadataCommand;
import io.sluice.metadata.image.MetadataDelta;
import io.sluice.metadata.image.MetadataJson;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Catalog deltas cut from the metadata state machine's recent records: a copy at any kept index that replays them
 * equals the state machine's image (through the JSON a reply travels in), secrets left out for roles without them,
 * and a copy older than what is kept is told to fetch the whole image.
 */
class MetadataDeltaTest {
    private final ManualClock clock = new ManualClock(1_000_000);
    private final MetadataStateMachine machine =
            new MetadataStateMachine(clock, new LivenessTracker(clock, 10_000), 1, 6);
    private long index;

    private void apply(MetadataCommand command) {
        machine.apply(++index, machine.decide(command).logData());
        clock.advanceMillis(10);
    }

    private static MetadataDelta overTheWire(MetadataDelta d) {
        return MetadataJson.read(MetadataJson.write(d), MetadataDelta.class);
    }

    @Test
    void aCopyAtAnyKeptIndexCatchesUpToTheSameImage() {
        apply(new MetadataCommand.CreateQueue("a", false, Map.of("VisibilityTimeout", "30"), Map.of(), 1));
        ClusterImage copy = MetadataJson.read(MetadataJson.write(machine.image()), ClusterImage.class);
        apply(new MetadataCommand.CreateQueue("b", false, Map.of(), Map.of("team", "x"), 1));
        apply(new MetadataCommand.SetQueueAttributes("a", Map.of("VisibilityTimeout", "99")));
        apply(new MetadataCommand.SetAccessKey("AKIDDELTA", "secret-in-delta", List.of()));
        apply(new MetadataCommand.DeleteQueue("b"));
        apply(new MetadataCommand.InitReceiptSecret("c2VjcmV0"));

        MetadataDelta delta = overTheWire(machine.delta(copy.appliedIndex()));
        assertTrue(delta.complete());
        assertEquals(index, delta.toIndex());
        ClusterImage caughtUp = delta.applyTo(copy);
        assertEquals(machine.image(), caughtUp, "replaying the delta gives the leader's image");
        assertEquals("99", caughtUp.queues().get("a").attributes().get("VisibilityTimeout"));
        assertFalse(caughtUp.queues().containsKey("b"));
        assertTrue(caughtUp.deletedAtMillis().containsKey("b"));

        ClusterImage secretless = copy.withoutSecrets();
        ClusterImage withoutSecrets = overTheWire(machine.delta(copy.appliedIndex()).withoutSecrets())
                .applyTo(secretless);
        assertEquals(machine.image().withoutSecrets(), withoutSecrets);
        assertTrue(withoutSecrets.accessKeys().isEmpty());
        assertEquals(null, withoutSecrets.receiptSecret());

        MetadataDelta none = machine.delta(index);
        assertTrue(none.complete());
        assertTrue(none.records().isEmpty());
        assertEquals(machine.image(), none.applyTo(machine.image()));
        assertThrows(IllegalArgumentException.class, () -> delta.applyTo(machine.image()),
                "a delta applies only to the image it was cut for");
    }

    @Test
    void aCopyOlderThanTheKeptRecordsFetchesTheWholeImage() {
        ClusterImage imageAt4 = null;
        for (int i = 0; i < 10; i++) { // a tag change is one record: 10 records, 6 kept
            apply(i == 0 ? new MetadataCommand.CreateQueue("q", false, Map.of(), Map.of(), 1)
                    : new MetadataCommand.SetQueueTags("q", Map.of("n", Integer.toString(i))));
            if (index == 4) {
                imageAt4 = machine.image();
            }
        }
        assertEquals(1, machine.delta(index - 1).records().size());
        assertFalse(machine.delta(0).complete(), "the first records are gone");
        assertFalse(machine.delta(3).complete());
        assertTrue(machine.delta(4).complete(), "the records after entry 4 are all kept");
        assertEquals(6, machine.delta(4).records().size());
        assertEquals(Map.of("n", "9"), machine.delta(4).applyTo(imageAt4).queues().get("q").tags());
        assertFalse(machine.delta(index + 1).complete(), "a copy ahead of this replica cannot be served from it");
    }
}
