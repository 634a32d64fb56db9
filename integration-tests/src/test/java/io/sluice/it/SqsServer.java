package io.sluice.it;

import java.net.URI;

/**
 * What the client suites ({@link SharedServer}'s subclasses) need of the server they talk to: a {@code sluice dev}
 * process ({@link SluiceProcess}) or one frontend of a cluster of either topology ({@link ClusterServer}).
 */
interface SqsServer {
    /** The SQS endpoint the suite's clients use. */
    URI endpoint();

    /** The SQS port of {@link #endpoint()}, for raw HTTP. */
    int port();

    /** The address of {@link #endpoint()}, for raw HTTP. */
    default String host() {
        return endpoint().getHost();
    }

    /** Whether every process of the server is still running. */
    boolean alive();

    /** Waits until the process behind {@link #endpoint()} holds at least {@code n} parked long polls. */
    void awaitParkedPolls(int n);

    /** Stops every process of the server. */
    void stop() throws Exception;
}
