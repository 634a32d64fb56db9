package io.sluice.server;

import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import javax.net.ssl.SSLException;

/**
 * HTTPS for the SQS and admin ports, from {@code sluice.tls.cert-file} and {@code sluice.tls.key-file} (PEM), so a
 * one-binary deployment needs no TLS proxy. Neither set: plain HTTP. The files are read at start; a bad one stops
 * the process with its name.
 */
final class HttpTls {
    private HttpTls() {
    }

    /** The server-side TLS context, or null for plain HTTP. */
    static SslContext context(ServerConfig config) {
        String cert = config.get(ServerConfigKeys.TLS_CERT);
        String key = config.get(ServerConfigKeys.TLS_KEY);
        if (cert.isBlank() && key.isBlank()) {
            return null;
        }
        if (cert.isBlank() || key.isBlank()) {
            throw new IllegalArgumentException("HTTPS needs both " + ServerConfigKeys.TLS_CERT.name() + " and "
                    + ServerConfigKeys.TLS_KEY.name());
        }
        for (String file : new String[] {cert, key}) {
            if (!Files.isReadable(Path.of(file))) {
                throw new IllegalArgumentException("cannot read the HTTPS file " + file);
            }
        }
        try {
            return SslContextBuilder.forServer(new File(cert), new File(key)).build();
        } catch (SSLException | IllegalArgumentException e) {
            throw new IllegalArgumentException("cannot use " + cert + " and " + key + " for HTTPS (PEM certificate"
                    + " chain and unencrypted PKCS#8 key): " + e.getMessage(), e);
        }
    }
}
