package io.sluice.backend.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.backend.storage.ShardStore;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The table of applied entry ids: which entries are new, which come again, and what survives a reopen. */
class EntryIdsTest {
    @TempDir
    Path dir;
    long index;

    private boolean admit(EntryIds ids, ShardStore store, long writer, long entry, long nowMillis) {
        List<Mutation> mutations = new ArrayList<>();
        boolean fresh = ids.admit(writer, entry, ++index, nowMillis, mutations);
        store.write(mutations, index);
        return fresh;
    }

    @Test
    void anEntryIsNewOnceAndItsNeighboursInTheWindowAreToldApart() {
        try (ShardStore store = ShardStore.open(dir, ShardStore.Durability.SYNC_WAL)) {
            EntryIds ids = EntryIds.load(store);
            assertTrue(admit(ids, store, 7, 1, 0));
            assertFalse(admit(ids, store, 7, 1, 0), "the same entry again");
            assertTrue(admit(ids, store, 8, 1, 0), "another writer's entry 1");
            assertTrue(admit(ids, store, 7, 3, 0), "a gap");
            assertTrue(admit(ids, store, 7, 2, 0), "the gap filled late (an entry retried past a later one)");
            assertFalse(admit(ids, store, 7, 2, 0));
            assertFalse(admit(ids, store, 7, 3, 0));
            // across the bitmap's words: 3 + 100 = 103 is highest; 3 is 100 back (second word), 2 is 101 back
            assertTrue(admit(ids, store, 7, 103, 0));
            assertFalse(admit(ids, store, 7, 3, 0), "remembered 100 entries back");
            assertFalse(admit(ids, store, 7, 2, 0), "remembered 101 entries back");
            assertTrue(admit(ids, store, 7, 50, 0), "never applied, inside the window");
            assertTrue(admit(ids, store, 7, 103 + EntryIds.WINDOW - 1, 0));
            assertFalse(admit(ids, store, 7, 103, 0), "WINDOW - 1 back: still told apart");
            assertFalse(admit(ids, store, 7, 50, 0), "below the window: cannot be told, refused");
            assertTrue(admit(ids, store, 0, 0, 0), "an entry without an id is always applied");
            assertTrue(admit(ids, store, 0, 0, 0));
        }
    }

    @Test
    void theTableSurvivesAReopenAndForgetsSilentWritersAtTheSameEntryEverywhere() {
        long minute = 60_000;
        try (ShardStore store = ShardStore.open(dir, ShardStore.Durability.SYNC_WAL)) {
            EntryIds ids = EntryIds.load(store);
            assertTrue(admit(ids, store, 1, 5, 0));
            assertTrue(admit(ids, store, -2, 9, 10 * minute)); // negative ids sort after positive ones: still loaded
        }
        try (ShardStore store = ShardStore.open(dir, ShardStore.Durability.SYNC_WAL)) {
            EntryIds ids = EntryIds.load(store);
            assertEquals(2, ids.writers());
            assertFalse(admit(ids, store, 1, 5, 11 * minute), "remembered across a reopen");
            assertFalse(admit(ids, store, -2, 9, 11 * minute));
            // writer 1 last wrote at 11 min, writer -2 also: neither is forgotten before 26 min
            index = EntryIds.PRUNE_EVERY - 1;
            assertTrue(admit(ids, store, 3, 1, 20 * minute)); // at index PRUNE_EVERY: a look, nobody silent enough
            assertEquals(3, ids.writers());
            index = 2 * EntryIds.PRUNE_EVERY - 1;
            assertTrue(admit(ids, store, 3, 2, 11 * minute + EntryIds.FORGET_AFTER_MILLIS + 1));
            assertEquals(1, ids.writers(), "writers silent for longer than FORGET_AFTER_MILLIS are forgotten");
            index = 2 * EntryIds.PRUNE_EVERY + 5;
            assertTrue(admit(ids, store, 1, 5, 30 * minute), "a forgotten writer's entry is new again");
        }
        try (ShardStore store = ShardStore.open(dir, ShardStore.Durability.SYNC_WAL)) {
            assertEquals(2, EntryIds.load(store).writers(), "the forgetting was written too");
        }
    }
}
