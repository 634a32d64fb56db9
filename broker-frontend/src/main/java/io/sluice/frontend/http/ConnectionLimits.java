package io.sluice.frontend.http;

/**
 * What one client connection may hold on the SQS port, so that no client can pin the server's memory or sockets
 * before it is even authenticated.
 *
 * @param requestReadTimeoutMillis a request must arrive whole (headers and body) within this long of its first byte
 * @param idleTimeoutMillis        a connection with no request in flight and no bytes for this long is closed
 *                                 (above the longest long poll, 20 s, and above the AWS SDKs' own idle limit, 60 s,
 *                                 so a client does not reuse a connection the server is closing)
 * @param maxConnections           open connections beyond this are closed at once
 * @param maxPipelined             requests of one connection received but not yet answered; past it the server stops
 *                                 reading from that connection until it answers some
 * @param maxConnectionsPerAddress open connections from one client address beyond this are closed at once, so one
 *                                 address cannot take the whole cap (behind a proxy that does not keep client
 *                                 addresses, every connection comes from the proxy's: raise it to the cap there)
 */
public record ConnectionLimits(long requestReadTimeoutMillis, long idleTimeoutMillis, int maxConnections,
                               int maxPipelined, int maxConnectionsPerAddress) {
    /** The defaults of the configuration keys. */
    public static final ConnectionLimits DEFAULTS = new ConnectionLimits(10_000, 75_000, 4096, 16, 1024);

    public ConnectionLimits {
        if (requestReadTimeoutMillis <= 0 || idleTimeoutMillis <= 0 || maxConnections <= 0 || maxPipelined <= 0
                || maxConnectionsPerAddress <= 0) {
            throw new IllegalArgumentException("connection limits must be positive: " + this);
        }
    }
}
