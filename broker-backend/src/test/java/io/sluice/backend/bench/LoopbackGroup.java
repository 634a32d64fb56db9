package io.sluice.backend.bench;

import java.io.IOException;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;

/** The benchmarks' Raft group: three peers r1..r3 on free loopback ports. */
final class LoopbackGroup {
    private LoopbackGroup() {
    }

    static RaftGroup ofThree() throws IOException {
        List<RaftPeer> peers = new ArrayList<>();
        for (int i = 1; i <= 3; i++) {
            try (ServerSocket s = new ServerSocket(0)) {
                peers.add(RaftPeer.newBuilder().setId("r" + i).setAddress("127.0.0.1:" + s.getLocalPort()).build());
            }
        }
        return RaftGroup.valueOf(RaftGroupId.valueOf(UUID.randomUUID()), peers);
    }

    static int port(RaftPeer peer) {
        String address = peer.getAddress();
        return Integer.parseInt(address.substring(address.lastIndexOf(':') + 1));
    }
}
