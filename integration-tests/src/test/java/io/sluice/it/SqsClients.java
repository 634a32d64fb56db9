package io.sluice.it;

import java.net.URI;
import java.time.Duration;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.client.config.ClientOverrideConfiguration;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsClient;

/** AWS SDK for Java v2 clients (JSON protocol, MD5 checks on) pointed at a test server. */
public final class SqsClients {
    private SqsClients() {
    }

    public static SqsClient client(URI endpoint) {
        return client(endpoint, SluiceProcess.ACCESS_KEY, SluiceProcess.SECRET_KEY);
    }

    public static SqsClient client(URI endpoint, String accessKey, String secretKey) {
        return client(endpoint, accessKey, secretKey, true);
    }

    /** @param retries false: every error reaches the test (no SDK retries, e.g. to count throttled calls) */
    public static SqsClient client(URI endpoint, String accessKey, String secretKey, boolean retries) {
        ClientOverrideConfiguration.Builder override = ClientOverrideConfiguration.builder()
                .apiCallAttemptTimeout(Duration.ofSeconds(30));
        if (!retries) {
            override.retryStrategy(software.amazon.awssdk.core.retry.RetryMode.STANDARD)
                    .retryStrategy(b -> b.maxAttempts(1));
        }
        return SqsClient.builder()
                .endpointOverride(endpoint)
                .region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(accessKey, secretKey)))
                .httpClient(UrlConnectionHttpClient.builder().socketTimeout(Duration.ofSeconds(30)).build())
                .overrideConfiguration(override.build())
                .build();
    }

    /**
     * An async client (Netty, up to {@code maxConcurrency} connections) for the worker tests and benches, with the
     * given execution interceptors (e.g. one that counts calls).
     */
    public static software.amazon.awssdk.services.sqs.SqsAsyncClient async(URI endpoint, String accessKey,
            String secretKey, int maxConcurrency,
            software.amazon.awssdk.core.interceptor.ExecutionInterceptor... interceptors) {
        ClientOverrideConfiguration.Builder override = ClientOverrideConfiguration.builder();
        for (var interceptor : interceptors) {
            override.addExecutionInterceptor(interceptor);
        }
        return software.amazon.awssdk.services.sqs.SqsAsyncClient.builder().endpointOverride(endpoint)
                .region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(accessKey, secretKey)))
                .httpClient(software.amazon.awssdk.http.nio.netty.NettyNioAsyncHttpClient.builder()
                        .maxConcurrency(maxConcurrency).readTimeout(Duration.ofSeconds(30)).build())
                .overrideConfiguration(override.build())
                .build();
    }

    /**
     * Receives from a queue until a receive comes back empty, leasing each message for 120 s so none comes twice by
     * expiry: how many times each message id came back.
     */
    public static java.util.Map<String, Integer> copiesById(SqsClient sqs, String url) {
        java.util.Map<String, Integer> copies = new java.util.HashMap<>();
        java.util.List<software.amazon.awssdk.services.sqs.model.Message> got;
        do {
            got = sqs.receiveMessage(b -> b.queueUrl(url).maxNumberOfMessages(10).visibilityTimeout(120)
                    .waitTimeSeconds(2)).messages();
            got.forEach(m -> copies.merge(m.messageId(), 1, Integer::sum));
        } while (!got.isEmpty());
        return copies;
    }
}
