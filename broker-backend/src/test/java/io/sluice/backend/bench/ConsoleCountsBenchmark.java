package io.sluice.backend.bench;

import io.sluice.backend.engine.PartitionEngine;
import io.sluice.backend.engine.ShardPartitions;
import io.sluice.backend.shard.ShardHistory;
import io.sluice.backend.shard.ShardQueries;
import io.sluice.backend.storage.ShardStore;
import io.sluice.partition.PartitionConfig;
import io.sluice.partition.PartitionId;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What the console's figures cost a shard replica holding {@code partitions} partitions (a 100,000-queue cluster of
 * 6 shards puts ~17,000 on each; 100,000 is everything on one): {@code allCounts} is the leader's answer to one
 * {@code ALL_COUNTS} read (the queue list's sample, under the shard's lock), {@code recordHistory} a minute's
 * {@link ShardHistory} point when nothing changed (the steady state: nothing is written). Run:
 * {@code scripts/bench-engine.sh ConsoleCountsBenchmark}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xmx3g"})
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class ConsoleCountsBenchmark {
    @Param({"17000", "100000"})
    public int partitions;

    Path dir;
    ShardStore store;
    ShardPartitions shard;
    ShardHistory history;
    long now = 1_700_000_000_000L;
    byte[] query;

    @Setup(Level.Trial)
    public void open() throws IOException {
        dir = Files.createTempDirectory("sluice-bench-console");
        store = ShardStore.open(dir.resolve("shard"), ShardStore.Durability.NO_WAL);
        long index = 0;
        for (int i = 0; i < partitions; i++) {
            PartitionEngine.create(store, new PartitionId(1_000 + i, 0), PartitionConfig.STANDARD_DEFAULTS, now,
                    ++index);
        }
        shard = new ShardPartitions(store, "bench");
        for (int i = 0; i < partitions; i++) {
            shard.open(new PartitionId(1_000 + i, 0));
        }
        history = ShardHistory.open(dir.resolve("shard"));
        history.record(now, shard.stats(now)); // the first minute writes every partition; later ones nothing
        query = ShardQueries.simple(ShardQueries.ALL_COUNTS, 0);
        System.out.printf("%n%d partitions: ALL_COUNTS answer %,d bytes%n", partitions,
                ShardQueries.answer(ShardQueries.ALL_COUNTS, ByteBuffer.wrap(query), shard, now).length);
    }

    @Benchmark
    public byte[] allCounts() {
        return ShardQueries.answer(ShardQueries.ALL_COUNTS, ByteBuffer.wrap(query), shard, now);
    }

    @Benchmark
    public void recordHistory() {
        history.record(now, shard.stats(now));
    }

    @TearDown(Level.Trial)
    public void close() throws IOException {
        history.close();
        store.close();
        try (Stream<Path> walk = Files.walk(dir)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }
}
