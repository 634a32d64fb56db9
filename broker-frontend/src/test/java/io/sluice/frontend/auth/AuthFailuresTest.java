package io.sluice.frontend.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Failed signatures slow guessing per address, per key; a window's end forgives them; other addresses never see it. */
class AuthFailuresTest {
    @Test
    void tenFailuresForAKeySlowItsWrongSignaturesFromThatAddressForTheRestOfTheMinute() {
        AtomicLong now = new AtomicLong(1_000);
        AuthFailures f = new AuthFailures(now::get);
        for (int i = 0; i < AuthFailures.PER_KEY - 1; i++) {
            f.failed("10.0.0.1", "key");
        }
        assertFalse(f.slowed("10.0.0.1", "key"));
        f.failed("10.0.0.1", "key");
        assertTrue(f.slowed("10.0.0.1", "key"));
        assertFalse(f.slowed("10.0.0.2", "key"), "the real client elsewhere");
        assertFalse(f.slowed("10.0.0.1", "other"), "another key from the same address");
        now.addAndGet(AuthFailures.WINDOW_NANOS);
        assertFalse(f.slowed("10.0.0.1", "key"), "the next minute starts afresh");
    }

    @Test
    void manyKeysFromOneAddressSlowTheAddress() {
        AuthFailures f = new AuthFailures(() -> 0);
        for (int i = 0; i < AuthFailures.PER_ADDRESS; i++) {
            f.failed("10.0.0.1", "key-" + i);
        }
        assertTrue(f.slowed("10.0.0.1", "fresh"));
        assertTrue(f.slowed("10.0.0.1", null));
        assertFalse(f.slowed("10.0.0.2", "fresh"));
    }

    @Test
    void theKeyIdIsReadFromTheHeaderOrThePresignedQuery() {
        assertEquals("AKID", AuthFailures.accessKeyOf("AWS4-HMAC-SHA256 Credential=AKID/20240102/us-east-1/sqs/aws4_request,"
                + " SignedHeaders=host, Signature=abc", name -> null));
        assertEquals("AKID", AuthFailures.accessKeyOf(null, name -> name.equals("X-Amz-Credential")
                ? "AKID/20240102/us-east-1/sqs/aws4_request" : null));
        assertNull(AuthFailures.accessKeyOf(null, name -> null));
        assertNull(AuthFailures.accessKeyOf("Bearer x", name -> null));
    }
}
