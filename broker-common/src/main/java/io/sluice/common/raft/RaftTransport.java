package io.sluice.common.raft;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.grpc.GrpcTlsConfig;
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
    /** No TLS: {@code sluice dev}'s in-process member (loopback, used by the process itself) and unit tests. */
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
        return new RaftTransport(new GrpcTlsConfig(privateKey.toFile(), certificate.toFile(), trustedCa.toFile(), true));
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

    /** A client of {@code group} whose requests may take {@code timeoutMillis} (see {@link RatisSettings#client}). */
    public RaftClient.Builder client(RaftGroup group, long timeoutMillis) {
        return RaftClient.newBuilder().setProperties(RatisSettings.client(timeoutMillis)).setParameters(parameters())
                .setRaftGroup(group);
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
