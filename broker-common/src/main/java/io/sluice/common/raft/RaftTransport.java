package io.sluice.common.raft;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;
import java.util.List;
import javax.net.ssl.KeyManager;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientRpc;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.grpc.GrpcFactory;
import org.apache.ratis.grpc.GrpcTlsConfig;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.server.RaftServer;

/**
 * How this process speaks Raft: plaintext, or mutual TLS under the cluster's own CA. With TLS, every Raft server
 * (metadata member, backend) demands a client certificate signed by the CA and presents its own; every Raft client
 * (metadata client, shard client, a backend's admin calls) presents this process's certificate and checks the
 * server's against the CA and the address it dials (an IP or DNS subject alternative name). A process without a
 * certificate from the CA can then neither join a group, nor submit to it, nor read from it.
 *
 * <p>One instance per process, handed to every class that builds a Ratis server or client: there is no second path
 * that could open a plaintext connection by accident.
 */
public final class RaftTransport {
    /** No TLS: unit tests, and test clusters on loopback that allow it. */
    public static final RaftTransport PLAINTEXT = new RaftTransport(null);

    private final GrpcTlsConfig tls;

    private RaftTransport(GrpcTlsConfig tls) {
        this.tls = tls;
    }

    /**
     * Mutual TLS from PEM files: {@code certificate} (this process's chain, leaf first), {@code privateKey} (PKCS#8,
     * unencrypted) and {@code trustedCa} (the cluster CA's certificates). The files are checked here, so a wrong path
     * or a file that is not PEM stops the process at start rather than at its first connection.
     */
    public static RaftTransport mutualTls(Path certificate, Path privateKey, Path trustedCa) {
        requireCertificates(certificate, "certificate");
        requireCertificates(trustedCa, "trusted CA");
        try {
            String key = Files.readString(privateKey);
            if (!key.contains("-----BEGIN PRIVATE KEY-----")) {
                throw new IllegalArgumentException("Raft TLS private key " + privateKey
                        + " is not an unencrypted PKCS#8 PEM key (-----BEGIN PRIVATE KEY-----; convert with"
                        + " 'openssl pkcs8 -topk8 -nocrypt')");
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the Raft TLS private key " + privateKey, e);
        }
        return new RaftTransport(new GrpcTlsConfig(keyManager(certificate, privateKey), trustManager(trustedCa), true));
    }

    /**
     * Mutual TLS with key and trust managers built by the caller: {@code sluice dev}'s in-process member, whose
     * throwaway certificate (made at each start, its key never on disk) is both its identity and the one it trusts.
     */
    public static RaftTransport mutualTls(KeyManager keyManager, TrustManager trustManager) {
        return new RaftTransport(new GrpcTlsConfig(keyManager, trustManager, true));
    }

    /*
     * The key and trust managers are built once here. Given the PEM files instead, Ratis' gRPC client builds a new TLS
     * context from them for every channel it opens (and it opens one again after every reconnect): re-reading the
     * files and deriving a PKCS#12 keystore with PBKDF2 each time, measured at most of a combined node's CPU while
     * clients reconnected after a leader change.
     */
    private static KeyManager keyManager(Path certificate, Path privateKey) {
        try {
            X509Certificate[] chain = certificates(certificate)
                    .toArray(X509Certificate[]::new);
            KeyStore store = KeyStore.getInstance("PKCS12");
            store.load(null, null);
            char[] password = new char[0];
            store.setKeyEntry("raft", privateKey(privateKey, chain[0].getPublicKey().getAlgorithm()), password, chain);
            KeyManagerFactory factory = KeyManagerFactory.getInstance(
                    KeyManagerFactory.getDefaultAlgorithm());
            factory.init(store, password);
            return factory.getKeyManagers()[0];
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the Raft TLS key or certificate", e);
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException("Raft TLS key " + privateKey + " or certificate " + certificate
                    + " unusable: " + e.getMessage(), e);
        }
    }

    private static TrustManager trustManager(Path trustedCa) {
        try {
            KeyStore store = KeyStore.getInstance("PKCS12");
            store.load(null, null);
            int n = 0;
            for (X509Certificate ca : certificates(trustedCa)) {
                store.setCertificateEntry("ca-" + n++, ca);
            }
            TrustManagerFactory factory = TrustManagerFactory.getInstance(
                    TrustManagerFactory.getDefaultAlgorithm());
            factory.init(store);
            return factory.getTrustManagers()[0];
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the Raft TLS trusted CA " + trustedCa, e);
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException("Raft TLS trusted CA " + trustedCa + " unusable: " + e.getMessage(), e);
        }
    }

    private static List<X509Certificate> certificates(Path file)
            throws IOException, CertificateException {
        try (InputStream in = Files.newInputStream(file)) {
            return CertificateFactory.getInstance("X.509").generateCertificates(in).stream()
                    .map(c -> (X509Certificate) c).toList();
        }
    }

    /** An unencrypted PKCS#8 PEM key of the certificate's algorithm (RSA, EC, ...). */
    private static PrivateKey privateKey(Path file, String algorithm)
            throws IOException, GeneralSecurityException {
        String pem = Files.readString(file);
        String body = pem.substring(pem.indexOf("-----BEGIN PRIVATE KEY-----") + "-----BEGIN PRIVATE KEY-----".length(),
                pem.indexOf("-----END PRIVATE KEY-----"));
        byte[] der = Base64.getMimeDecoder().decode(body);
        return KeyFactory.getInstance(algorithm).generatePrivate(
                new PKCS8EncodedKeySpec(der));
    }

    private static void requireCertificates(Path file, String what) {
        try (InputStream in = Files.newInputStream(file)) {
            if (CertificateFactory.getInstance("X.509").generateCertificates(in).isEmpty()) {
                throw new IllegalArgumentException("Raft TLS " + what + " " + file + " holds no certificate");
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the Raft TLS " + what + " " + file, e);
        } catch (CertificateException e) {
            throw new IllegalArgumentException("Raft TLS " + what + " " + file + " is not a PEM certificate: "
                    + e.getMessage(), e);
        }
    }

    public boolean isTls() {
        return tls != null;
    }

    private Parameters parameters() {
        Parameters p = new Parameters();
        if (tls != null) {
            GrpcConfigKeys.TLS.setConf(p, tls); // server, client and admin services alike
        }
        return p;
    }

    /**
     * A client of {@code group} whose requests may take {@code timeoutMillis} (see {@link RatisSettings#client}); its
     * reconnects after a failed attempt run off Ratis' timer thread ({@link ReconnectOffThread}).
     */
    public RaftClient.Builder client(RaftGroup group, long timeoutMillis) {
        return client(group, timeoutMillis, false);
    }

    /**
     * A shard's write client: {@link #client(RaftGroup, long)} whose writes, when they wait at a member that has
     * fallen silent, make it ask the other members who leads ({@link LeaderProbe}; a process without a replica of
     * the group hears of no election otherwise).
     */
    public RaftClient.Builder writerClient(RaftGroup group, long timeoutMillis) {
        return client(group, timeoutMillis, true);
    }

    private RaftClient.Builder client(RaftGroup group, long timeoutMillis, boolean askWhoLeads) {
        ClientId id = ClientId.randomId();
        RaftProperties properties = RatisSettings.client(timeoutMillis);
        Parameters parameters = parameters();
        RaftClientRpc rpc = new GrpcFactory(parameters).newRaftClientRpc(id, properties);
        return RaftClient.newBuilder().setClientId(id).setProperties(properties).setParameters(parameters)
                .setRaftGroup(group).setClientRpc(new ReconnectOffThread(rpc, group, askWhoLeads));
    }

    /** A client with the default request timeout. */
    public RaftClient.Builder client(RaftGroup group) {
        return client(group, RatisSettings.DEFAULT_CLIENT_TIMEOUT_MS);
    }

    /** A server builder that speaks this transport (its properties still come from {@link RatisSettings#server}). */
    public RaftServer.Builder server() {
        return RaftServer.newBuilder().setParameters(parameters());
    }

    @Override
    public String toString() {
        return tls == null ? "plaintext" : "mutual TLS";
    }
}
