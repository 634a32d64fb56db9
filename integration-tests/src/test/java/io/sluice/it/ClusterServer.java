package io.sluice.it;

import java.io.IOException;
import java.net.URI;
import java.util.Map;

/**
 * A cluster of real processes ({@link LocalCluster}, three backends or nodes, R = 3) as the server of a client
 * suite: its clients talk to one frontend (split) or one node (combined), as an application behind a load balancer
 * would to one of them. {@code -Dsluice.server=split|combined} (scripts/client-suite.sh) picks it.
 */
final class ClusterServer implements SqsServer {
    private final LocalCluster cluster;
    private final LocalCluster.Member entry;

    private ClusterServer(LocalCluster cluster) {
        this.cluster = cluster;
        this.entry = cluster.frontends().get(0);
    }

    static ClusterServer start(LocalCluster.Topology topology, String name) throws IOException {
        return new ClusterServer(LocalCluster.start(topology, name, 2, 3, Map.of("SLUICE_ACCESS_LOG_LEVEL", "WARN")));
    }

    @Override
    public URI endpoint() {
        return entry.endpoint();
    }

    @Override
    public int port() {
        return entry.sqsPort;
    }

    @Override
    public boolean alive() {
        return cluster.members().stream().allMatch(LocalCluster.Member::alive);
    }

    @Override
    public void awaitParkedPolls(int n) {
        entry.awaitParkedPolls(n);
    }

    @Override
    public void stop() {
        cluster.close();
    }

    @Override
    public String toString() {
        return cluster.topology.name().toLowerCase(java.util.Locale.ROOT) + " cluster, clients at " + entry.name;
    }
}
