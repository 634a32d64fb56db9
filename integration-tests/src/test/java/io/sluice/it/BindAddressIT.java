package io.sluice.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Every port is a door: {@code sluice dev --host 127.0.0.1} listens on 127.0.0.1 only — its SQS port, its admin
 * port and its in-process metadata member's Raft port — read from the kernel's socket tables, not from what the
 * server says. (The local cluster's processes are checked the same way in {@link ClusterScriptIT}.)
 */
class BindAddressIT {

    @Test
    void devListensOnlyOnItsConfiguredAddress() throws Exception {
        try (SluiceProcess dev = SluiceProcess.start("bind", "--host", "127.0.0.1")) {
            Set<String> sockets = ListeningSockets.of(dev.pid());
            assertTrue(sockets.contains("127.0.0.1:" + dev.port()), "the SQS port: " + sockets);
            assertTrue(sockets.contains("127.0.0.1:" + dev.adminEndpoint().getPort()), "the admin port: " + sockets);
            assertTrue(sockets.contains("127.0.0.1:" + dev.metadataPort()), "the metadata Raft port: " + sockets);
            assertEquals(Set.of(), onOtherAddresses(sockets, "127.0.0.1"), "listening beyond 127.0.0.1");
        }
    }

    @Test
    void addressesDecodeAsTheKernelWritesThem() {
        assertEquals("127.0.0.1:8080", ListeningSockets.address("0100007F:1F90"));
        assertEquals("0.0.0.0:22", ListeningSockets.address("00000000:0016"));
        assertEquals("127.0.0.1:9324", ListeningSockets.address("0000000000000000FFFF00000100007F:246C"));
        assertEquals(":::9326", ListeningSockets.address("00000000000000000000000000000000:246E"));
    }

    /** The sockets not on {@code host}. */
    static Set<String> onOtherAddresses(Set<String> sockets, String host) {
        Set<String> out = new java.util.TreeSet<>();
        sockets.stream().filter(s -> !s.startsWith(host + ":")).forEach(out::add);
        return out;
    }
}
