package io.sluice.worker.spring;

import java.net.URI;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * {@code sluice.worker.*}: the SQS client the listeners use (when the application defines no {@code SqsAsyncClient}
 * bean) and the defaults of every {@link SluiceListener}.
 */
@ConfigurationProperties("sluice.worker")
public class SluiceWorkerProperties {
    /** The SQS endpoint, e.g. http://localhost:9324 for sluice dev; empty: the AWS SDK's default for the region. */
    private URI endpoint;
    /** The region signatures are scoped to. */
    private String region = "us-east-1";
    /** Access key id; empty: the AWS SDK's default credentials chain. */
    private String accessKey;
    /** Secret access key of access-key. */
    private String secretKey;
    /** Handlers running at once per listener. */
    private int concurrency = 10;
    private Duration visibilityTimeout = Duration.ofSeconds(30);
    private Duration waitTime = Duration.ofSeconds(20);
    /** How long stopping the context lets running handlers finish. */
    private Duration shutdownGrace = Duration.ofSeconds(30);
    /** Create a listener's queue when it does not exist (by name; a FIFO queue when the name ends in .fifo). */
    private boolean createMissingQueues;
    private final Backoff backoff = new Backoff();

    public static class Backoff {
        private Duration initial = Duration.ofSeconds(1);
        private double multiplier = 2;
        private Duration max = Duration.ofMinutes(15);

        public Duration getInitial() {
            return initial;
        }

        public void setInitial(Duration initial) {
            this.initial = initial;
        }

        public double getMultiplier() {
            return multiplier;
        }

        public void setMultiplier(double multiplier) {
            this.multiplier = multiplier;
        }

        public Duration getMax() {
            return max;
        }

        public void setMax(Duration max) {
            this.max = max;
        }
    }

    public URI getEndpoint() {
        return endpoint;
    }

    public void setEndpoint(URI endpoint) {
        this.endpoint = endpoint;
    }

    public String getRegion() {
        return region;
    }

    public void setRegion(String region) {
        this.region = region;
    }

    public String getAccessKey() {
        return accessKey;
    }

    public void setAccessKey(String accessKey) {
        this.accessKey = accessKey;
    }

    public String getSecretKey() {
        return secretKey;
    }

    public void setSecretKey(String secretKey) {
        this.secretKey = secretKey;
    }

    public int getConcurrency() {
        return concurrency;
    }

    public void setConcurrency(int concurrency) {
        this.concurrency = concurrency;
    }

    public Duration getVisibilityTimeout() {
        return visibilityTimeout;
    }

    public void setVisibilityTimeout(Duration visibilityTimeout) {
        this.visibilityTimeout = visibilityTimeout;
    }

    public Duration getWaitTime() {
        return waitTime;
    }

    public void setWaitTime(Duration waitTime) {
        this.waitTime = waitTime;
    }

    public Duration getShutdownGrace() {
        return shutdownGrace;
    }

    public void setShutdownGrace(Duration shutdownGrace) {
        this.shutdownGrace = shutdownGrace;
    }

    public boolean isCreateMissingQueues() {
        return createMissingQueues;
    }

    public void setCreateMissingQueues(boolean createMissingQueues) {
        this.createMissingQueues = createMissingQueues;
    }

    public Backoff getBackoff() {
        return backoff;
    }
}
