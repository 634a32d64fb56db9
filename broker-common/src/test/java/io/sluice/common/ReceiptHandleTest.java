package io.sluice.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Optional;
import org.junit.jupiter.api.Test;

class ReceiptHandleTest {
    @Test
    void roundTrips() {
        ReceiptHandle handle = new ReceiptHandle(Long.MAX_VALUE, 7, 123_456_789L, 3);
        String text = handle.encode();
        assertTrue(text.matches("[A-Za-z0-9_-]+"), text);
        assertEquals(Optional.of(handle), ReceiptHandle.decode(text));
    }

    @Test
    void rejectsGarbageAndMangledHandles() {
        String good = new ReceiptHandle(1, 0, 42, 1).encode();
        assertEquals(Optional.empty(), ReceiptHandle.decode(null));
        assertEquals(Optional.empty(), ReceiptHandle.decode(""));
        assertEquals(Optional.empty(), ReceiptHandle.decode("not-a-handle"));
        assertEquals(Optional.empty(), ReceiptHandle.decode(good + "A"));
        assertEquals(Optional.empty(), ReceiptHandle.decode("%%%" + good.substring(3)));
        char last = good.charAt(10);
        String flipped = good.substring(0, 10) + (last == 'A' ? 'B' : 'A') + good.substring(11);
        assertEquals(Optional.empty(), ReceiptHandle.decode(flipped));
    }
}
