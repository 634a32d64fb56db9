package io.sluice.it;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

/**
 * The nemesis' network faults on a cluster of hosts ({@link Hosts}): each is applied, held for a bounded time (3-8 s),
 * healed, and recorded in the history with its kind and target. Some overlap a second one (a slow link elsewhere
 * during a cut). The test's clients stay outside every namespace and reach every process: what is cut is the
 * cluster's own traffic, so a client can still talk to a process that cannot reach the majority.
 */
final class NetworkFaults {
    private final History history;

    NetworkFaults(History history) {
        this.history = history;
    }

    /** Cuts {@code name} off from every other process for {@code millis}, then heals. */
    void isolate(LocalCluster cluster, String name, String why, long millis) throws IOException, InterruptedException {
        long start = History.now();
        cluster.hosts().isolate(name);
        try {
            Thread.sleep(millis);
        } finally {
            cluster.hosts().heal();
        }
        history.faults.add(new History.Fault("isolate", name + " (" + why + ")", start, History.now()));
    }

    /** One process's links slow (100-500 ms, with jitter) and lossy (5-30 %) for 4-8 s, then healed. */
    void slow(LocalCluster cluster, Random random) throws IOException, InterruptedException {
        List<LocalCluster.Member> all = cluster.members();
        String name = all.get(random.nextInt(all.size())).name;
        int delay = 100 + random.nextInt(401);
        int jitter = delay / 4;
        int loss = 5 + random.nextInt(26);
        int seconds = 4 + random.nextInt(5);
        long start = History.now();
        cluster.hosts().slow(name, delay, jitter, loss, seconds + 5); // the delay program ends itself even if not healed
        try {
            Thread.sleep(seconds * 1_000L);
        } finally {
            cluster.hosts().heal();
        }
        history.faults.add(new History.Fault("slow", name + " " + delay + "+-" + jitter + " ms, " + loss + " % loss",
                start, History.now()));
    }

    /** One random network fault (sometimes with a slow link elsewhere at the same time), held 3-8 s, then healed. */
    void injectOne(LocalCluster cluster, Random random) throws IOException, InterruptedException {
        List<String> names = new ArrayList<>(cluster.members().stream().map(m -> m.name).toList());
        Collections.shuffle(names, random);
        long millis = 3_000 + random.nextInt(5_000);
        int kind = random.nextInt(6);
        if (kind == 0) {
            String queue = random.nextBoolean() ? "nem-std" : "nem-fifo.fifo";
            isolate(cluster, cluster.shardLeader(queue, 0), queue + " primary", millis);
            return;
        }
        if (kind == 1) {
            String leader = cluster.metadataLeader();
            if (leader != null) {
                isolate(cluster, leader, "metadata leader", millis);
                return;
            }
        }
        if (kind == 2) {
            List<LocalCluster.Member> frontends = cluster.frontends();
            isolate(cluster, frontends.get(random.nextInt(frontends.size())).name, "frontend", millis);
            return;
        }
        long start = History.now();
        String what;
        if (kind == 3 || kind == 1) { // majority/minority: a minority of 1 to (n-1)/2 processes
            int minority = 1 + random.nextInt(Math.max(1, (names.size() - 1) / 2));
            List<String> small = names.subList(0, minority);
            List<String> large = names.subList(minority, names.size());
            cluster.hosts().split(small, large);
            what = "split " + small + " | " + large;
        } else if (kind == 4) { // a bridge: two halves that cannot see each other, one process that sees both
            String bridge = names.get(0);
            List<String> rest = names.subList(1, names.size());
            List<String> one = rest.subList(0, rest.size() / 2);
            List<String> other = rest.subList(rest.size() / 2, rest.size());
            cluster.hosts().split(one, other);
            what = "bridge " + bridge + " between " + one + " | " + other;
        } else { // one way: a shard leader's packets to another replica are lost, the replies still arrive
            String from = cluster.shardLeader("nem-std", 0);
            List<LocalCluster.Member> replicas = cluster.backends().stream().filter(b -> !b.name.equals(from)).toList();
            String to = replicas.get(random.nextInt(replicas.size())).name;
            cluster.hosts().cut(from, to);
            what = "one-way " + from + " -> " + to;
        }
        boolean overlap = random.nextInt(3) == 0;
        if (overlap) { // another process's links slow and lossy meanwhile
            String slow = names.get(names.size() - 1);
            cluster.hosts().slow(slow, 200, 50, 10, (int) (millis / 1_000) + 5);
            what += ", and " + slow + " slow (200+-50 ms, 10 % loss)";
        }
        try {
            Thread.sleep(millis);
        } finally {
            cluster.hosts().heal();
        }
        history.faults.add(new History.Fault(kind == 5 ? "one-way" : kind == 4 ? "bridge" : "split", what, start,
                History.now()));
    }
}
