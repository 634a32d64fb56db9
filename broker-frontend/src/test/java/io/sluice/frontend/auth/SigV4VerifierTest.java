package io.sluice.frontend.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.common.ManualClock;
import io.sluice.common.SqsError;
import io.sluice.common.SqsFailure;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Time, scope, payload-hash and request-shape checks, built around the spec's worked example. */
class SigV4VerifierTest {
    private static final String VALID_TAIL = ", SignedHeaders=content-type;host;x-amz-date, Signature="
            + WorkedExample.SIGNATURE;

    @Test
    void acceptsExactlyFifteenMinutesOfSkewEitherWay() {
        ManualClock clock = WorkedExample.clockAtSigningTime();
        clock.advance(Duration.ofMinutes(15));
        assertTrue(WorkedExample.verifier(clock).verify(WorkedExample.request()).isAuthenticated());
        clock.set(WorkedExample.SIGNED_AT.minus(Duration.ofMinutes(15)).toEpochMilli());
        assertTrue(WorkedExample.verifier(clock).verify(WorkedExample.request()).isAuthenticated());
    }

    @Test
    void rejectsExpiredSignature() {
        ManualClock clock = WorkedExample.clockAtSigningTime();
        clock.advance(Duration.ofMinutes(15).plusSeconds(1));
        assertRejected(SqsError.SIGNATURE_DOES_NOT_MATCH, "Signature expired: 20240102T030405Z is now earlier than "
                + "20240102T030406Z (20240102T031906Z - 15 min.)", WorkedExample.verifier(clock).verify(
                WorkedExample.request()));
    }

    @Test
    void rejectsSignatureFromTheFuture() {
        ManualClock clock = new ManualClock(
                WorkedExample.SIGNED_AT.minus(Duration.ofMinutes(15).plusSeconds(1)).toEpochMilli());
        assertRejected(SqsError.SIGNATURE_DOES_NOT_MATCH, "Signature not yet current: 20240102T030405Z is still "
                + "later than 20240102T030404Z (20240102T024904Z + 15 min.)", WorkedExample.verifier(clock).verify(
                WorkedExample.request()));
    }

    @Test
    void requiresHostToBeSigned() {
        String auth = "AWS4-HMAC-SHA256 Credential=" + WorkedExample.CREDENTIAL
                + ", SignedHeaders=content-type;x-amz-date, Signature=" + WorkedExample.SIGNATURE;
        assertRejected(SqsError.INCOMPLETE_SIGNATURE, "'Host' must be a 'SignedHeader' in the AWS Authorization.",
                verify(WorkedExample.withAuthorization(auth)));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @ValueSource(strings = {
        "",
        "   ",
        "AWS4-HMAC-SHA256",
        "AWS4-HMAC-SHA256 ",
        "AWS4-HMAC-SHA1 Credential=AKIDEXAMPLE/20240102/us-east-1/sqs/aws4_request" + VALID_TAIL,
        "Bearer abc.def.ghi",
        "AWS AKIDEXAMPLE:c2lnbmF0dXJl",
        "AWS4-HMAC-SHA256 SignedHeaders=content-type;host;x-amz-date, Signature=" + WorkedExample.SIGNATURE,
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20240102/us-east-1/sqs/aws4_request, "
                + "Signature=" + WorkedExample.SIGNATURE,
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20240102/us-east-1/sqs/aws4_request, "
                + "SignedHeaders=content-type;host;x-amz-date",
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20240102/us-east-1/sqs" + VALID_TAIL,
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20240102/us-east-1/sqs/aws4_request/extra" + VALID_TAIL,
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE//us-east-1/sqs/aws4_request" + VALID_TAIL,
        "AWS4-HMAC-SHA256 Credential=" + VALID_TAIL,
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20240102/us-east-1/sqs/aws4_request, "
                + "SignedHeaders=content-type;host;x-amz-date, Signature=a79d8a31",
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20240102/us-east-1/sqs/aws4_request, "
                + "SignedHeaders=content-type;host;x-amz-date, Signature="
                + "zz9d8a31dd91d53e2d789fee9c85ba8e18056a0b34e76f7d9f50027a774c4c2a",
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20240102/us-east-1/sqs/aws4_request, "
                + "SignedHeaders=content-type;;host;x-amz-date, Signature=" + WorkedExample.SIGNATURE,
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20240102/us-east-1/sqs/aws4_request, "
                + "SignedHeaders=, Signature=" + WorkedExample.SIGNATURE,
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20240102/us-east-1/sqs/aws4_request" + VALID_TAIL + ",",
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20240102/us-east-1/sqs/aws4_request" + VALID_TAIL
                + ", Signature=" + WorkedExample.SIGNATURE,
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20240102/us-east-1/sqs/aws4_request" + VALID_TAIL + ", Foo=bar",
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20240102/us-east-1/sqs/aws4_request" + VALID_TAIL + ", junk",
        "AWS4-HMAC-SHA256 =AKIDEXAMPLE/20240102/us-east-1/sqs/aws4_request" + VALID_TAIL,
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20240102/us-east-1/sqs/aws4_request;"
                + " SignedHeaders=content-type;host;x-amz-date; Signature=" + WorkedExample.SIGNATURE,
    })
    void malformedAuthorizationIsIncompleteSignature(String authorization) {
        AuthResult result = verify(WorkedExample.withAuthorization(authorization));
        assertEquals(SqsError.INCOMPLETE_SIGNATURE, result.rejection().orElseThrow().error(), result.toString());
    }

    @Test
    void hugeAuthorizationIsIncompleteSignature() {
        String auth = "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20240102/us-east-1/sqs/aws4_request, SignedHeaders="
                + "host;".repeat(100_000) + "x-amz-date, Signature=" + WorkedExample.SIGNATURE;
        assertEquals(SqsError.INCOMPLETE_SIGNATURE,
                verify(WorkedExample.withAuthorization(auth)).rejection().orElseThrow().error());
    }

    @ParameterizedTest(name = "[{index}] X-Amz-Date: {0}")
    @ValueSource(strings = {"", "2024-01-02T03:04:05Z", "20240102T030405", "20241302T030405Z", "20240230T030405Z",
        "20240102T250405Z", "+20240102T030405Z", "20240102t030405z", "Tue, 02 Jan 2024 03:04:05 GMT"})
    void malformedAmzDateIsIncompleteSignature(String amzDate) {
        Map<String, List<String>> headers = WorkedExample.headers();
        headers.put("X-Amz-Date", List.of(amzDate));
        assertEquals(SqsError.INCOMPLETE_SIGNATURE,
                verify(WorkedExample.request(headers)).rejection().orElseThrow().error());
    }

    @Test
    void missingOrRepeatedAmzDateIsIncompleteSignature() {
        Map<String, List<String>> headers = WorkedExample.headers();
        headers.remove("X-Amz-Date");
        assertRejected(SqsError.INCOMPLETE_SIGNATURE,
                "Authorization header requires existence of an 'X-Amz-Date' header.",
                verify(WorkedExample.request(headers)));
        headers.put("x-amz-date", List.of(WorkedExample.AMZ_DATE, WorkedExample.AMZ_DATE));
        assertEquals(SqsError.INCOMPLETE_SIGNATURE,
                verify(WorkedExample.request(headers)).rejection().orElseThrow().error());
    }

    @Test
    void listsEveryMissingComponent() {
        assertRejected(SqsError.INCOMPLETE_SIGNATURE, "Authorization header requires 'Credential' parameter. "
                        + "Authorization header requires 'Signature' parameter. "
                        + "Authorization header requires 'SignedHeaders' parameter.",
                verify(WorkedExample.withAuthorization("AWS4-HMAC-SHA256")));
    }

    @Test
    void repeatedAuthorizationHeaderIsIncompleteSignature() {
        Map<String, List<String>> headers = WorkedExample.headers();
        headers.put("authorization", List.of(WorkedExample.AUTHORIZATION, WorkedExample.AUTHORIZATION));
        assertEquals(SqsError.INCOMPLETE_SIGNATURE,
                verify(WorkedExample.request(headers)).rejection().orElseThrow().error());
    }

    @Test
    void noCredentialsAtAllIsMissingAuthenticationToken() {
        Map<String, List<String>> headers = WorkedExample.headers();
        headers.remove("Authorization");
        assertEquals(new AuthResult.Rejected(SqsError.MISSING_AUTHENTICATION_TOKEN.failure()),
                verify(WorkedExample.request(headers)));
        assertEquals(new AuthResult.Rejected(SqsError.MISSING_AUTHENTICATION_TOKEN.failure()),
                verify(SignedRequest.of("GET", "/", "Action=ListQueues&X-Amz-Date=20240102T030405Z", headers, null)));
    }

    @Test
    void headerAndQueryAuthenticationTogetherIsIncompleteSignature() {
        SignedRequest request = SignedRequest.of("POST", "/", "X-Amz-Signature=" + WorkedExample.SIGNATURE,
                WorkedExample.headers(), WorkedExample.BODY.getBytes(StandardCharsets.UTF_8));
        assertEquals(SqsError.INCOMPLETE_SIGNATURE, verify(request).rejection().orElseThrow().error());
    }

    @Test
    void unknownAccessKeyIsInvalidClientTokenId() {
        AuthResult result = verify(WorkedExample.withAuthorization(
                WorkedExample.AUTHORIZATION.replace("AKIDEXAMPLE", "AKIDOTHER")));
        assertRejected(SqsError.INVALID_CLIENT_TOKEN_ID, "The security token included in the request is invalid.",
                result);
    }

    @Test
    void rejectsScopeForAnotherService() {
        assertRejected(SqsError.SIGNATURE_DOES_NOT_MATCH, "Credential should be scoped to correct service: 'sqs'.",
                verify(WorkedExample.withAuthorization(WorkedExample.AUTHORIZATION.replace("/sqs/", "/sns/"))));
    }

    @Test
    void rejectsScopeWithAnotherTerminator() {
        assertRejected(SqsError.SIGNATURE_DOES_NOT_MATCH,
                "Credential should be scoped with a valid terminator: 'aws4_request', not 'aws5_request'.",
                verify(WorkedExample.withAuthorization(
                        WorkedExample.AUTHORIZATION.replace("aws4_request", "aws5_request"))));
    }

    @Test
    void rejectsScopeDateOtherThanRequestDate() {
        assertRejected(SqsError.SIGNATURE_DOES_NOT_MATCH, "Date in Credential scope does not match YYYYMMDD from "
                        + "ISO-8601 version of date from HTTP: '20240101' != '20240102', from '20240102T030405Z'.",
                verify(WorkedExample.withAuthorization(WorkedExample.AUTHORIZATION.replace("/20240102/",
                        "/20240101/"))));
    }

    @Test
    void rejectsRegionOtherThanConfigured() {
        SigV4Verifier verifier = new SigV4Verifier(WorkedExample.store(), WorkedExample.clockAtSigningTime(),
                Optional.of("eu-central-1"));
        assertRejected(SqsError.SIGNATURE_DOES_NOT_MATCH,
                "Credential should be scoped to a valid region, not 'us-east-1'.",
                verifier.verify(WorkedExample.request()));
    }

    @Test
    void rejectsContentSha256ThatIsNotTheBodyHash() {
        Map<String, List<String>> headers = WorkedExample.headers();
        headers.put("X-Amz-Content-Sha256", List.of(SigV4Crypto.sha256Hex("another body")));
        assertRejected(SqsError.SIGNATURE_DOES_NOT_MATCH,
                "The provided 'x-amz-content-sha256' header does not match what was computed.",
                verify(WorkedExample.request(headers)));
        headers.put("X-Amz-Content-Sha256", List.of("STREAMING-AWS4-HMAC-SHA256-PAYLOAD"));
        assertEquals(SqsError.SIGNATURE_DOES_NOT_MATCH,
                verify(WorkedExample.request(headers)).rejection().orElseThrow().error());
    }

    @Test
    void contentSha256HeaderDecidesThePayloadLine() {
        Map<String, List<String>> headers = WorkedExample.headers();
        headers.put("X-Amz-Content-Sha256", List.of(SigV4Crypto.sha256Hex(WorkedExample.BODY)));
        assertTrue(verify(WorkedExample.request(headers)).isAuthenticated());
        headers.put("X-Amz-Content-Sha256", List.of("UNSIGNED-PAYLOAD"));
        assertFalse(verify(WorkedExample.request(headers)).isAuthenticated(), "payload line was signed as a hash");
    }

    @Test
    void anUnsignedXAmzTargetIsRefused() {
        Map<String, List<String>> headers = WorkedExample.headers();
        headers.put("X-Amz-Target", List.of("AmazonSQS.DeleteQueue")); // sent, but not among the signed headers
        assertRejected(SqsError.SIGNATURE_DOES_NOT_MATCH, "The X-Amz-Target header must be signed.",
                verify(WorkedExample.request(headers)));
    }

    private static AuthResult verify(SignedRequest request) {
        return WorkedExample.verifier(WorkedExample.clockAtSigningTime()).verify(request);
    }

    private static void assertRejected(SqsError error, String message, AuthResult result) {
        assertEquals(new AuthResult.Rejected(new SqsFailure(error, message)), result);
    }
}
