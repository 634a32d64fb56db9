package io.sluice.backend.raft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import io.sluice.partition.CommandCodec;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A shard client's writer id: random per client, or none (the older log format) while a rolling upgrade asks. */
class ShardClientWriterIdTest {
    @Test
    void eachClientHasItsOwnWriterIdUnlessEntryIdsAreOff() {
        long one = ShardClient.writerId(null);
        long other = ShardClient.writerId("true");
        assertNotEquals(0, one);
        assertNotEquals(0, other);
        assertNotEquals(one, other);
        assertEquals(0, ShardClient.writerId("false"));
        assertEquals(0, ShardClient.writerId("FALSE"));
        byte[] entry = CommandCodec.join(ShardClient.writerId("false"), 1, List.of());
        assertEquals(1, entry[0], "no writer id: the version 1 layout, which releases before entry ids read");
    }
}
