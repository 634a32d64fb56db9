package io.sluice.frontend.auth;

import io.sluice.common.ManualClock;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** The worked example of spec section 9, with helpers to build variations of it. */
final class WorkedExample {
    static final String ACCESS_KEY = "AKIDEXAMPLE";
    static final String SECRET = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
    static final String AMZ_DATE = "20240102T030405Z";
    static final Instant SIGNED_AT = Instant.parse("2024-01-02T03:04:05Z");
    static final String CONTENT_TYPE = "application/x-www-form-urlencoded; charset=utf-8";
    static final String BODY = "Action=SendMessage&Version=2012-11-05"
            + "&QueueUrl=http%3A%2F%2Flocalhost%3A9324%2F000000000000%2Fq1&MessageBody=hello";
    static final String SIGNATURE = "a79d8a31dd91d53e2d789fee9c85ba8e18056a0b34e76f7d9f50027a774c4c2a";
    static final String CREDENTIAL = ACCESS_KEY + "/20240102/us-east-1/sqs/aws4_request";
    static final String AUTHORIZATION = "AWS4-HMAC-SHA256 Credential=" + CREDENTIAL
            + ", SignedHeaders=content-type;host;x-amz-date, Signature=" + SIGNATURE;

    private WorkedExample() {
    }

    static Map<String, List<String>> headers() {
        Map<String, List<String>> headers = new LinkedHashMap<>();
        headers.put("Content-Type", List.of(CONTENT_TYPE));
        headers.put("Host", List.of("localhost:9324"));
        headers.put("X-Amz-Date", List.of(AMZ_DATE));
        headers.put("Authorization", List.of(AUTHORIZATION));
        return headers;
    }

    static SignedRequest request() {
        return request(headers());
    }

    static SignedRequest request(Map<String, List<String>> headers) {
        return SignedRequest.of("POST", "/", null, headers, BODY.getBytes(StandardCharsets.UTF_8));
    }

    /** The example's headers with {@code Authorization} replaced by {@code authorization}. */
    static SignedRequest withAuthorization(String authorization) {
        Map<String, List<String>> headers = headers();
        headers.put("Authorization", List.of(authorization));
        return request(headers);
    }

    static ManualClock clockAtSigningTime() {
        return new ManualClock(SIGNED_AT.toEpochMilli());
    }

    static CredentialStore store() {
        return new InMemoryCredentialStore(Map.of(ACCESS_KEY, SECRET));
    }

    static SigV4Verifier verifier(ManualClock clock) {
        return new SigV4Verifier(store(), clock, Optional.empty());
    }
}
