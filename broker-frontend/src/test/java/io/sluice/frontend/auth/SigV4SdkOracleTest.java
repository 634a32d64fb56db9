package io.sluice.frontend.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.common.ManualClock;
import io.sluice.common.SqsError;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import software.amazon.awssdk.http.SdkHttpFullRequest;
import software.amazon.awssdk.http.SdkHttpMethod;

/** Requests signed by the AWS SDK's real SigV4 signer must verify; with a wrong secret or key they must not. */
class SigV4SdkOracleTest {
    private static final String KEY = "AKIAIOSFODNN7EXAMPLE";
    private static final String SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
    private static final Instant SIGNING_TIME = Instant.parse("2025-03-04T05:06:07Z");
    private static final String JSON = "{\"QueueUrl\":\"http://localhost:9324/000000000000/q1\","
            + "\"MessageBody\":\"h\\u00e9llo \\ud83d\\ude00\"}";
    private static final String FORM = "Action=SendMessage&Version=2012-11-05"
            + "&QueueUrl=http%3A%2F%2Flocalhost%3A9324%2F000000000000%2Fq1&MessageBody=a+b%2Bc";

    /** One SDK-built request and how to sign it. */
    record Case(String name, SdkHttpFullRequest request, byte[] body, SdkSigning.Mode mode) {
        @Override
        public String toString() {
            return name + " (" + mode + ")";
        }
    }

    static Stream<Case> cases() {
        SdkHttpFullRequest json = post("http://localhost:9324/")
                .putHeader("Content-Type", "application/x-amz-json-1.0")
                .putHeader("X-Amz-Target", "AmazonSQS.SendMessage")
                .putHeader("x-amzn-query-mode", "true")
                .putHeader("amz-sdk-invocation-id", "0c3f6a2e-7f3e-4d8b-a1b2-1234567890ab")
                .putHeader("amz-sdk-request", "attempt=1;  max=4")
                .build();
        SdkHttpFullRequest form = post("http://localhost:9324/")
                .putHeader("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
                .build();
        SdkHttpFullRequest queuePath = post("http://127.0.0.1:9324/000000000000/orders-1.fifo")
                .putHeader("Content-Type", "application/x-www-form-urlencoded")
                .build();
        SdkHttpFullRequest query = SdkHttpFullRequest.builder()
                .method(SdkHttpMethod.GET)
                .uri(URI.create("http://localhost:9324/000000000000/q1"))
                .appendRawQueryParameter("Action", "SendMessage")
                .appendRawQueryParameter("MessageBody", "spaces and + plus * star ~ tilde é ü 😀 / ? & = %")
                .appendRawQueryParameter("MessageAttribute.1.Name", "b")
                .appendRawQueryParameter("MessageAttribute.1.Name", "a")
                .appendRawQueryParameter("Empty", "")
                .appendRawQueryParameter("Version", "2012-11-05")
                .build();
        byte[] none = new byte[0];
        return Stream.of(
                new Case("JSON 1.0 with X-Amz-Target", json, utf8(JSON), SdkSigning.Mode.HEADER),
                new Case("JSON 1.0 with X-Amz-Target", json, utf8(JSON), SdkSigning.Mode.HEADER_UNSIGNED_PAYLOAD),
                new Case("query form body", form, utf8(FORM), SdkSigning.Mode.HEADER),
                new Case("queue URL path", queuePath, utf8(FORM), SdkSigning.Mode.HEADER),
                new Case("query parameters", query, none, SdkSigning.Mode.HEADER),
                new Case("presigned GET", query, none, SdkSigning.Mode.PRESIGNED),
                new Case("presigned GET", query, none, SdkSigning.Mode.PRESIGNED_SIGNED_PAYLOAD));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void acceptsSdkSignature(Case c) {
        SignedRequest signed = sign(c, KEY, SECRET);
        assertSignedAs(c.mode(), signed);
        assertEquals(new AuthResult.Authenticated(KEY), verifier(SIGNING_TIME, KEY, SECRET).verify(signed));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void rejectsWrongSecret(Case c) {
        SignedRequest signed = sign(c, KEY, "not-" + SECRET);
        assertEquals(new AuthResult.Rejected(SqsError.SIGNATURE_DOES_NOT_MATCH.failure()),
                verifier(SIGNING_TIME, KEY, SECRET).verify(signed));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void rejectsUnknownKey(Case c) {
        SignedRequest signed = sign(c, "AKIAUNKNOWNKEY000000", SECRET);
        AuthResult result = verifier(SIGNING_TIME, KEY, SECRET).verify(signed);
        assertEquals(Optional.of(SqsError.INVALID_CLIENT_TOKEN_ID.withMessage(
                "The security token included in the request is invalid.")), result.rejection());
    }

    /**
     * The verifier keeps derived signing keys (one per access key, day and region): a key whose secret was replaced
     * must verify against the new secret at once, never against the one its cached key came from.
     */
    @Test
    void aReplacedSecretIsUsedAtOnce() {
        Case c = cases().findFirst().orElseThrow();
        java.util.concurrent.atomic.AtomicReference<String> secret = new java.util.concurrent.atomic.AtomicReference<>(
                SECRET);
        ManualClock clock = new ManualClock(SIGNING_TIME.toEpochMilli());
        SigV4Verifier verifier = new SigV4Verifier(id -> id.equals(KEY)
                ? Optional.of(new Credentials(KEY, secret.get())) : Optional.empty(), clock, Optional.empty(), true);
        SignedRequest signedWithOld = sign(c, KEY, SECRET);
        assertTrue(verifier.verify(signedWithOld).isAuthenticated());
        assertTrue(verifier.verify(signedWithOld).isAuthenticated()); // from the cached key

        secret.set("rotated-" + SECRET);
        assertEquals(new AuthResult.Rejected(SqsError.SIGNATURE_DOES_NOT_MATCH.failure()),
                verifier.verify(signedWithOld));
        assertEquals(new AuthResult.Authenticated(KEY), verifier.verify(sign(c, KEY, "rotated-" + SECRET)));
        // another region on the same day has a key of its own
        assertEquals(new AuthResult.Authenticated(KEY), verifier.verify(SdkSigning.sign(c.request(), c.body(), KEY,
                "rotated-" + SECRET, "us-west-2", SIGNING_TIME, c.mode())));
        // and so does the next day
        clock.advance(Duration.ofDays(1));
        assertEquals(new AuthResult.Authenticated(KEY), verifier.verify(SdkSigning.sign(c.request(), c.body(), KEY,
                "rotated-" + SECRET, "eu-west-1", SIGNING_TIME.plus(Duration.ofDays(1)), c.mode())));
    }

    @Test
    void presignedRequestExpiresAfterXAmzExpires() {
        Case presigned = cases().filter(c -> c.mode() == SdkSigning.Mode.PRESIGNED).findFirst().orElseThrow();
        SignedRequest signed = sign(presigned, KEY, SECRET);
        assertTrue(signed.rawQuery().contains("X-Amz-Expires=300"), signed.rawQuery());
        Instant lastValid = SIGNING_TIME.plus(SdkSigning.PRESIGN_EXPIRY);
        assertTrue(verifier(lastValid, KEY, SECRET).verify(signed).isAuthenticated());
        assertEquals(Optional.of(SqsError.SIGNATURE_DOES_NOT_MATCH.withMessage("Signature expired: 20250304T050607Z"
                        + " is now earlier than 20250304T050608Z (20250304T051108Z - 300 sec.)")),
                verifier(lastValid.plusSeconds(1), KEY, SECRET).verify(signed).rejection());
    }

    /**
     * A presigned URL's parameters come from its signed query only: a body is refused whether or not the signer
     * hashed it (unhashed, anyone holding the URL could post any body under its signature, e.g. a presigned
     * ListQueues URL posted with a DeleteQueue body).
     */
    @Test
    void presignedRequestsWithABodyAreRefused() {
        SdkHttpFullRequest form = cases().filter(c -> c.name().equals("query form body")).findFirst().orElseThrow()
                .request();
        for (SdkSigning.Mode mode : List.of(SdkSigning.Mode.PRESIGNED, SdkSigning.Mode.PRESIGNED_SIGNED_PAYLOAD)) {
            SignedRequest signed = sign(new Case("presigned POST", form, utf8(FORM), mode), KEY, SECRET);
            assertEquals(Optional.of(SqsError.SIGNATURE_DOES_NOT_MATCH.withMessage("A presigned request has no body:"
                    + " its parameters come from the signed query only.")),
                    verifier(SIGNING_TIME, KEY, SECRET).verify(signed).rejection(), mode.name());
        }
    }

    @Test
    void unsignedPayloadIsRefusedUnlessConfigured() {
        Case unsigned = cases().filter(c -> c.mode() == SdkSigning.Mode.HEADER_UNSIGNED_PAYLOAD).findFirst()
                .orElseThrow();
        SignedRequest signed = sign(unsigned, KEY, SECRET);
        SigV4Verifier strict = new SigV4Verifier(new InMemoryCredentialStore(Map.of(KEY, SECRET)),
                new ManualClock(SIGNING_TIME.toEpochMilli()));
        assertEquals(Optional.of(SqsError.SIGNATURE_DOES_NOT_MATCH.withMessage(
                "UNSIGNED-PAYLOAD is not accepted: sign the payload.")), strict.verify(signed).rejection());
        assertTrue(verifier(SIGNING_TIME, KEY, SECRET).verify(signed).isAuthenticated(), "allowed when configured");
    }

    @Test
    void queryIsDecodedThenReEncodedSoEquivalentWireFormsVerify() {
        Case query = cases().filter(c -> c.name().equals("query parameters")).findFirst().orElseThrow();
        SignedRequest signed = sign(query, KEY, SECRET);
        assertTrue(signed.rawQuery().contains("%2B") && signed.rawQuery().contains("%C3%A9"), signed.rawQuery());
        SigV4Verifier verifier = verifier(SIGNING_TIME, KEY, SECRET);

        // a '+' is a space, as the Query parser reads it: a signed plus (%2B) changed to '+' would give the action a
        // space under the same signature (issue 42), so it no longer verifies
        String literalPlus = signed.rawQuery().replace("%2B", "+");
        assertEquals(Optional.of(SqsError.SIGNATURE_DOES_NOT_MATCH), verifier.verify(withQuery(signed, literalPlus))
                .rejection().map(io.sluice.common.SqsFailure::error), "'+' read as a space");
        String plusForSpace = signed.rawQuery().replace("%20", "+");
        assertTrue(verifier.verify(withQuery(signed, plusForSpace)).isAuthenticated(), "'+' for a space verifies");
        String lowerHex = signed.rawQuery().replace("%C3%A9", "%c3%a9").replace("~", "%7E");
        assertTrue(verifier.verify(withQuery(signed, lowerHex)).isAuthenticated(), "escapes are re-encoded");
        String plusAsSpace = signed.rawQuery().replace("%2B", "%20");
        assertEquals(new AuthResult.Rejected(SqsError.SIGNATURE_DOES_NOT_MATCH.failure()),
                verifier.verify(withQuery(signed, plusAsSpace)));
    }

    @Test
    void rejectsRegionOtherThanConfigured() {
        Case json = cases().findFirst().orElseThrow();
        SignedRequest signed = sign(json, KEY, SECRET);
        SigV4Verifier verifier = new SigV4Verifier(new InMemoryCredentialStore(Map.of(KEY, SECRET)),
                new ManualClock(SIGNING_TIME.toEpochMilli()), Optional.of("us-east-1"));
        assertEquals(Optional.of(SqsError.SIGNATURE_DOES_NOT_MATCH.withMessage(
                "Credential should be scoped to a valid region, not 'eu-west-1'.")), verifier.verify(signed).rejection());
    }

    @Test
    void acceptsRegionFromScopeWhenNoneConfigured() {
        Case form = cases().filter(c -> c.name().equals("query form body")).findFirst().orElseThrow();
        SignedRequest signed = SdkSigning.sign(form.request(), form.body(), KEY, SECRET, "ap-southeast-2",
                SIGNING_TIME, form.mode());
        assertTrue(verifier(SIGNING_TIME.plus(Duration.ofMinutes(14)), KEY, SECRET).verify(signed).isAuthenticated());
    }

    /** Guards the oracle itself: the SDK really produced the form each mode is meant to exercise. */
    private static void assertSignedAs(SdkSigning.Mode mode, SignedRequest signed) {
        boolean presigned = mode == SdkSigning.Mode.PRESIGNED || mode == SdkSigning.Mode.PRESIGNED_SIGNED_PAYLOAD;
        assertEquals(!presigned, !signed.header("Authorization").isEmpty());
        assertEquals(presigned, signed.rawQuery() != null && signed.rawQuery().contains("X-Amz-Signature="));
        List<String> contentSha = signed.header("x-amz-content-sha256");
        switch (mode) {
            case HEADER -> assertEquals(List.of(signed.bodySha256()), contentSha);
            case HEADER_UNSIGNED_PAYLOAD -> assertEquals(List.of("UNSIGNED-PAYLOAD"), contentSha);
            default -> assertEquals(List.of(), contentSha);
        }
    }

    private static SignedRequest sign(Case c, String key, String secret) {
        return SdkSigning.sign(c.request(), c.body(), key, secret, "eu-west-1", SIGNING_TIME, c.mode());
    }

    private static SignedRequest withQuery(SignedRequest r, String rawQuery) {
        return new SignedRequest(r.method(), r.rawPath(), rawQuery, r.headers(), r.bodySha256());
    }

    /** A verifier that allows UNSIGNED-PAYLOAD (sluice.auth.allow-unsigned-payload): these tests check the SDK's forms. */
    private static SigV4Verifier verifier(Instant now, String key, String secret) {
        return new SigV4Verifier(new InMemoryCredentialStore(Map.of(key, secret)), new ManualClock(now.toEpochMilli()),
                Optional.empty(), true);
    }

    private static SdkHttpFullRequest.Builder post(String uri) {
        return SdkHttpFullRequest.builder().method(SdkHttpMethod.POST).uri(URI.create(uri));
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
