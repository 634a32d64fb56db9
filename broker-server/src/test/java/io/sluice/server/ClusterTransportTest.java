package io.sluice.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.common.raft.RaftTransport;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Which Raft transport a role runs, and what it refuses at start. */
class ClusterTransportTest {
    @TempDir
    Path dir;

    private static ServerConfig config(Map<String, String> env) {
        return ServerConfig.load(null, env, Map.of());
    }

    @Test
    void plaintextOnLoopbackOnly() {
        assertFalse(ClusterTransport.forServer(config(Map.of()), "sluice backend", "127.0.0.1").isTls());
        assertFalse(ClusterTransport.forServer(config(Map.of()), "sluice backend", "127.0.0.3").isTls());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ClusterTransport.forServer(config(Map.of()), "sluice backend", "0.0.0.0"));
        assertTrue(e.getMessage().contains("sluice.cluster.tls.cert-file"), e.getMessage());
        assertFalse(ClusterTransport.forServer(config(Map.of("SLUICE_CLUSTER_ALLOW_PLAINTEXT", "true")),
                "sluice backend", "0.0.0.0").isTls(), "asked for");
        assertFalse(ClusterTransport.forClient(config(Map.of())).isTls(), "a frontend follows what it is given");
    }

    @Test
    void allThreeFilesOrNone() throws Exception {
        Map<String, String> env = certificates();
        assertTrue(ClusterTransport.forServer(config(env), "sluice backend", "0.0.0.0").isTls());
        assertTrue(ClusterTransport.forClient(config(env)).isTls());
        env.remove("SLUICE_CLUSTER_TLS_CA_FILE");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ClusterTransport.forClient(config(env)));
        assertTrue(e.getMessage().contains("all three"), e.getMessage());
    }

    @Test
    void badFilesStopTheStartWithTheirName() throws Exception {
        Map<String, String> env = certificates();
        Path notPem = Files.writeString(dir.resolve("garbage.pem"), "not a certificate");
        Map<String, String> badCert = new HashMap<>(env);
        badCert.put("SLUICE_CLUSTER_TLS_CERT_FILE", notPem.toString());
        Exception e = assertThrows(RuntimeException.class, () -> ClusterTransport.forClient(config(badCert)));
        assertTrue(e.getMessage().contains("garbage.pem"), e.getMessage());

        Map<String, String> badKey = new HashMap<>(env);
        badKey.put("SLUICE_CLUSTER_TLS_KEY_FILE", env.get("SLUICE_CLUSTER_TLS_CERT_FILE")); // a certificate, no key
        e = assertThrows(IllegalArgumentException.class, () -> ClusterTransport.forClient(config(badKey)));
        assertTrue(e.getMessage().contains("PKCS#8"), e.getMessage());

        Map<String, String> missing = new HashMap<>(env);
        missing.put("SLUICE_CLUSTER_TLS_CA_FILE", dir.resolve("nowhere.pem").toString());
        e = assertThrows(RuntimeException.class, () -> ClusterTransport.forClient(config(missing)));
        assertTrue(e.getMessage().contains("nowhere.pem"), e.getMessage());
        assertEquals("mutual TLS", ClusterTransport.forClient(config(env)).toString());
        assertEquals("plaintext", RaftTransport.PLAINTEXT.toString());
    }

    /** A CA and one certificate from deploy/tls/make-certs.sh, as configuration. */
    private Map<String, String> certificates() throws IOException, InterruptedException {
        Path script = Path.of("..", "deploy", "tls", "make-certs.sh");
        Process p = new ProcessBuilder("bash", script.toString(), dir.resolve("tls").toString(), "node=IP:127.0.0.1")
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0, out);
        Map<String, String> env = new HashMap<>();
        env.put("SLUICE_CLUSTER_TLS_CERT_FILE", dir.resolve("tls/node.pem").toString());
        env.put("SLUICE_CLUSTER_TLS_KEY_FILE", dir.resolve("tls/node-key.pem").toString());
        env.put("SLUICE_CLUSTER_TLS_CA_FILE", dir.resolve("tls/ca.pem").toString());
        return env;
    }
}
