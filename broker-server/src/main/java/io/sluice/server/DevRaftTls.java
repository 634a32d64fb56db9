package io.sluice.server;

import io.sluice.common.raft.RaftTransport;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.TrustManagerFactory;

/**
 * {@code sluice dev}'s in-process metadata member listens on a loopback port, and loopback is no trust boundary (any
 * local process, a sidecar in the same pod, can dial it): it speaks mutual TLS with a certificate made at each start,
 * which is both the process's identity and the only one it trusts, so nothing but the process itself can open a
 * session. The key pair and self-signed certificate come from the JDK's {@code keytool} (the JDK has no API to sign a
 * certificate) into a PKCS#12 file under the owner-only data folder, read back, and deleted at once; the key lives in
 * memory only after that.
 */
final class DevRaftTls {
    private DevRaftTls() {
    }

    static RaftTransport create(Path dataDir) {
        char[] password = HexFormat.of().formatHex(randomBytes()).toCharArray();
        Path store = dataDir.resolve("dev-raft-" + HexFormat.of().formatHex(randomBytes()) + ".p12");
        try {
            Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
            ProcessBuilder pb = new ProcessBuilder(List.of(keytool.toString(), "-genkeypair", "-alias", "sluice-dev",
                    "-keyalg", "EC", "-groupname", "secp256r1", "-sigalg", "SHA256withECDSA", "-dname", "CN=sluice-dev",
                    "-ext", "SAN=ip:127.0.0.1,dns:localhost", "-validity", "3650", "-storetype", "PKCS12",
                    "-keystore", store.toString(), "-storepass:env", "SLUICE_DEV_STOREPASS"))
                    .redirectErrorStream(true);
            pb.environment().put("SLUICE_DEV_STOREPASS", new String(password)); // never on a command line
            Process p = pb.start();
            p.getOutputStream().close();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException("keytool could not make the metadata member's certificate: " + out);
            }
            KeyStore keys = KeyStore.getInstance("PKCS12");
            try (InputStream in = Files.newInputStream(store)) {
                keys.load(in, password);
            }
            KeyManagerFactory km = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            km.init(keys, password);
            TrustManagerFactory tm = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tm.init(keys);
            return RaftTransport.mutualTls(km.getKeyManagers()[0], tm.getTrustManagers()[0]);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot make the metadata member's certificate", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted making the metadata member's certificate", e);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("cannot read the metadata member's certificate", e);
        } finally {
            try {
                Files.deleteIfExists(store);
            } catch (IOException e) {
                // the data folder is owner-only; the next start makes another
            }
        }
    }

    private static byte[] randomBytes() {
        byte[] b = new byte[16];
        new SecureRandom().nextBytes(b);
        return b;
    }
}
