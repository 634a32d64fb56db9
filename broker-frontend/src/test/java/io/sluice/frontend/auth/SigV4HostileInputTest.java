package io.sluice.frontend.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Randomly damaged requests always produce a result; none escapes as an exception. */
class SigV4HostileInputTest {
    private static final String ALPHABET = "AWS4-HMAC-SHA256 Credential=/,;=%+&?~*_.\t\n\u0000\u00e9\ud83d\ude00"
            + "0123456789abcdefXYZ";

    @Test
    void damagedAuthorizationHeadersNeverThrow() {
        Random random = new Random(20240102L);
        SigV4Verifier verifier = WorkedExample.verifier(WorkedExample.clockAtSigningTime());
        for (int i = 0; i < 5_000; i++) {
            String damaged = damage(WorkedExample.AUTHORIZATION, random);
            AuthResult result = verifier.verify(WorkedExample.withAuthorization(damaged));
            assertNotNull(result);
            if (result.isAuthenticated()) {
                // Only whitespace around components and the signature's letter case may change without effect.
                assertEquals(looseForm(WorkedExample.AUTHORIZATION), looseForm(damaged), damaged);
            }
        }
    }

    @Test
    void damagedPresignedQueriesNeverThrow() {
        Random random = new Random(7L);
        SigV4Verifier verifier = WorkedExample.verifier(WorkedExample.clockAtSigningTime());
        String query = "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIDEXAMPLE%2F20240102%2Fus-east-1%2Fsqs"
                + "%2Faws4_request&X-Amz-Date=20240102T030405Z&X-Amz-Expires=300&X-Amz-SignedHeaders=host"
                + "&X-Amz-Signature=" + WorkedExample.SIGNATURE + "&MessageBody=a%20b%2Bc";
        for (int i = 0; i < 5_000; i++) {
            SignedRequest request = SignedRequest.of("GET", damage("/000000000000/q1", random), damage(query, random),
                    Map.of("Host", List.of(damage("localhost:9324", random))), null);
            assertNotNull(verifier.verify(request));
        }
    }

    private static String looseForm(String authorization) {
        return authorization.replaceAll("\\s", "").toLowerCase(Locale.ROOT);
    }

    private static String damage(String s, Random random) {
        StringBuilder sb = new StringBuilder(s);
        int edits = 1 + random.nextInt(4);
        for (int e = 0; e < edits; e++) {
            int at = sb.length() == 0 ? 0 : random.nextInt(sb.length());
            char c = ALPHABET.charAt(random.nextInt(ALPHABET.length()));
            switch (random.nextInt(4)) {
                case 0 -> sb.insert(at, c);
                case 1 -> {
                    if (sb.length() > 0) {
                        sb.deleteCharAt(at);
                    }
                }
                case 2 -> {
                    if (sb.length() > 0) {
                        sb.setCharAt(at, c);
                    }
                }
                default -> sb.setLength(at);
            }
        }
        return sb.toString();
    }
}
