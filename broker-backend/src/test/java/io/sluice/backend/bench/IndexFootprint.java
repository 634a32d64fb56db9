package io.sluice.backend.bench;

import io.sluice.backend.engine.PartitionQueueState;
import io.sluice.partition.NewMessage;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionConfig;
import io.sluice.partition.PartitionId;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;

/**
 * Heap held by the in-memory index per queued message (bodies are on disk, so this is what a backlog costs in
 * memory). Applies sends to a bare {@link PartitionQueueState} and discards the mutations, then compares heap
 * use after full GCs. Run by {@code scripts/bench-engine.sh}.
 */
public final class IndexFootprint {
    public static void main(String[] args) {
        int messages = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
        measure("standard, visible", PartitionConfig.STANDARD_DEFAULTS, messages, false);
        measure("standard, in flight", PartitionConfig.STANDARD_DEFAULTS, messages, true);
        measure("fifo, 1000 groups", PartitionConfig.FIFO_DEFAULTS.withMaxInflight(Integer.MAX_VALUE), messages, false);
    }

    private static void measure(String label, PartitionConfig config, int messages, boolean lease) {
        long before = usedHeapAfterGc();
        PartitionQueueState state = new PartitionQueueState(new PartitionId(1, 0), config);
        long now = 1_700_000_000_000L;
        for (int done = 0; done < messages; done += 100) {
            List<NewMessage> batch = new ArrayList<>(100);
            for (int i = 0; i < 100; i++) {
                int n = done + i;
                batch.add(config.fifo() ? NewMessage.fifo("id" + n, "b", "group-" + (n % 1000), "d" + n)
                        : NewMessage.of("id" + n, "b"));
            }
            state.apply(new PartitionCommand.Send(batch), now++);
            if (lease) {
                state.apply(new PartitionCommand.Receive(10, 3600, null), now);
            }
        }
        long after = usedHeapAfterGc();
        System.out.printf("index footprint [%s]: %d messages, %.1f bytes/message (%s)%n", label, messages,
                (after - before) / (double) messages, state.counts());
    }

    private static long usedHeapAfterGc() {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }
}
