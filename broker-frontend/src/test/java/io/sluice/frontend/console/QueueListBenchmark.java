package io.sluice.frontend.console;

import io.sluice.catalog.QueueMetadata;
import io.sluice.partition.QueueCounts;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The console's queue list over {@code queues} queues, as a frontend builds one view from the latest sample: every
 * queue the key may list, filtered, sorted and cut to a page ({@link QueueListPage#select}). {@code byName} is the
 * first page by name, {@code byDepth} the deepest first (a sort of every queue), {@code filtered} a substring ("9") that
 * keeps 4 in 10, sorted by age. Run: {@code scripts/bench-frontend.sh QueueListBenchmark}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xmx2g"})
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class QueueListBenchmark {
    @Param({"1000", "100000"})
    public int queues;

    List<QueueMetadata> catalog;
    QueueHistory.Snapshot sample;

    @Setup
    public void setUp() {
        catalog = new ArrayList<>(queues);
        Map<Long, QueueHistory.Latest> figures = new HashMap<>();
        for (int i = 0; i < queues; i++) {
            catalog.add(new QueueMetadata(String.format("queue-%06d", i), i, false, Map.of(), Map.of(), 0, 0, 1, 1));
            figures.put((long) i, new QueueHistory.Latest(new QueueCounts((i * 7919) % 1000, i % 10, 0, 0, -1, -1, -1,
                    i, i), 1.5f, 1.5f));
        }
        sample = new QueueHistory.Snapshot(1_000, figures);
    }

    private QueueListPage.Selection select(Map<String, String> query) {
        return QueueListPage.select(catalog, QueueListPage.View.of(query), name -> true, name -> true, sample, 1_000);
    }

    @Benchmark
    public QueueListPage.Selection byName() {
        return select(Map.of());
    }

    @Benchmark
    public QueueListPage.Selection byDepth() {
        return select(Map.of("sort", "visible"));
    }

    @Benchmark
    public QueueListPage.Selection filtered() {
        return select(Map.of("filter", "9", "sort", "age"));
    }
}
