package io.sluice.frontend.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.common.ReceiptHandle;
import io.sluice.common.SqsException;
import java.util.Base64;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class ReceiptHandleSealTest {
    private static final String SECRET = Base64.getEncoder().encodeToString(new byte[32]);
    private static final String OTHER = Base64.getEncoder().encodeToString("another secret of 32 bytes......".getBytes());
    private final ReceiptHandleSeal seal = new ReceiptHandleSeal(() -> SECRET);
    private final ReceiptHandle handle = new ReceiptHandle(7, 2, 1234, 3);

    @Test
    void aSealedHandleOpens() {
        String text = seal.seal(handle);
        assertEquals(Optional.of(handle), seal.open(text));
        assertTrue(text.startsWith(handle.encode()), "the handle's own encoding, then the MAC");
    }

    @Test
    void aHandleWithoutItsMacOrWithAnotherOneDoesNot() {
        String text = seal.seal(handle);
        String forgedInner = new ReceiptHandle(7, 2, 1235, 3).encode(); // a valid checksum, another message
        String mac = text.substring(handle.encode().length());
        assertEquals(Optional.empty(), seal.open(handle.encode()), "no MAC");
        assertEquals(Optional.empty(), seal.open(forgedInner + mac), "another handle's MAC");
        assertEquals(Optional.empty(), seal.open(new ReceiptHandleSeal(() -> OTHER).seal(handle)), "another cluster");
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            String altered = text.substring(0, i) + (c == 'A' ? 'B' : 'A') + text.substring(i + 1);
            assertEquals(Optional.empty(), seal.open(altered), "altered at " + i);
        }
        assertEquals(Optional.empty(), seal.open(null));
        assertEquals(Optional.empty(), seal.open(text + "x"));
        assertNotEquals(seal.seal(handle), new ReceiptHandleSeal(() -> OTHER).seal(handle));
    }

    @Test
    void noSecretYetMeansUnavailableNotUnsealed() {
        ReceiptHandleSeal none = new ReceiptHandleSeal(() -> null);
        SqsException e = assertThrows(SqsException.class, () -> none.seal(handle));
        assertEquals("ServiceUnavailable", e.failure().error().queryCode());
        assertEquals(Optional.empty(), none.open(seal.seal(handle)));
    }
}
