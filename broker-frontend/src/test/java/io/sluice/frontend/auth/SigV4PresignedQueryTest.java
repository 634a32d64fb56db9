package io.sluice.frontend.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.sluice.common.SqsError;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Malformed presigned query parameters are refused as {@code IncompleteSignature}, never thrown. */
class SigV4PresignedQueryTest {
    private static final String SIG = "X-Amz-Signature=" + WorkedExample.SIGNATURE;
    private static final String CREDENTIAL = "X-Amz-Credential=AKIDEXAMPLE%2F20240102%2Fus-east-1%2Fsqs%2Faws4_request";
    private static final String ALGORITHM = "X-Amz-Algorithm=AWS4-HMAC-SHA256";
    private static final String DATE = "X-Amz-Date=20240102T030405Z";
    private static final String SIGNED_HEADERS = "X-Amz-SignedHeaders=host";

    @ParameterizedTest(name = "[{index}] {0}")
    @ValueSource(strings = {
        ALGORITHM,
        SIG,
        CREDENTIAL + "&" + DATE + "&" + SIGNED_HEADERS + "&" + SIG,
        ALGORITHM + "&" + DATE + "&" + SIGNED_HEADERS + "&" + SIG,
        ALGORITHM + "&" + CREDENTIAL + "&" + SIGNED_HEADERS + "&" + SIG,
        ALGORITHM + "&" + CREDENTIAL + "&" + DATE + "&" + SIG,
        ALGORITHM + "&" + CREDENTIAL + "&" + DATE + "&" + SIGNED_HEADERS,
        "X-Amz-Algorithm=AWS4-HMAC-SHA512&" + CREDENTIAL + "&" + DATE + "&" + SIGNED_HEADERS + "&" + SIG,
        ALGORITHM + "&" + ALGORITHM + "&" + CREDENTIAL + "&" + DATE + "&" + SIGNED_HEADERS + "&" + SIG,
        ALGORITHM + "&" + CREDENTIAL + "&" + DATE + "&" + SIGNED_HEADERS + "&" + SIG + "&" + SIG,
        ALGORITHM + "&X-Amz-Credential=AKIDEXAMPLE/20240102/us-east-1/sqs&" + DATE + "&" + SIGNED_HEADERS + "&" + SIG,
        ALGORITHM + "&" + CREDENTIAL + "&X-Amz-Date=2024-01-02&" + SIGNED_HEADERS + "&" + SIG,
        ALGORITHM + "&" + CREDENTIAL + "&" + DATE + "&X-Amz-SignedHeaders=content-type&" + SIG,
        ALGORITHM + "&" + CREDENTIAL + "&" + DATE + "&" + SIGNED_HEADERS + "&X-Amz-Signature=%zz%",
        ALGORITHM + "&" + CREDENTIAL + "&" + DATE + "&" + SIGNED_HEADERS + "&" + SIG + "&X-Amz-Expires=abc",
        ALGORITHM + "&" + CREDENTIAL + "&" + DATE + "&" + SIGNED_HEADERS + "&" + SIG + "&X-Amz-Expires=0",
        ALGORITHM + "&" + CREDENTIAL + "&" + DATE + "&" + SIGNED_HEADERS + "&" + SIG + "&X-Amz-Expires=604801",
        ALGORITHM + "&" + CREDENTIAL + "&" + DATE + "&" + SIGNED_HEADERS + "&" + SIG
                + "&X-Amz-Expires=99999999999999999999999",
        ALGORITHM + "&" + CREDENTIAL + "&" + DATE + "&" + SIGNED_HEADERS + "&" + SIG + "&X-Amz-Expires=-5",
    })
    void malformedPresignedQueryIsIncompleteSignature(String rawQuery) {
        SignedRequest request = SignedRequest.of("GET", "/", rawQuery, Map.of("Host", List.of("localhost")),
                null);
        AuthResult result = WorkedExample.verifier(WorkedExample.clockAtSigningTime()).verify(request);
        assertEquals(SqsError.INCOMPLETE_SIGNATURE, result.rejection().orElseThrow().error(), result.toString());
    }
}
