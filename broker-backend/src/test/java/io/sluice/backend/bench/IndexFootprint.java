package io.sluice.backend.bench;

import io.sluice.backend.engine.PartitionEngine;
import io.sluice.backend.storage.ShardStore;
import io.sluice.partition.NewMessage;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionConfig;
import io.sluice.partition.PartitionId;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Heap held per queued message (bodies are on disk, and a standard queue's backlog past the index's limit too: the
 * cold tail). Applies sends to a {@link PartitionEngine} on a RocksDB store in a temporary folder, then compares heap
 * use after full GCs. Run by {@code scripts/bench-engine.sh}.
 */
public final class IndexFootprint {
    public static void main(String[] args) throws IOException {
        int messages = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
        measure("standard, visible", PartitionConfig.STANDARD_DEFAULTS, messages, false);
        measure("standard, in flight", PartitionConfig.STANDARD_DEFAULTS, messages, true);
        measure("fifo, 1000 groups", PartitionConfig.FIFO_DEFAULTS.withMaxInflight(Integer.MAX_VALUE), messages, false);
    }

    private static void measure(String label, PartitionConfig config, int messages, boolean lease) throws IOException {
        Path dir = Files.createTempDirectory("sluice-footprint");
        try (ShardStore store = ShardStore.open(dir, ShardStore.Durability.NO_WAL)) {
            measure(label, config, messages, lease, store);
        } finally {
            try (var walk = Files.walk(dir)) {
                walk.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    private static void measure(String label, PartitionConfig config, int messages, boolean lease, ShardStore store) {
        long before = usedHeapAfterGc();
        long now = 1_700_000_000_000L;
        long logIndex = 1;
        PartitionEngine engine = PartitionEngine.create(store, new PartitionId(1, 0), config, now, logIndex);
        for (int done = 0; done < messages; done += 100) {
            List<NewMessage> batch = new ArrayList<>(100);
            for (int i = 0; i < 100; i++) {
                int n = done + i;
                batch.add(config.fifo() ? NewMessage.fifo("id" + n, "b", "group-" + (n % 1000), "d" + n)
                        : NewMessage.of("id" + n, "b"));
            }
            engine.apply(new PartitionCommand.Send(batch), now++, ++logIndex);
            if (lease) {
                engine.apply(new PartitionCommand.Receive(10, 3600, null), now, ++logIndex);
            }
        }
        long after = usedHeapAfterGc();
        System.out.printf("index footprint [%s]: %d messages, %.1f bytes/message (%s)%n", label, messages,
                (after - before) / (double) messages, engine.state().counts());
    }

    private static long usedHeapAfterGc() {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }
}
