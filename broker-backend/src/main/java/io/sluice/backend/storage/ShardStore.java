package io.sluice.backend.storage;

import io.sluice.backend.engine.Mutation;
import io.sluice.backend.engine.PartitionKeys;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.BiConsumer;
import java.util.zip.CRC32C;
import org.rocksdb.Checkpoint;
import org.rocksdb.CompressionType;
import org.rocksdb.FlushOptions;
import org.rocksdb.Options;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.Slice;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;

/**
 * One RocksDB instance holding many queue partitions (one shard), each under its own key prefix
 * ({@link PartitionKeys}). Every command's mutations are written in one atomic {@link WriteBatch} together
 * with the applied log index, so the stored state and the index that produced it never disagree.
 *
 * <p>A single column family, so a batch is atomic without {@code atomic_flush}.
 */
public final class ShardStore implements AutoCloseable {
    static {
        RocksDB.loadLibrary();
    }

    /** How a batch reaches the disk. */
    public enum Durability {
        /**
         * RocksDB's WAL, fsynced before {@link #write} returns. For a store with no Raft log in front of it
         * ({@code sluice dev} before replication, tests): an acknowledged write survives a crash.
         */
        SYNC_WAL,
        /**
         * No WAL: the Raft log is the write-ahead log, and replay after a crash re-applies entries above the
         * stored applied index. Only correct with the rules in docs/architecture.md (applied index in the same
         * batch, one column family, log purged only after a flushed snapshot).
         */
        NO_WAL
    }

    private final Path dir;
    private final Options options;
    private final RocksDB db;
    private final WriteOptions writeOptions;
    private final WriteOptions unsyncedOptions = new WriteOptions().setSync(false);
    private final Durability durability;
    private final byte[] appliedIndexKey = PartitionKeys.appliedIndexKey();
    private final byte[] appliedDigestKey = PartitionKeys.appliedDigestKey();
    private volatile long appliedIndex;
    /** The digest after {@link #appliedIndex}, and the last few (index, digest) pairs this replica wrote. */
    private long digest;
    private final ArrayDeque<Applied> recent = new ArrayDeque<>();
    /** How many recent (index, digest) pairs {@link #recentDigests} keeps. */
    static final int RECENT_DIGESTS = 32;

    /**
     * An applied index and the store's digest after it: a checksum chained over every entry's mutations (and
     * index), written in the entry's own batch. Replicas that applied the same log hold the same state, so at the same
     * index they must hold the same digest; a difference means their state machines diverged (the nemesis checks it).
     */
    public record Applied(long index, long digest) {
    }

    private ShardStore(Path dir, Options options, RocksDB db, WriteOptions writeOptions, Durability durability)
            throws RocksDBException {
        this.dir = dir;
        this.durability = durability;
        this.options = options;
        this.db = db;
        this.writeOptions = writeOptions;
        byte[] stored = db.get(appliedIndexKey);
        this.appliedIndex = stored == null ? 0 : ByteBuffer.wrap(stored).getLong();
        byte[] storedDigest = db.get(appliedDigestKey);
        this.digest = storedDigest == null ? 0 : ByteBuffer.wrap(storedDigest).getLong();
    }

    public static ShardStore open(Path dir, Durability durability) {
        Options options = new Options()
                .setCreateIfMissing(true)
                .setCompressionType(CompressionType.LZ4_COMPRESSION)
                .setMaxBackgroundJobs(2)
                .setKeepLogFileNum(5);
        WriteOptions writeOptions = new WriteOptions();
        if (durability == Durability.SYNC_WAL) {
            writeOptions.setSync(true);
        } else {
            writeOptions.setDisableWAL(true).setSync(false);
        }
        try {
            Files.createDirectories(dir);
            return new ShardStore(dir, options, RocksDB.open(options, dir.toString()), writeOptions, durability);
        } catch (RocksDBException | IOException e) {
            writeOptions.close();
            options.close();
            throw new StorageException("cannot open shard store at " + dir, e);
        }
    }

    public Path dir() {
        return dir;
    }

    /** The log index of the last batch written; commands at or below it are already applied. */
    public long appliedIndex() {
        return appliedIndex;
    }

    /**
     * Writes one command's mutations and the applied index atomically. A failure here is fatal for the replica:
     * the caller must stop rather than carry on with state that disagrees with its log.
     */
    public void write(List<Mutation> mutations, long logIndex) {
        write(mutations, logIndex, true);
    }

    /**
     * As {@link #write(List, long)}; with {@code sync=false} under {@link Durability#SYNC_WAL} the batch is in the
     * WAL but not yet forced to disk: the caller must {@link #syncWal()} before acknowledging it.
     */
    public void write(List<Mutation> mutations, long logIndex, boolean sync) {
        try (WriteBatch batch = new WriteBatch()) {
            for (Mutation m : mutations) {
                if (m instanceof Mutation.Put p) {
                    batch.put(p.key(), p.value());
                } else if (m instanceof Mutation.Delete d) {
                    batch.delete(d.key());
                } else if (m instanceof Mutation.DeleteRange r) {
                    batch.deleteRange(r.fromInclusive(), r.toExclusive());
                }
            }
            batch.put(appliedIndexKey, ByteBuffer.allocate(8).putLong(logIndex).array());
            boolean entry = logIndex > appliedIndex; // not a rewrite at open, which changes no meaning
            long next = entry ? chain(digest, logIndex, mutations) : digest;
            if (entry) {
                batch.put(appliedDigestKey, ByteBuffer.allocate(8).putLong(next).array());
            }
            db.write(sync || durability == Durability.NO_WAL ? writeOptions : unsyncedOptions, batch);
            appliedIndex = logIndex;
            if (entry) {
                synchronized (recent) {
                    digest = next;
                    recent.addLast(new Applied(logIndex, next));
                    if (recent.size() > RECENT_DIGESTS) {
                        recent.removeFirst();
                    }
                }
            }
        } catch (RocksDBException e) {
            throw new StorageException("write failed in " + dir, e);
        }
    }

    /** The last (index, digest) pairs this replica wrote since it opened the store, oldest first. */
    public List<Applied> recentDigests() {
        synchronized (recent) {
            return List.copyOf(recent);
        }
    }

    /**
     * The digest after an entry: the previous one, the entry's index, and its mutations (type, key, value), each
     * mutation hashed on its own and summed, so the order a replica happened to list them in does not count.
     */
    static long chain(long previous, long logIndex, List<Mutation> mutations) {
        long sum = 0;
        CRC32C crc = new CRC32C();
        for (Mutation m : mutations) {
            crc.reset();
            if (m instanceof Mutation.Put p) {
                crc.update('P');
                crc.update(p.key());
                crc.update(0);
                crc.update(p.value());
            } else if (m instanceof Mutation.Delete d) {
                crc.update('D');
                crc.update(d.key());
            } else if (m instanceof Mutation.DeleteRange r) {
                crc.update('R');
                crc.update(r.fromInclusive());
                crc.update(0);
                crc.update(r.toExclusive());
            }
            sum += mix(crc.getValue() ^ ((long) (m instanceof Mutation.Put p ? p.value().length : 0) << 32));
        }
        return mix(previous * 31 + mix(logIndex) + sum);
    }

    /** A 64-bit finaliser (SplitMix64's): spreads a value's bits over the whole word. */
    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }

    public byte[] get(byte[] key) {
        try {
            return db.get(key);
        } catch (RocksDBException e) {
            throw new StorageException("read failed in " + dir, e);
        }
    }

    /** Visits keys in {@code [from, to)} in order. Used at open and by tests; never on the receive path. */
    public void scan(byte[] from, byte[] to, BiConsumer<byte[], byte[]> visitor) {
        scan(from, to, Integer.MAX_VALUE, visitor);
    }

    /**
     * Visits at most {@code limit} keys in {@code [from, to)} in order: how a partition pages its cold tail back in
     * (one seek, then {@code limit} steps, whatever the size of the range).
     */
    public void scan(byte[] from, byte[] to, int limit, BiConsumer<byte[], byte[]> visitor) {
        try (Slice upper = new Slice(to);
             ReadOptions read = new ReadOptions().setIterateUpperBound(upper);
             RocksIterator it = db.newIterator(read)) {
            int n = 0;
            for (it.seek(from); it.isValid() && n < limit; it.next(), n++) {
                visitor.accept(it.key(), it.value());
            }
            it.status();
        } catch (RocksDBException e) {
            throw new StorageException("scan failed in " + dir, e);
        }
    }

    /**
     * The distinct key prefixes of {@code length} bytes in the store, in order: one seek per prefix (after each, the
     * next seek starts past that prefix's range), not a scan of every key. How a shard lists its partitions.
     */
    public List<byte[]> prefixes(int length) {
        List<byte[]> out = new ArrayList<>();
        try (ReadOptions read = new ReadOptions(); RocksIterator it = db.newIterator(read)) {
            it.seekToFirst();
            while (it.isValid()) {
                byte[] key = it.key();
                if (key.length < length) {
                    it.next();
                    continue;
                }
                byte[] prefix = Arrays.copyOf(key, length);
                out.add(prefix);
                byte[] next = successor(prefix);
                if (next == null) {
                    break;
                }
                it.seek(next);
            }
            it.status();
        } catch (RocksDBException e) {
            throw new StorageException("scan failed in " + dir, e);
        }
        return out;
    }

    /** The smallest key of the same length greater than {@code prefix}, or null if it is all 0xFF. */
    private static byte[] successor(byte[] prefix) {
        byte[] next = prefix.clone();
        for (int i = next.length - 1; i >= 0; i--) {
            if (next[i] != (byte) 0xFF) {
                next[i]++;
                return next;
            }
            next[i] = 0;
        }
        return null;
    }

    /**
     * Forces every write so far to disk. With {@link Durability#SYNC_WAL} a caller may write a group of commands
     * unsynced ({@link #write(List, long, boolean)}) and then sync once: RocksDB's WAL is sequential, so one
     * fsync makes the whole group durable (group commit).
     */
    public void syncWal() {
        try {
            db.flushWal(true);
        } catch (RocksDBException e) {
            throw new StorageException("WAL sync failed in " + dir, e);
        }
    }

    /** Flushes memtables to SST files: with {@link Durability#NO_WAL}, before the Raft log may be purged. */
    public void flush() {
        try (FlushOptions flush = new FlushOptions().setWaitForFlush(true)) {
            db.flush(flush);
        } catch (RocksDBException e) {
            throw new StorageException("flush failed in " + dir, e);
        }
    }

    /**
     * A consistent copy of the store in {@code target} (which must not exist): SST files are hard-linked, the rest
     * copied. Flushes first, so the copy holds everything written so far even with the WAL off.
     */
    public void checkpoint(Path target) {
        flush();
        try (Checkpoint checkpoint = Checkpoint.create(db)) {
            checkpoint.createCheckpoint(target.toString());
        } catch (RocksDBException e) {
            throw new StorageException("checkpoint into " + target + " failed for " + dir, e);
        }
    }

    /** RocksDB's own estimate of a property, e.g. {@code rocksdb.estimate-num-keys}. */
    public long longProperty(String name) {
        try {
            return db.getLongProperty(name);
        } catch (RocksDBException e) {
            throw new StorageException("property " + name + " failed in " + dir, e);
        }
    }

    @Override
    public void close() {
        db.close();
        writeOptions.close();
        unsyncedOptions.close();
        options.close();
    }
}
