package io.sluice.backend.bench;

import io.sluice.backend.engine.PartitionEngine;
import io.sluice.backend.storage.ShardStore;
import io.sluice.common.ReceiptHandle;
import io.sluice.partition.NewMessage;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionConfig;
import io.sluice.partition.PartitionId;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * One partition on RocksDB, one command per message (no batching: the worst case): sends, receives and deletes
 * per second, with the RocksDB WAL fsynced per command ({@code SYNC_WAL}, what a store without a Raft log in
 * front uses) and with the WAL off ({@code NO_WAL}, the Raft configuration). {@code deletedBefore} first pushes
 * that many messages through send, receive and delete, leaving their tombstones behind, to show that receive
 * cost does not grow with them.
 *
 * <p>Run: {@code scripts/bench-engine.sh}. Figures are recorded in docs/performance.md.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xmx2g"})
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 4, time = 2)
public class PartitionEngineBenchmark {
    static final int OPS = 2_000;
    static final String BODY = "x".repeat(1024);

    /** The partition under test, on a fresh RocksDB store per trial. */
    @State(Scope.Thread)
    public static class Partition {
        @Param({"SYNC_WAL", "NO_WAL"})
        public ShardStore.Durability durability;

        @Param({"0"})
        public int deletedBefore;

        Path dir;
        ShardStore store;
        PartitionEngine engine;
        long logIndex;
        long nowMillis = 1_700_000_000_000L;
        long sent;

        @Setup(Level.Trial)
        public void open() throws IOException {
            dir = Files.createTempDirectory("sluice-bench");
            store = ShardStore.open(dir, durability);
            engine = PartitionEngine.create(store, new PartitionId(1, 0), PartitionConfig.STANDARD_DEFAULTS, nowMillis,
                    ++logIndex);
            churn(deletedBefore);
        }

        /** Sends, receives and deletes {@code count} messages in batches of 10, leaving tombstones behind. */
        private void churn(int count) {
            for (int done = 0; done < count; done += 10) {
                engine.apply(new PartitionCommand.Send(batchOf(10)), nowMillis, ++logIndex);
                var got = engine.apply(new PartitionCommand.Receive(10, 3600, null), nowMillis, ++logIndex).delivered();
                engine.apply(new PartitionCommand.Delete(got.stream().map(d -> d.delivery().receiptHandle()).toList()),
                        nowMillis, ++logIndex);
            }
        }

        @TearDown(Level.Trial)
        public void close() throws IOException {
            store.close();
            try (Stream<Path> walk = Files.walk(dir)) {
                walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }

        List<NewMessage> batchOf(int n) {
            List<NewMessage> batch = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                batch.add(NewMessage.of("m" + (sent++), BODY));
            }
            return batch;
        }

        /** Handles leased by the last receive invocation: deleted before the next one, unmeasured. */
        final List<ReceiptHandle> received = new ArrayList<>();
        /** OPS leased messages ready for a delete invocation. */
        final List<ReceiptHandle> leased = new ArrayList<>();

        /**
         * Before every invocation (not measured): clean up after a receive invocation, have OPS leased handles
         * for a delete invocation and OPS visible messages for a receive invocation.
         */
        @Setup(Level.Invocation)
        public void prepare() {
            deleteAll(received);
            if (leased.isEmpty()) {
                for (int done = 0; done < OPS; done += 10) {
                    engine.apply(new PartitionCommand.Send(batchOf(10)), nowMillis, ++logIndex);
                    engine.apply(new PartitionCommand.Receive(10, 3600, null), nowMillis, ++logIndex).delivered()
                            .forEach(d -> leased.add(d.delivery().receiptHandle()));
                }
            }
            while (engine.state().counts().visible() < OPS) {
                engine.apply(new PartitionCommand.Send(batchOf(100)), nowMillis, ++logIndex);
            }
        }

        void deleteAll(List<ReceiptHandle> handles) {
            for (int i = 0; i < handles.size(); i += 100) {
                engine.apply(new PartitionCommand.Delete(handles.subList(i, Math.min(handles.size(), i + 100))), nowMillis,
                        ++logIndex);
            }
            handles.clear();
        }
    }

    /** Sends one 1 KiB message per command. */
    @Benchmark
    @OperationsPerInvocation(OPS)
    public void send(Partition p) {
        for (int i = 0; i < OPS; i++) {
            p.engine.apply(new PartitionCommand.Send(p.batchOf(1)), p.nowMillis, ++p.logIndex);
        }
    }

    /** Leases one message per command and reads its body. */
    @Benchmark
    @OperationsPerInvocation(OPS)
    public int receive(Partition p) {
        for (int i = 0; i < OPS; i++) {
            var outcome = p.engine.apply(new PartitionCommand.Receive(1, 3600, null), p.nowMillis, ++p.logIndex);
            if (outcome.delivered().isEmpty()) {
                throw new IllegalStateException("no message at receive " + i + ": " + outcome.response() + " "
                        + p.engine.state().counts());
            }
            p.received.add(outcome.delivered().get(0).delivery().receiptHandle());
        }
        return p.received.size();
    }

    /** Deletes one leased message per command. */
    @Benchmark
    @OperationsPerInvocation(OPS)
    public void delete(Partition p) {
        for (ReceiptHandle h : p.leased) {
            p.engine.apply(new PartitionCommand.Delete(List.of(h)), p.nowMillis, ++p.logIndex);
        }
        p.leased.clear();
    }
}
