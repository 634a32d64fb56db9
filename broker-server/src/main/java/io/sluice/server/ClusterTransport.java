package io.sluice.server;

import io.sluice.common.raft.RaftTransport;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.util.List;

/**
 * The Raft transport a cluster role runs, from {@code sluice.cluster.tls.*}: mutual TLS when the three files are
 * named, plaintext otherwise — but a metadata member or backend whose Raft port binds a non-loopback address refuses
 * plaintext unless {@code sluice.cluster.allow-plaintext} says so: an open Raft port accepts commands from whoever
 * reaches it.
 */
final class ClusterTransport {
    private ClusterTransport() {
    }

    /** The transport of a process that only dials Raft (a frontend, or {@code sluice dev} with external peers). */
    static RaftTransport forClient(ServerConfig config) {
        return configured(config);
    }

    /** The transport of a process whose Raft server binds {@code raftBindHost}. */
    static RaftTransport forServer(ServerConfig config, String role, String raftBindHost) {
        RaftTransport transport = configured(config);
        if (!transport.isTls() && !isLoopback(raftBindHost) && !config.get(ServerConfigKeys.CLUSTER_ALLOW_PLAINTEXT)) {
            throw new IllegalArgumentException(role + " binds its Raft port to " + raftBindHost + " without TLS: set "
                    + ServerConfigKeys.CLUSTER_TLS_CERT.name() + ", " + ServerConfigKeys.CLUSTER_TLS_KEY.name() + " and "
                    + ServerConfigKeys.CLUSTER_TLS_CA.name() + " (deploy/tls/make-certs.sh makes a CA and certificates),"
                    + " or " + ServerConfigKeys.CLUSTER_ALLOW_PLAINTEXT.name() + "=true on a network only the cluster"
                    + " reaches");
        }
        return transport;
    }

    private static RaftTransport configured(ServerConfig config) {
        List<String> files = List.of(config.get(ServerConfigKeys.CLUSTER_TLS_CERT),
                config.get(ServerConfigKeys.CLUSTER_TLS_KEY), config.get(ServerConfigKeys.CLUSTER_TLS_CA));
        long named = files.stream().filter(f -> !f.isBlank()).count();
        if (named == 0) {
            return RaftTransport.PLAINTEXT;
        }
        if (named < 3) {
            throw new IllegalArgumentException("Raft TLS needs all three of " + ServerConfigKeys.CLUSTER_TLS_CERT.name()
                    + ", " + ServerConfigKeys.CLUSTER_TLS_KEY.name() + " and " + ServerConfigKeys.CLUSTER_TLS_CA.name());
        }
        return RaftTransport.mutualTls(Path.of(files.get(0)), Path.of(files.get(1)), Path.of(files.get(2)));
    }

    static boolean isLoopback(String host) {
        try {
            return InetAddress.getByName(host).isLoopbackAddress();
        } catch (UnknownHostException e) {
            return false;
        }
    }
}
