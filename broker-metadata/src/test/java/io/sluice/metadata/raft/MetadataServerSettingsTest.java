package io.sluice.metadata.raft;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.sluice.common.SystemClock;
import io.sluice.common.raft.RaftTransport;
import io.sluice.testing.Ports;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MetadataServerSettingsTest {
    @TempDir
    Path dir;

    @Test
    void itsGroupRunsWithTheElectionTimeoutItIsGiven() throws Exception {
        MetadataPeers peers = new MetadataPeers(Map.of("m1", "127.0.0.1:" + Ports.free()));
        try (MetadataServer member = new MetadataServer("m1", "127.0.0.1", peers, dir, SystemClock.INSTANCE, 1,
                30_000, 1_000, 0, RaftTransport.PLAINTEXT, 1_500)) {
            member.start(); // closed once started: a Ratis server closed before its start leaves its threads behind
            var properties = member.raftProperties();
            assertEquals(1_500, RaftServerConfigKeys.Rpc.timeoutMin(properties).toLong(TimeUnit.MILLISECONDS));
            assertEquals(3_000, RaftServerConfigKeys.Rpc.timeoutMax(properties).toLong(TimeUnit.MILLISECONDS));
        }
    }
}
