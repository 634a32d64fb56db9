package io.sluice.frontend.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.sluice.common.SqsError;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Spec section 9's worked example, reproduced exactly, and its single-change variations. */
class SigV4WorkedExampleTest {

    @Test
    void canonicalRequestMatchesTheSpec() {
        SignedRequest request = WorkedExample.request();
        String canonical = SigV4Canonical.canonicalRequest(request, QueryString.parse(null).canonical(null),
                List.of("content-type", "host", "x-amz-date"), request.bodySha256());
        String expected = "POST\n/\n\n"
                + "content-type:application/x-www-form-urlencoded; charset=utf-8\n"
                + "host:localhost:9324\n"
                + "x-amz-date:20240102T030405Z\n\n"
                + "content-type;host;x-amz-date\n"
                + "7144744dc12d3b7541c7c449d7b5f04bd5e028d3c9957aa5c9598da2bf7a5191";
        assertEquals(expected, canonical);
        assertEquals("17805df71b57313bab5c88f3256b0d778ff019381fdcae3edff1c13243241cc3",
                SigV4Crypto.sha256Hex(canonical));
    }

    @Test
    void signingKeyAndSignatureMatchTheSpec() {
        byte[] key = SigV4Crypto.signingKey(WorkedExample.SECRET, "20240102", "us-east-1", "sqs");
        assertEquals("ede376e36c2442e8db0975ba8f28728b99455c0f9e8a89f47e3bbb6eec95e5f8", SigV4Crypto.hex(key));
        String stringToSign = "AWS4-HMAC-SHA256\n20240102T030405Z\n20240102/us-east-1/sqs/aws4_request\n"
                + "17805df71b57313bab5c88f3256b0d778ff019381fdcae3edff1c13243241cc3";
        assertEquals(WorkedExample.SIGNATURE, SigV4Crypto.signature(key, stringToSign));
    }

    @Test
    void verifiesTheSpecSignature() {
        AuthResult result = WorkedExample.verifier(WorkedExample.clockAtSigningTime()).verify(WorkedExample.request());
        assertEquals(new AuthResult.Authenticated("AKIDEXAMPLE"), result);
        assertEquals(Optional.of("AKIDEXAMPLE"), result.principal());
    }

    @Test
    void verifiesWithTheConfiguredRegion() {
        SigV4Verifier verifier = new SigV4Verifier(WorkedExample.store(), WorkedExample.clockAtSigningTime(),
                Optional.of("us-east-1"));
        assertEquals(new AuthResult.Authenticated("AKIDEXAMPLE"), verifier.verify(WorkedExample.request()));
    }

    static Stream<Arguments> singleChanges() {
        return Stream.<Map.Entry<String, Supplier<AuthResult>>>of(
                Map.entry("one body byte", () -> verify(WorkedExample.SECRET, SignedRequest.of("POST", "/", null,
                        WorkedExample.headers(), WorkedExample.BODY.replace("hello", "hellp")
                                .getBytes(StandardCharsets.UTF_8)))),
                Map.entry("the secret", () -> verify(WorkedExample.SECRET.replace('K', 'k'),
                        WorkedExample.request())),
                Map.entry("the date", () -> {
                    Map<String, List<String>> headers = WorkedExample.headers();
                    headers.put("X-Amz-Date", List.of("20240102T030406Z"));
                    return verify(WorkedExample.SECRET, WorkedExample.request(headers));
                }),
                Map.entry("a signed header value", () -> {
                    Map<String, List<String>> headers = WorkedExample.headers();
                    headers.put("Content-Type", List.of("application/x-www-form-urlencoded; charset=utf-16"));
                    return verify(WorkedExample.SECRET, WorkedExample.request(headers));
                }),
                Map.entry("the host", () -> {
                    Map<String, List<String>> headers = WorkedExample.headers();
                    headers.put("Host", List.of("localhost:9325"));
                    return verify(WorkedExample.SECRET, WorkedExample.request(headers));
                }),
                Map.entry("the path", () -> verify(WorkedExample.SECRET, SignedRequest.of("POST",
                        "/000000000000/q1", null, WorkedExample.headers(),
                        WorkedExample.BODY.getBytes(StandardCharsets.UTF_8)))),
                Map.entry("the method", () -> verify(WorkedExample.SECRET, SignedRequest.of("PUT", "/", null,
                        WorkedExample.headers(), WorkedExample.BODY.getBytes(StandardCharsets.UTF_8)))),
                Map.entry("an added query parameter", () -> verify(WorkedExample.SECRET, SignedRequest.of("POST",
                        "/", "Action=DeleteQueue", WorkedExample.headers(),
                        WorkedExample.BODY.getBytes(StandardCharsets.UTF_8)))))
                .map(e -> Arguments.of(e.getKey(), e.getValue()));
    }

    @ParameterizedTest(name = "changing {0} breaks the signature")
    @MethodSource("singleChanges")
    void anySingleChangeBreaksTheSignature(String change, Supplier<AuthResult> verification) {
        assertEquals(new AuthResult.Rejected(SqsError.SIGNATURE_DOES_NOT_MATCH.failure()), verification.get());
    }

    private static AuthResult verify(String secret, SignedRequest request) {
        SigV4Verifier verifier = new SigV4Verifier(
                new InMemoryCredentialStore(Map.of(WorkedExample.ACCESS_KEY, secret)),
                WorkedExample.clockAtSigningTime());
        return verifier.verify(request);
    }
}
