package io.sluice.testing;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;

/** Ports for the servers and processes a test starts. */
public final class Ports {
    /** Ports handed out by this JVM: never twice. */
    private static final Set<Integer> HANDED_OUT = ConcurrentHashMap.newKeySet();

    private Ports() {
    }

    /**
     * A port to listen on, free now: from 23000-31999, below Linux's ephemeral range (32768+) where outgoing
     * connections take their local ports (a port from {@code new ServerSocket(0)} can be taken by one before the
     * server binds it: "Address already in use"), above the cluster.sh tests' fixed ports (21xxx, 22xxx), and never
     * the same twice in this JVM (the kernel may hand a port just closed out again, and two Raft members on one port
     * end the JVM: Ratis exits when its server cannot bind).
     */
    public static int free() throws IOException {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        for (int attempt = 0; attempt < 1000; attempt++) {
            int port = 23_000 + random.nextInt(9_000);
            if (!HANDED_OUT.add(port)) {
                continue;
            }
            try (ServerSocket s = new ServerSocket()) {
                s.bind(new InetSocketAddress("127.0.0.1", port));
                return port;
            } catch (IOException inUse) {
                // taken by something else: try another
            }
        }
        throw new IOException("no free port in 23000-31999");
    }
}
