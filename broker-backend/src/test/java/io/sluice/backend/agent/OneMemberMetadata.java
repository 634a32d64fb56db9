package io.sluice.backend.agent;

import io.sluice.common.SystemClock;
import io.sluice.metadata.raft.MetadataClient;
import io.sluice.metadata.raft.MetadataPeers;
import io.sluice.metadata.raft.MetadataServer;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.Map;

/** A real one-member metadata group on a free loopback port, and a client of it, for the agents' tests. */
record OneMemberMetadata(MetadataServer server, MetadataClient client) implements AutoCloseable {
    static OneMemberMetadata start(Path dir) throws IOException {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        MetadataPeers peers = new MetadataPeers(Map.of("meta-1", "127.0.0.1:" + port));
        MetadataServer server = new MetadataServer("meta-1", peers, dir, SystemClock.INSTANCE, 1, 30_000, 1_000);
        try {
            server.start();
            return new OneMemberMetadata(server, new MetadataClient(peers));
        } catch (IOException | RuntimeException e) {
            try {
                server.close();
            } catch (Exception closing) {
                e.addSuppressed(closing);
            }
            throw e;
        }
    }

    @Override
    public void close() throws Exception {
        client.close();
        server.close();
    }
}
