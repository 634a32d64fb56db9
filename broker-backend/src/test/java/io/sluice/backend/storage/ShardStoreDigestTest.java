package io.sluice.backend.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import io.sluice.backend.engine.Mutation;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The apply digest replicas are compared by: the same entries give the same digest whatever order an entry lists
 * its mutations in, a different value or index gives another, it survives a reopen and goes on from there, and a
 * rewrite at the same index (a migration at open) leaves it alone.
 */
class ShardStoreDigestTest {
    @TempDir
    Path dir;

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static final List<Mutation> ENTRY = List.of(new Mutation.Put(b("k1"), b("v1")),
            new Mutation.Delete(b("k2")), new Mutation.DeleteRange(b("a"), b("b")));

    @Test
    void theDigestFollowsTheEntriesNotTheirListing() {
        long d = ShardStore.chain(0, 7, ENTRY);
        assertEquals(d, ShardStore.chain(0, 7, List.of(ENTRY.get(2), ENTRY.get(0), ENTRY.get(1))));
        assertNotEquals(d, ShardStore.chain(0, 8, ENTRY), "another index");
        assertNotEquals(d, ShardStore.chain(1, 7, ENTRY), "another history");
        assertNotEquals(d, ShardStore.chain(0, 7, List.of(new Mutation.Put(b("k1"), b("v2")), ENTRY.get(1),
                ENTRY.get(2))), "another value");
        assertNotEquals(d, ShardStore.chain(0, 7, List.of(new Mutation.Put(b("k2"), b("v1")), ENTRY.get(1),
                ENTRY.get(2))), "another key");
        assertNotEquals(d, ShardStore.chain(0, 7, List.of(new Mutation.Put(b("k1"), b("v1")),
                new Mutation.Put(b("k2"), b("")), ENTRY.get(2))), "a put instead of a delete");
    }

    @Test
    void aReopenedStoreGoesOnFromItsStoredDigest() {
        long expected;
        try (ShardStore store = ShardStore.open(dir.resolve("a"), ShardStore.Durability.SYNC_WAL);
             ShardStore twin = ShardStore.open(dir.resolve("b"), ShardStore.Durability.SYNC_WAL)) {
            store.write(ENTRY, 1);
            twin.write(ENTRY, 1);
            twin.write(List.of(new Mutation.Put(b("k3"), b("v3"))), 2);
            expected = twin.recentDigests().get(1).digest();
            store.write(List.of(new Mutation.Put(b("x"), b("rewritten at open"))), 1); // same index: not an entry
            assertEquals(1, store.recentDigests().size());
        }
        try (ShardStore reopened = ShardStore.open(dir.resolve("a"), ShardStore.Durability.SYNC_WAL)) {
            reopened.write(List.of(new Mutation.Put(b("k3"), b("v3"))), 2);
            List<ShardStore.Applied> recent = reopened.recentDigests();
            assertEquals(List.of(new ShardStore.Applied(2, expected)), recent,
                    "the same two entries, one before a reopen: the same digest after the second");
        }
    }
}
