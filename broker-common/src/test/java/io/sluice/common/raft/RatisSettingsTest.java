package io.sluice.common.raft;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.junit.jupiter.api.Test;

class RatisSettingsTest {
    private static long min(RaftProperties p) {
        return RaftServerConfigKeys.Rpc.timeoutMin(p).toLong(TimeUnit.MILLISECONDS);
    }

    private static long max(RaftProperties p) {
        return RaftServerConfigKeys.Rpc.timeoutMax(p).toLong(TimeUnit.MILLISECONDS);
    }

    @Test
    void theElectionTimeoutRangesFromTheConfiguredValueToTwiceIt() {
        RaftProperties p = RatisSettings.server(Path.of("raft"), "127.0.0.1", 1, 100, 750);
        assertEquals(750, min(p));
        assertEquals(1_500, max(p));
    }

    @Test
    void withoutOneItIsTheDefault() {
        RaftProperties p = RatisSettings.server(Path.of("raft"), "127.0.0.1", 1, 100);
        assertEquals(RatisSettings.DEFAULT_ELECTION_TIMEOUT_MS, min(p));
        assertEquals(2L * RatisSettings.DEFAULT_ELECTION_TIMEOUT_MS, max(p));
    }

    @Test
    void appendsToAFollowerAreSpaced10MsApartUnlessConfigured() {
        RaftProperties p = RatisSettings.server(Path.of("raft"), "127.0.0.1", 1, 100);
        assertEquals(10, RaftServerConfigKeys.Log.Appender.waitTimeMin(p).toLong(TimeUnit.MILLISECONDS),
                "entries coming within 10 ms of the last append share the next one (Ratis' default: 1 ms)");
        String before = System.getProperty(RatisSettings.APPEND_SPACING_PROPERTY);
        System.setProperty(RatisSettings.APPEND_SPACING_PROPERTY, "1");
        try {
            RaftProperties spaced = RatisSettings.server(Path.of("raft"), "127.0.0.1", 1, 100);
            assertEquals(1, RaftServerConfigKeys.Log.Appender.waitTimeMin(spaced).toLong(TimeUnit.MILLISECONDS));
        } finally {
            if (before == null) {
                System.clearProperty(RatisSettings.APPEND_SPACING_PROPERTY);
            } else {
                System.setProperty(RatisSettings.APPEND_SPACING_PROPERTY, before);
            }
        }
    }
}
