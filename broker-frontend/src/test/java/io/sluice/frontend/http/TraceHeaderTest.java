package io.sluice.frontend.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.List;
import org.junit.jupiter.api.Test;

/** An unsigned trace header only in X-Ray's form; a signed one as it is, up to its limit; nothing else. */
class TraceHeaderTest {
    private static final String XRAY = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1";

    @Test
    void unsignedOnlyInXRaysForm() {
        assertEquals(XRAY, TraceHeader.accepted(XRAY, true, List::of));
        assertNull(TraceHeader.accepted("custom", true, List::of));
        assertNull(TraceHeader.accepted("j".repeat(10_000), true, List::of));
        assertNull(TraceHeader.accepted(null, true, List::of));
    }

    @Test
    void signedAsItIsUpToTheLimit() {
        assertEquals("custom", TraceHeader.accepted("custom", true, () -> List.of("host", "x-amzn-trace-id")));
        assertNull(TraceHeader.accepted("c".repeat(TraceHeader.MAX_LENGTH + 1), true,
                () -> List.of("x-amzn-trace-id")));
        assertNull(TraceHeader.accepted("custom", false, () -> List.of("x-amzn-trace-id")), "nothing is signed");
    }
}
