package io.sluice.frontend.auth;

import java.io.ByteArrayInputStream;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import software.amazon.awssdk.http.SdkHttpFullRequest;
import software.amazon.awssdk.http.SdkHttpRequest;
import software.amazon.awssdk.http.auth.aws.signer.AwsV4FamilyHttpSigner;
import software.amazon.awssdk.http.auth.aws.signer.AwsV4HttpSigner;
import software.amazon.awssdk.http.auth.spi.signer.HttpSigner;
import software.amazon.awssdk.identity.spi.AwsCredentialsIdentity;

/** Signs requests with the AWS SDK for Java v2's own SigV4 signer, the independent oracle for the verifier. */
final class SdkSigning {
    /** How a request is signed: where the signature goes and whether the payload hash is signed. */
    enum Mode {
        HEADER, HEADER_UNSIGNED_PAYLOAD, PRESIGNED, PRESIGNED_SIGNED_PAYLOAD
    }

    static final Duration PRESIGN_EXPIRY = Duration.ofMinutes(5);

    private static final AwsV4HttpSigner SIGNER = AwsV4HttpSigner.create();

    private SdkSigning() {
    }

    /** {@code request} signed at {@code signingTime} for {@code sqs} in {@code region}, as our verifier sees it. */
    static SignedRequest sign(SdkHttpFullRequest request, byte[] body, String accessKey, String secret,
                              String region, Instant signingTime, Mode mode) {
        AwsCredentialsIdentity identity = AwsCredentialsIdentity.create(accessKey, secret);
        // The SDK signs the payload of plain-http requests whatever it is told, so unsigned modes claim https.
        boolean unsignedPayload = mode == Mode.HEADER_UNSIGNED_PAYLOAD || mode == Mode.PRESIGNED;
        SdkHttpFullRequest toSign = unsignedPayload ? request.toBuilder().protocol("https").build() : request;
        SdkHttpRequest signed = SIGNER.sign(r -> {
            r.identity(identity)
                    .request(toSign)
                    .payload(() -> new ByteArrayInputStream(body))
                    .putProperty(AwsV4HttpSigner.REGION_NAME, region)
                    .putProperty(AwsV4HttpSigner.SERVICE_SIGNING_NAME, "sqs")
                    .putProperty(HttpSigner.SIGNING_CLOCK, Clock.fixed(signingTime, ZoneOffset.UTC));
            switch (mode) {
                case HEADER -> r.putProperty(AwsV4HttpSigner.PAYLOAD_SIGNING_ENABLED, true);
                case HEADER_UNSIGNED_PAYLOAD -> r.putProperty(AwsV4HttpSigner.PAYLOAD_SIGNING_ENABLED, false);
                case PRESIGNED, PRESIGNED_SIGNED_PAYLOAD -> r
                        .putProperty(AwsV4HttpSigner.AUTH_LOCATION, AwsV4FamilyHttpSigner.AuthLocation.QUERY_STRING)
                        .putProperty(AwsV4HttpSigner.EXPIRATION_DURATION, PRESIGN_EXPIRY)
                        .putProperty(AwsV4HttpSigner.PAYLOAD_SIGNING_ENABLED, mode == Mode.PRESIGNED_SIGNED_PAYLOAD);
                default -> throw new IllegalArgumentException(mode.name());
            }
        }).request();
        return SignedRequest.of(signed.method().name(), signed.encodedPath(), signed.getUri().getRawQuery(),
                signed.headers(), body);
    }
}
