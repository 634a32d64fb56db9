package io.sluice.metadata.raft;

import io.sluice.common.SystemClock;
import io.sluice.metadata.image.ClusterImage;
import io.sluice.metadata.image.MetadataCommand;
import io.sluice.metadata.image.MetadataJson;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * What a catalog of many queues costs a role (issue 16): a 3-member metadata group in this JVM (real Ratis over
 * loopback gRPC, logs on disk), QUEUES standard queues created through it by 8 writers, then a role's
 * {@link CachedCatalog}: the first refresh (the whole image), a refresh after one change (a delta), and the idle
 * check (the leader's index), each with the bytes it carries and the refreshing thread's CPU (parse and replay; the
 * leader's side is not in it), and the heap the cached image holds. Run by {@code scripts/bench-catalog.sh}.
 *
 * <p>Usage: {@code CatalogScaleBench QUEUES [PEERS]}: with PEERS ({@code m1=host:port,...}, a running group without TLS on
 * its Raft ports, e.g. a local cluster's) the queues are created there instead of in a group of this JVM's. With
 * {@code -Dbench.nodes=N} (this JVM's group only) N backend nodes are registered and kept alive by heartbeats first,
 * so every create places its partition's 3 replicas on them (unsharded placement, as in a catalog without shards).
 */
public final class CatalogScaleBench {
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private CatalogScaleBench() {
    }

    public static void main(String[] args) throws Exception {
        int queues = args.length > 0 ? Integer.parseInt(args[0]) : 100_000;
        if (args.length > 1) {
            try (MetadataClient client = new MetadataClient(MetadataPeers.parse(args[1]))) {
                run(client, queues);
            }
            return;
        }
        Path dir = Files.createTempDirectory("sluice-catalog-bench");
        List<MetadataServer> servers = new ArrayList<>();
        try {
            Map<String, String> addresses = new LinkedHashMap<>();
            for (int i = 1; i <= 3; i++) {
                try (ServerSocket s = new ServerSocket(0)) {
                    addresses.put("m" + i, "127.0.0.1:" + s.getLocalPort());
                }
            }
            MetadataPeers peers = new MetadataPeers(addresses);
            for (String id : addresses.keySet()) {
                MetadataServer s = new MetadataServer(id, peers, dir.resolve(id), SystemClock.INSTANCE, 3, 60_000,
                        10_000);
                s.start();
                servers.add(s);
            }
            try (MetadataClient client = new MetadataClient(peers)) {
                int nodes = Integer.getInteger("bench.nodes", 0);
                java.util.concurrent.ScheduledExecutorService beats = Executors.newSingleThreadScheduledExecutor();
                try {
                    if (nodes > 0) {
                        awaitLeader(client);
                        for (int i = 1; i <= nodes; i++) {
                            client.submit(new MetadataCommand.RegisterNode("b" + i, "127.0.0.1:" + (20_000 + i)));
                        }
                        beats.scheduleWithFixedDelay(() -> {
                            for (int i = 1; i <= nodes; i++) {
                                try {
                                    client.heartbeat("b" + i);
                                } catch (RuntimeException e) {
                                    // the next beat
                                }
                            }
                        }, 0, 500, TimeUnit.MILLISECONDS);
                        Thread.sleep(2_000); // the leader sees them alive
                    }
                    run(client, queues);
                    if (nodes > 0) {
                        System.out.printf("replicas placed per node: %s%n", client.fetchImage().replicasPerNode());
                    }
                } finally {
                    beats.shutdownNow();
                }
            }
        } finally {
            servers.forEach(MetadataServer::close);
            try (var walk = Files.walk(dir)) {
                walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    private static void awaitLeader(MetadataClient client) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            try {
                client.imageIndex();
                return;
            } catch (RuntimeException e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(200);
            }
        }
    }

    private static void run(MetadataClient client, int queues) throws Exception {
        awaitLeader(client);
        AtomicInteger next = new AtomicInteger();
        long started = System.nanoTime();
        ExecutorService pool = Executors.newFixedThreadPool(8);
        List<Future<?>> writers = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
            writers.add(pool.submit(() -> {
                int n;
                while ((n = next.getAndIncrement()) < queues) {
                    client.submit(new MetadataCommand.CreateQueue("queue-" + n, false, Map.of(), Map.of(), 1));
                }
                return null;
            }));
        }
        for (Future<?> w : writers) {
            w.get();
        }
        pool.shutdown();
        double seconds = (System.nanoTime() - started) / 1e9;
        System.out.printf("created %,d queues in %.1f s: %,.0f queues/s (8 writers, each create a Raft commit)%n",
                queues, seconds, queues / seconds);

        long heapBefore = usedHeapAfterGc();
        try (CachedCatalog role = new CachedCatalog(client, 3_600_000)) {
            ClusterImage[] image = new ClusterImage[1];
            long cpu = cpu(() -> image[0] = role.refresh());
            long imageBytes = MetadataJson.write(client.fetchImage()).length;
            long heapAfter = usedHeapAfterGc();
            System.out.printf("whole image: %,d queues, %,d bytes, %.1f ms CPU to fetch and parse; the cached image"
                    + " holds %,d bytes of heap (%,.0f per queue)%n", image[0].queues().size(), imageBytes,
                    cpu / 1e6, heapAfter - heapBefore, (heapAfter - heapBefore) / (double) image[0].queues().size());

            for (int round = 0; round < 3; round++) {
                client.submit(new MetadataCommand.CreateQueue("another-" + round, false, Map.of(), Map.of(), 1));
                long fromIndex = role.image().appliedIndex();
                long deltaBytes = MetadataJson.write(client.fetchDelta(fromIndex, true)).length;
                long deltaCpu = cpu(role::refresh);
                System.out.printf("refresh after one change: %,d bytes (delta), %.2f ms CPU to fetch and replay%n",
                        deltaBytes, deltaCpu / 1e6);
            }
            long idleCpu = cpu(client::imageIndex);
            System.out.printf("idle check (the leader's index, once a second per role): %.2f ms CPU%n", idleCpu / 1e6);
        }
    }

    private static long cpu(Supplier<?> work) {
        long before = THREADS.getCurrentThreadCpuTime();
        work.get();
        return THREADS.getCurrentThreadCpuTime() - before;
    }

    private static long usedHeapAfterGc() {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }
}
