package io.sluice.it;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.client.config.ClientOverrideConfiguration;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.MessageSystemAttributeName;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;

/**
 * A nemesis against a real cluster (3 metadata members, 3 backends at R = 3, 2 frontends) with a history checker.
 * Producers and consumers work a standard and a FIFO queue, each with a dead-letter queue (maxReceiveCount 3): some
 * messages are poison (never deleted: they must end in the dead-letter queue), some are released early
 * (ChangeMessageVisibility 0), FIFO producers resend some messages with the same deduplication id. Meanwhile the
 * nemesis injects, at random for a bounded time: SIGKILL and restart of any process, SIGSTOP/SIGCONT of a shard
 * leader for longer than the election timeout, a backend restarted with its clock shifted (the test-only
 * {@code sluice.test.clock-offset-ms}); and, where the machine can make network namespaces (root: every process then
 * runs on a host of its own, {@link Hosts}), cuts in the network: a node isolated (the busy shard's leader, the
 * metadata leader, a frontend, or any), a majority/minority split, a "bridge" (two halves that cannot see each other
 * and one process that sees both), a one-way cut, and a slow, lossy link (100-500 ms with jitter, 5-30 % loss); each
 * healed after a bounded time, and some overlapping another fault. Every operation and its outcome is recorded
 * ({@link History}); after the faults stop and the cluster is whole, the queues are drained and the checker
 * verifies: no acknowledged send lost (an acknowledgement from a minority side that the majority does not have would
 * be one), no message delivered again inside an unexpired visibility window (except across a pause, counted and
 * reported; never across a partition), FIFO order per group, one message per deduplication id, every poison message
 * in its dead-letter queue.
 *
 * <p>CI runs a bounded form ({@code -Dsluice.nemesis.seconds}, 45 s of faults by default, on hosts: at least one
 * partition and one lossy link); {@code scripts/nemesis.sh} runs the long one, on either topology. A fixed seed
 * ({@code -Dsluice.nemesis.seed}) replays the same fault schedule.
 */
@Timeout(value = 75, unit = TimeUnit.MINUTES)
class NemesisIT {
    static final int VISIBILITY = 5;
    static final int MAX_RECEIVES = 3;
    static final int CLOCK_OFFSET_MS = 300;

    final History history = new History();
    final NetworkFaults network = new NetworkFaults(history);
    final AtomicBoolean producing = new AtomicBoolean(true);
    final AtomicBoolean consuming = new AtomicBoolean(true);

    @Test
    void faultsBreakNoPromise() throws Exception {
        int seconds = Integer.getInteger("sluice.nemesis.seconds", 45);
        String seedText = System.getProperty("sluice.nemesis.seed", "");
        long seed = seedText.isBlank() ? System.nanoTime() : Long.parseLong(seedText.trim());
        boolean onHosts = Hosts.wanted();
        LocalCluster.Topology topology = LocalCluster.topologies().findFirst().orElse(LocalCluster.Topology.SPLIT);
        System.out.printf("nemesis: %d s of faults, seed %d, %s topology, %s%n", seconds, seed, topology,
                onHosts ? "each process on a host of its own (network faults on)" : "on loopback (no network faults)");
        Map<String, String> env = Map.of("SLUICE_BACKEND_DEAD_AFTER_MS", "120000");
        try (LocalCluster cluster = topology == LocalCluster.Topology.SPLIT
                ? LocalCluster.split("nemesis", 3, 3, 2, env, onHosts)
                : LocalCluster.combined("nemesis-combined", 3, 3, env, onHosts)) {
            List<URI> endpoints = cluster.frontends().stream().map(LocalCluster.Member::endpoint).toList();
            String std;
            String fifo;
            String stdDlq;
            String fifoDlq;
            try (SqsClient admin = client(endpoints.get(0))) {
                stdDlq = admin.createQueue(b -> b.queueName("nem-std-dlq")).queueUrl();
                fifoDlq = admin.createQueue(b -> b.queueName("nem-fifo-dlq.fifo").attributes(Map.of(
                        QueueAttributeName.FIFO_QUEUE, "true"))).queueUrl();
                std = admin.createQueue(b -> b.queueName("nem-std").attributes(Map.of(
                        QueueAttributeName.REDRIVE_POLICY, redrive(admin, stdDlq)))).queueUrl();
                fifo = admin.createQueue(b -> b.queueName("nem-fifo.fifo").attributes(Map.of(
                        QueueAttributeName.FIFO_QUEUE, "true",
                        QueueAttributeName.REDRIVE_POLICY, redrive(admin, fifoDlq)))).queueUrl();
            }
            Map<String, String> names = Map.of(std, "nem-std", fifo, "nem-fifo.fifo", stdDlq, "nem-std-dlq",
                    fifoDlq, "nem-fifo-dlq.fifo");

            ExecutorService workers = Executors.newCachedThreadPool();
            List<java.util.concurrent.Future<?>> running = new ArrayList<>();
            for (int p = 0; p < 2; p++) {
                int id = p;
                running.add(workers.submit(() -> produce(endpoints, std, names.get(std), "s" + id, null, seed + id)));
                running.add(workers.submit(() -> produce(endpoints, fifo, names.get(fifo), "f" + id, "g" + id,
                        seed + 10 + id)));
            }
            List<java.util.concurrent.Future<?>> consumers = new ArrayList<>();
            for (int c = 0; c < 2; c++) {
                int id = c;
                consumers.add(workers.submit(() -> consume(endpoints, std, names.get(std), seed + 20 + id, consuming)));
                consumers.add(workers.submit(() -> consume(endpoints, fifo, names.get(fifo), seed + 30 + id,
                        consuming)));
            }

            long faultsUntil = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
            Random random = new Random(seed);
            int injected = 0;
            boolean handBacksOnly = "handback".equals(System.getProperty("sluice.nemesis.only", ""));
            while (System.nanoTime() < faultsUntil) {
                Thread.sleep(2_000 + random.nextInt(4_000));
                if (handBacksOnly) {
                    handBack(cluster, random);
                } else if (injected == 0) { // whatever the seed: the busy standard queue's primary is killed at least once
                    long start = History.now();
                    String primary = cluster.shardLeader("nem-std", 0);
                    cluster.kill(primary);
                    Thread.sleep(2_000);
                    cluster.start(primary);
                    history.faults.add(new History.Fault("kill", primary + " (primary)", start, History.now()));
                } else if (injected == 1 && cluster.hosts() != null) { // and, on hosts, it is cut off once
                    network.isolate(cluster, cluster.shardLeader("nem-std", 0), "primary", 3_000 + random.nextInt(3_000));
                } else if (injected == 2 && cluster.hosts() != null) { // and a link is slow and lossy once
                    network.slow(cluster, random);
                } else if (cluster.hosts() != null && random.nextInt(10) < 4) {
                    network.injectOne(cluster, random);
                } else {
                    injectOne(cluster, random);
                }
                injected++;
            }
            producing.set(false);
            for (var f : running) {
                f.get(2, TimeUnit.MINUTES);
            }
            heal(cluster);
            // drain: the consumers go on and the dead-letter queues are drained too, until every acknowledged send is
            // accounted for, or nothing new has arrived for long enough (a poison message needs MAX_RECEIVES leases
            // to run out, then its hand-off; a FIFO group behind it waits as long)
            AtomicBoolean draining = new AtomicBoolean(true);
            var dlqDrain = List.of(workers.submit(() -> consume(endpoints, stdDlq, names.get(stdDlq), seed, draining)),
                    workers.submit(() -> consume(endpoints, fifoDlq, names.get(fifoDlq), seed, draining)));
            long drainStarted = System.nanoTime();
            int outstanding = drainUntilAccountedFor(Map.of("nem-std", "nem-std-dlq", "nem-fifo.fifo",
                    "nem-fifo-dlq.fifo"), Duration.ofSeconds((long) VISIBILITY * (MAX_RECEIVES + 2) * 4));
            System.out.printf("nemesis: drained in %d s, %d acknowledged sends not accounted for%n",
                    TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - drainStarted), outstanding);
            consuming.set(false);
            draining.set(false);
            for (var f : consumers) {
                f.get(2, TimeUnit.MINUTES);
            }
            for (var f : dlqDrain) {
                f.get(2, TimeUnit.MINUTES);
            }
            workers.shutdownNow();

            History.Findings findings = history.check(Map.of("nem-std", "nem-std-dlq", "nem-fifo.fifo",
                    "nem-fifo-dlq.fifo"), Set.of("nem-fifo.fifo"), CLOCK_OFFSET_MS + 500);
            System.out.printf("nemesis: %d faults injected %s; %s%s%n", injected, history.faultCounts(),
                    findings.summary(), findings.details());
            List<String> diverged = replicaDivergences(cluster);
            assertTrue(findings.acknowledged() > 100, "the workload ran: " + findings.summary());
            assertTrue(findings.clean(), findings.summary() + findings.details());
            assertTrue(diverged.isEmpty(), "replicas diverged: " + diverged);
        }
    }

    /**
     * Replicas of a shard that applied the same entry hold the same store after it, so the same digest
     * ({@code ShardStore.Applied}, the last entries each replica reports in {@code /admin/status}): compared at the
     * highest index every replica reports, polled for up to 30 s (followers catch up). Prints how many shards were
     * compared and returns one line per shard whose replicas disagree.
     */
    static List<String> replicaDivergences(LocalCluster cluster) throws InterruptedException {
        Map<String, String> verdicts = new java.util.TreeMap<>(); // group -> "" (agreed) or what differed
        Set<String> seen = new java.util.TreeSet<>();
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        do {
            Map<String, Map<String, Map<Long, String>>> reports = new java.util.HashMap<>();
            for (LocalCluster.Member m : cluster.backends()) {
                var status = m.status();
                if (status == null) {
                    continue;
                }
                for (var shard : status.path("hostedShards")) {
                    Map<Long, String> digests = new java.util.HashMap<>();
                    shard.path("digests").forEach(pair -> digests.put(pair.get(0).asLong(), pair.get(1).asText()));
                    reports.computeIfAbsent(shard.path("groupId").asText(), g -> new java.util.TreeMap<>())
                            .put(m.name, digests);
                }
            }
            reports.forEach((group, byMember) -> {
                seen.add(group);
                if (verdicts.containsKey(group) || byMember.size() < 2) {
                    return;
                }
                Set<Long> common = null;
                for (Map<Long, String> d : byMember.values()) {
                    if (common == null) {
                        common = new java.util.HashSet<>(d.keySet());
                    } else {
                        common.retainAll(d.keySet());
                    }
                }
                if (common == null || common.isEmpty()) {
                    return; // not caught up yet (or idle since a restart): asked again
                }
                long at = java.util.Collections.max(common);
                Map<String, String> atIndex = new java.util.TreeMap<>();
                byMember.forEach((member, d) -> atIndex.put(member, d.get(at)));
                verdicts.put(group, new java.util.HashSet<>(atIndex.values()).size() == 1 ? ""
                        : "shard group " + group + " at index " + at + ": " + atIndex);
            });
            if (!seen.isEmpty() && verdicts.keySet().containsAll(seen)) {
                break;
            }
            Thread.sleep(500);
        } while (System.nanoTime() < until);
        List<String> diverged = verdicts.values().stream().filter(v -> !v.isEmpty()).toList();
        System.out.printf("nemesis: replica digests compared for %d of %d shard groups, %d diverged%n",
                verdicts.size(), seen.size(), diverged.size());
        return diverged;
    }

    private static String redrive(SqsClient admin, String dlqUrl) {
        String arn = admin.getQueueAttributes(b -> b.queueUrl(dlqUrl).attributeNames(QueueAttributeName.QUEUE_ARN))
                .attributes().get(QueueAttributeName.QUEUE_ARN);
        return "{\"deadLetterTargetArn\":\"" + arn + "\",\"maxReceiveCount\":\"" + MAX_RECEIVES + "\"}";
    }

    /**
     * A client without SDK retries (each call's outcome is what the history records) and a bounded call time (a
     * paused frontend must not hold a worker for long).
     */
    static SqsClient client(URI endpoint) {
        return SqsClient.builder().endpointOverride(endpoint).region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(
                        SluiceProcess.ACCESS_KEY, SluiceProcess.SECRET_KEY)))
                .httpClient(UrlConnectionHttpClient.builder().connectionTimeout(Duration.ofSeconds(2))
                        .socketTimeout(Duration.ofSeconds(15)).build())
                .overrideConfiguration(ClientOverrideConfiguration.builder()
                        .apiCallAttemptTimeout(Duration.ofSeconds(15))
                        .retryStrategy(b -> b.maxAttempts(1)).build())
                .build();
    }

    /** Clients of every frontend; a worker moves to the next after a failure. */
    static final class Frontends implements AutoCloseable {
        final List<SqsClient> clients = new ArrayList<>();
        int current;

        Frontends(List<URI> endpoints, int first) {
            endpoints.forEach(e -> clients.add(client(e)));
            current = first % clients.size();
        }

        SqsClient get() {
            return clients.get(current);
        }

        void failed() {
            current = (current + 1) % clients.size();
        }

        @Override
        public void close() {
            clients.forEach(SqsClient::close);
        }
    }

    /**
     * Sends numbered messages until told to stop, ~20 a second; one in ten is poison. A FIFO producer owns its groups
     * and resends a message whose outcome is unknown, and one in twenty on purpose, with the same deduplication id.
     */
    private void produce(List<URI> endpoints, String url, String queue, String producer, String groupPrefix,
                         long seed) {
        Random random = new Random(seed);
        try (Frontends frontends = new Frontends(endpoints, (int) (seed & 1))) {
            for (int n = 0; producing.get(); n++) {
                boolean poison = random.nextInt(10) == 0;
                String body = producer + "-" + n + (poison ? "-poison" : "");
                String group = groupPrefix == null ? null : groupPrefix + "-" + (n % 4);
                int attempts = 0;
                boolean acknowledged = false;
                while (!acknowledged && attempts++ < 20 && (producing.get() || groupPrefix != null)) {
                    long start = History.now();
                    String id = null;
                    try {
                        id = frontends.get().sendMessage(b -> {
                            b.queueUrl(url).messageBody(body);
                            if (group != null) {
                                b.messageGroupId(group).messageDeduplicationId(body);
                            }
                        }).messageId();
                        acknowledged = true;
                    } catch (RuntimeException e) {
                        frontends.failed();
                        sleep(200);
                    }
                    history.sends.add(new History.Send(queue, body, group, group == null ? null : body, poison, start,
                            History.now(), id));
                    if (groupPrefix == null) {
                        break; // standard queue: an unknown outcome is not retried (it may or may not be stored)
                    }
                }
                if (acknowledged && groupPrefix != null && random.nextInt(20) == 0) {
                    long start = History.now();
                    try { // a deliberate duplicate inside the deduplication window: must not be stored again
                        String id = frontends.get().sendMessage(b -> b.queueUrl(url).messageBody(body)
                                .messageGroupId(group).messageDeduplicationId(body)).messageId();
                        history.sends.add(new History.Send(queue, body, group, body, poison, start, History.now(),
                                id));
                    } catch (RuntimeException e) {
                        frontends.failed();
                    }
                }
                sleep(groupPrefix == null ? 50 : 100); // a FIFO group drains one message at a time
            }
        }
    }

    /** Receives until told to stop; deletes what it processed, leaves poison alone, releases one in ten early. */
    private void consume(List<URI> endpoints, String url, String queue, long seed, AtomicBoolean running) {
        Random random = new Random(seed);
        try (Frontends frontends = new Frontends(endpoints, (int) (seed & 1))) {
            while (running.get()) {
                long start = History.now();
                List<Message> messages;
                try {
                    messages = frontends.get().receiveMessage(b -> b.queueUrl(url).maxNumberOfMessages(10)
                            .waitTimeSeconds(1).visibilityTimeout(VISIBILITY)
                            .messageSystemAttributeNames(MessageSystemAttributeName.APPROXIMATE_RECEIVE_COUNT))
                            .messages();
                } catch (RuntimeException e) {
                    frontends.failed();
                    sleep(200);
                    continue;
                }
                long end = History.now();
                for (int i = 0; i < messages.size(); i++) {
                    Message m = messages.get(i);
                    int count = Integer.parseInt(m.attributes().getOrDefault(
                            MessageSystemAttributeName.APPROXIMATE_RECEIVE_COUNT, "0"));
                    history.receives.add(new History.Receive(queue, m.body(), m.messageId(), m.receiptHandle(), count,
                            start, end, VISIBILITY, i));
                }
                for (Message m : messages) {
                    if (m.body().endsWith("-poison") && !queue.contains("dlq")) {
                        continue; // never deleted: its lease runs out until the dead-letter queue takes it
                    }
                    boolean release = !queue.contains("dlq") && random.nextInt(10) == 0;
                    long s = History.now();
                    try {
                        if (release) {
                            // recorded whatever its outcome: one that timed out may still have been applied
                            history.changes.add(new History.VisibilityChange(m.receiptHandle(), 0, s, s));
                            frontends.get().changeMessageVisibility(b -> b.queueUrl(url)
                                    .receiptHandle(m.receiptHandle()).visibilityTimeout(0));
                        } else {
                            frontends.get().deleteMessage(b -> b.queueUrl(url).receiptHandle(m.receiptHandle()));
                            history.deletes.add(new History.Delete(m.receiptHandle(), s, History.now()));
                        }
                    } catch (RuntimeException e) {
                        frontends.failed();
                    }
                }
            }
        }
    }

    /**
     * Waits until every acknowledged send is accounted for (received from its queue, a poison message from its
     * dead-letter queue), or until no new message has been received for {@code stalled}, at most 20 minutes (a backlog
     * built up under the faults drains at the consumers' pace). Returns how many are still not accounted for.
     */
    private int drainUntilAccountedFor(Map<String, String> deadLetterQueueOf, Duration stalled)
            throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(20);
        java.util.Set<String> seen = new java.util.HashSet<>();
        int read = 0;
        long progressAt = System.nanoTime();
        int outstanding = Integer.MAX_VALUE;
        while (System.nanoTime() < deadline) {
            Thread.sleep(1_000);
            List<History.Receive> all = new ArrayList<>(history.receives);
            for (int i = read; i < all.size(); i++) {
                if (seen.add(all.get(i).queue() + "|" + all.get(i).body())) {
                    progressAt = System.nanoTime();
                }
            }
            read = all.size();
            outstanding = 0;
            for (History.Send s : history.sends) {
                if (s.messageId() == null) {
                    continue;
                }
                String dlq = deadLetterQueueOf.get(s.queue());
                boolean done = seen.contains(dlq + "|" + s.body()) || (!s.poison() && seen.contains(s.queue() + "|"
                        + s.body()));
                outstanding += done ? 0 : 1;
            }
            if (outstanding == 0 || System.nanoTime() - progressAt > stalled.toNanos()) {
                return outstanding;
            }
        }
        return outstanding;
    }

    /** One random fault, over when the cluster is whole again. */
    private void injectOne(LocalCluster cluster, Random random) throws Exception {
        List<LocalCluster.Member> all = cluster.members();
        int kind = random.nextInt(10);
        long start = History.now();
        if (kind < 5) { // SIGKILL of any process, down 1-3 s, restarted
            LocalCluster.Member victim = all.get(random.nextInt(all.size()));
            cluster.kill(victim.name);
            Thread.sleep(1_000 + random.nextInt(2_000));
            cluster.start(victim.name);
            history.faults.add(new History.Fault("kill", victim.name, start, History.now()));
        } else if (kind < 8) { // SIGSTOP of a shard leader, longer than the election timeout (0.5-1 s)
            String leader = cluster.shardLeader("nem-fifo.fifo", 0);
            if (random.nextBoolean()) {
                leader = cluster.shardLeader("nem-std", 0);
            }
            cluster.pause(leader);
            Thread.sleep(2_000 + random.nextInt(2_000));
            cluster.resume(leader);
            history.faults.add(new History.Fault("pause", leader, start, History.now()));
        } else { // a backend restarted with its clock shifted (within the allowed skew), later restarted right
            List<LocalCluster.Member> backends = cluster.backends();
            LocalCluster.Member victim = backends.get(random.nextInt(backends.size()));
            int offset = random.nextBoolean() ? CLOCK_OFFSET_MS : -CLOCK_OFFSET_MS;
            cluster.kill(victim.name);
            cluster.start(victim.name, Map.of("SLUICE_TEST_CLOCK_OFFSET_MS", Integer.toString(offset)));
            Thread.sleep(3_000 + random.nextInt(3_000));
            cluster.kill(victim.name);
            cluster.start(victim.name);
            history.faults.add(new History.Fault("clock", victim.name + " " + offset + " ms", start, History.now()));
        }
    }

    /**
     * {@code -Dsluice.nemesis.only=handback}: the one fault the 30-minute run on hosts found double deliveries at.
     * The busy standard queue's shard's preferred replica (its first) is killed, down 1-3 s,
     * restarted (half the time with its clock shifted), and leads again once caught up: the old leader hands the
     * shard back to it under load.
     */
    private void handBack(LocalCluster cluster, Random random) throws Exception {
        long start = History.now();
        var image = cluster.image();
        long queueId = image.queues().get("nem-std").queueId();
        String shardId = image.partitions().get(io.sluice.metadata.image.PartitionAssignment.key(queueId, 0)).shardId();
        String preferred = image.shards().get(shardId).replicas().get(0);
        String group = cluster.shardGroupOf("nem-std", 0);
        cluster.kill(preferred);
        Thread.sleep(1_000 + random.nextInt(2_000));
        int offset = random.nextBoolean() ? 0 : random.nextBoolean() ? CLOCK_OFFSET_MS : -CLOCK_OFFSET_MS;
        cluster.start(preferred, offset == 0 ? Map.of() : Map.of("SLUICE_TEST_CLOCK_OFFSET_MS",
                Integer.toString(offset)));
        // the leader hands the shard back once the preferred replica has answered steadily for 3 s (BackendServer
        // .handBack): wait up to a minute, and go on either way
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        boolean back = false;
        while (!back && System.nanoTime() < until) {
            Thread.sleep(250);
            back = cluster.member(preferred).leads(group);
        }
        history.faults.add(new History.Fault(back ? "handback" : "restart", preferred + " (clock " + offset + " ms)",
                start, History.now()));
    }

    /** Lifts network faults, resumes what is paused and starts what is down, then waits for every backend to be ready. */
    private static void heal(LocalCluster cluster) throws Exception {
        if (cluster.hosts() != null) {
            cluster.hosts().heal();
        }
        for (LocalCluster.Member m : cluster.members()) {
            if (!m.alive()) {
                cluster.start(m.name);
            }
        }
        ClusterState.awaitTrue("every backend ready after the faults", Duration.ofMinutes(3),
                () -> cluster.backends().stream().allMatch(b -> b.readyStatus() == 200), cluster::state);
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
