package io.sluice.backend.shard;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.sluice.partition.PartitionId;
import io.sluice.partition.QueueCounts;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The AWAIT query and answer across versions: what each side reads from the other's layout. */
class ShardQueriesTest {
    static final PartitionId A = new PartitionId(7, 0);
    static final PartitionId B = new PartitionId(7, 1);

    @Test
    void anAnswerCarriesCountsAndCursorAndOlderLayoutsStillRead() {
        Map<PartitionId, Integer> counted = new LinkedHashMap<>();
        counted.put(A, 3);
        counted.put(B, 1);
        ShardAwaits.Cursor cursor = new ShardAwaits.Cursor(42, 9);
        byte[] answer = ShardQueries.encodeAvailable(new ShardAwaits.Answer(counted, cursor));
        ShardAwaits.Answer decoded = ShardQueries.decodeAvailable(answer);
        assertEquals(counted, decoded.available());
        assertEquals(List.of(A, B), List.copyOf(decoded.available().keySet()), "in order");
        assertEquals(cursor, decoded.cursor());
        // a backend before cursors: partitions and counts
        ShardAwaits.Answer counts = ShardQueries.decodeAvailable(Arrays.copyOf(answer, 4 + 2 * 12 + 2 * 4));
        assertEquals(counted, counts.available());
        assertEquals(ShardAwaits.Cursor.NONE, counts.cursor());
        // a backend before counts: the partitions only, each "unknown: wake all"
        ShardAwaits.Answer old = ShardQueries.decodeAvailable(Arrays.copyOf(answer, 4 + 2 * 12));
        assertEquals(Map.of(A, Integer.MAX_VALUE, B, Integer.MAX_VALUE), old.available());
        assertEquals(ShardAwaits.Cursor.NONE, old.cursor());
    }

    @Test
    void anAwaitWithACursorKeepsItsTimeoutWhereAnOlderBackendReadsIt() {
        ByteBuffer q = ByteBuffer.wrap(ShardQueries.await(10_000, new ShardAwaits.Cursor(42, 9)));
        assertEquals(10_000, ShardQueries.argOf(q));
        assertEquals(new ShardAwaits.Cursor(42, 9), ShardQueries.cursorOf(q));
        ByteBuffer older = ByteBuffer.wrap(ShardQueries.simple(ShardQueries.AWAIT, 10_000));
        assertEquals(10_000, ShardQueries.argOf(older));
        assertEquals(ShardAwaits.Cursor.NONE, ShardQueries.cursorOf(older), "an older frontend's await has none");
    }

    @Test
    void allCountsCarryEveryPartitionsCountsAndRefuseATruncatedAnswer() {
        Map<PartitionId, QueueCounts> all = new LinkedHashMap<>();
        all.put(A, new QueueCounts(3, 1, 2, 0, 1_000, -1, -1, 40, 12));
        all.put(B, new QueueCounts(0, 0, 0, 0, -1, -1, -1, 0, 0));
        byte[] answer = ShardQueries.encodeAllCounts(all);
        assertEquals(all, ShardQueries.decodeAllCounts(answer));
        assertEquals(Map.of(), ShardQueries.decodeAllCounts(ShardQueries.encodeAllCounts(Map.of())));
        assertThrows(IllegalArgumentException.class,
                () -> ShardQueries.decodeAllCounts(Arrays.copyOf(answer, answer.length - 1)));
    }
}
