package io.sluice.backend.shard;

import io.sluice.backend.engine.PartitionStats;
import io.sluice.backend.storage.StorageException;
import io.sluice.partition.HistoryPoint;
import io.sluice.partition.PartitionId;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.rocksdb.CompressionType;
import org.rocksdb.Options;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.TtlDB;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;

/**
 * A replica's minute-by-minute record of its partitions' counts for the last day: what the console's 6-hour and
 * 24-hour charts draw, kept across restarts and, since every replica records its own (their states are the same),
 * across a change of leader. It lives beside the shard's store in a RocksDB of its own ({@code <store>.history},
 * values expire after a day and a bit), outside the replicated state: writing it changes nothing a replica applies,
 * digests or snapshots, and losing it loses only charts.
 *
 * <p>A partition's point is written only when its counts or totals changed since the last one written, or every
 * {@link #KEEPALIVE_MINUTES} minutes: an idle queue costs nothing, and a reader carries a point forward until the
 * next (a point older than the keep-alive means "not recorded then": the replica was down). Key: queue id (8), index
 * (4), minute (8), big-endian; value: {@link HistoryPoint}'s fields.
 */
public final class ShardHistory implements AutoCloseable {
    /** How often a point is written even when nothing changed. */
    public static final int KEEPALIVE_MINUTES = 10;
    /** How long points are kept (and read back): a day, and the keep-alive before it. */
    public static final long KEEP_MILLIS = (24L * 60 + KEEPALIVE_MINUTES + 5) * 60_000;
    private static final int VALUE_BYTES = 4 * 3 + 8 * 3;

    private final Path dir;
    private final Options options;
    private final TtlDB db;
    private final WriteOptions writeOptions = new WriteOptions().setSync(false);
    /** What was written last for each partition: its values and minute. */
    private final Map<PartitionId, HistoryPoint> last = new HashMap<>();

    private ShardHistory(Path dir, Options options, TtlDB db) {
        this.dir = dir;
        this.options = options;
        this.db = db;
    }

    /** Opens (or creates) the history kept beside the store at {@code storeDir}. */
    public static ShardHistory open(Path storeDir) {
        Path dir = dirOf(storeDir);
        Options options = new Options().setCreateIfMissing(true).setCompressionType(CompressionType.LZ4_COMPRESSION)
                .setMaxBackgroundJobs(1).setKeepLogFileNum(2);
        try {
            Files.createDirectories(dir);
            return new ShardHistory(dir, options, TtlDB.open(options, dir.toString(), (int) (KEEP_MILLIS / 1000),
                    false));
        } catch (RocksDBException | IOException e) {
            options.close();
            throw new StorageException("cannot open shard history at " + dir, e);
        }
    }

    /** Where the history of the store at {@code storeDir} lives. */
    public static Path dirOf(Path storeDir) {
        return storeDir.resolveSibling(storeDir.getFileName() + ".history");
    }

    /**
     * Records the partitions' counts at {@code nowMillis}: a point for each whose figures changed since the last one
     * written, or whose last point is {@link #KEEPALIVE_MINUTES} old; partitions gone since are forgotten.
     */
    public synchronized void record(long nowMillis, Collection<PartitionStats> partitions) {
        long minute = Math.floorDiv(nowMillis, 60_000);
        Map<PartitionId, HistoryPoint> seen = new HashMap<>(partitions.size() * 2);
        try (WriteBatch batch = new WriteBatch()) {
            for (PartitionStats p : partitions) {
                HistoryPoint point = HistoryPoint.of(minute, p.counts());
                HistoryPoint was = last.get(p.id());
                if (was == null || !was.sameFigures(point) || minute - was.minute() >= KEEPALIVE_MINUTES) {
                    batch.put(key(p.id(), minute), value(point));
                    seen.put(p.id(), point);
                } else {
                    seen.put(p.id(), was);
                }
            }
            db.write(writeOptions, batch);
        } catch (RocksDBException e) {
            throw new StorageException("cannot write shard history at " + dir, e);
        }
        last.clear();
        last.putAll(seen);
    }

    /**
     * The points of {@code partition} from {@code fromMillis} to {@code toMillis}, oldest first, and the last one
     * before {@code fromMillis} within the keep-alive (the figures at the range's start).
     */
    public List<HistoryPoint> read(PartitionId partition, long fromMillis, long toMillis) {
        long from = Math.floorDiv(fromMillis, 60_000) - KEEPALIVE_MINUTES;
        long to = Math.floorDiv(toMillis, 60_000);
        List<HistoryPoint> out = new ArrayList<>();
        byte[] end = key(partition, to + 1);
        try (RocksIterator it = db.newIterator()) {
            for (it.seek(key(partition, from)); it.isValid(); it.next()) {
                byte[] k = it.key();
                if (Arrays.compareUnsigned(k, end) >= 0) {
                    break;
                }
                out.add(decode(ByteBuffer.wrap(k).getLong(12), it.value()));
            }
        }
        // of the points before the range only the last counts
        long start = Math.floorDiv(fromMillis, 60_000);
        int firstInRange = 0;
        while (firstInRange < out.size() && out.get(firstInRange).minute() < start) {
            firstInRange++;
        }
        return firstInRange <= 1 ? out : out.subList(firstInRange - 1, out.size());
    }

    static byte[] key(PartitionId p, long minute) {
        return ByteBuffer.allocate(20).putLong(p.queueId()).putInt(p.index()).putLong(minute).array();
    }

    private static byte[] value(HistoryPoint p) {
        return ByteBuffer.allocate(VALUE_BYTES).putInt(p.visible()).putInt(p.inflight()).putInt(p.delayed())
                .putLong(p.oldestRetentionBaseMillis()).putLong(p.sentTotal()).putLong(p.receivedTotal()).array();
    }

    private static HistoryPoint decode(long minute, byte[] v) {
        ByteBuffer b = ByteBuffer.wrap(v);
        return new HistoryPoint(minute, b.getInt(), b.getInt(), b.getInt(), b.getLong(), b.getLong(), b.getLong());
    }

    @Override
    public void close() {
        db.close();
        writeOptions.close();
        options.close();
    }
}
