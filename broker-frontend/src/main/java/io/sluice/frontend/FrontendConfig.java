package io.sluice.frontend;

import java.util.Objects;

/**
 * What the SQS endpoint needs to know about its deployment.
 *
 * @param region            region in ARNs and the SigV4 scope check
 * @param accountId         the 12-digit account in queue URLs and ARNs
 * @param publicBaseUrl     base of the queue URLs handed out (e.g. {@code https://sqs.example.com}); null means
 *                          {@code http://} (or {@code https://}) plus the request's {@code Host} header
 * @param maxRequestBytes   requests larger than this are refused before they are buffered whole
 * @param https             whether the endpoint serves HTTPS (the scheme of queue URLs without a public base URL)
 */
public record FrontendConfig(String region, String accountId, String publicBaseUrl, int maxRequestBytes,
                             boolean https) {
    public static final FrontendConfig DEFAULTS = new FrontendConfig("us-east-1", "000000000000", null,
            5 * 1024 * 1024);

    public FrontendConfig(String region, String accountId, String publicBaseUrl, int maxRequestBytes) {
        this(region, accountId, publicBaseUrl, maxRequestBytes, false);
    }

    public FrontendConfig {
        Objects.requireNonNull(region, "region");
        if (!accountId.matches("[0-9]{12}")) {
            throw new IllegalArgumentException("account id must be 12 digits: " + accountId);
        }
    }
}
