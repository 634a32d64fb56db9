package io.sluice.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Digests recorded from real SQS responses (spec section 6). */
class MessageDigestsTest {
    @Test
    void bodyDigest() {
        assertEquals("6e2baaf3b97dbeef01c0043275f9a0e7", MessageDigests.md5OfBody("msg"));
    }

    @Test
    void attributesAreSortedByName() {
        Map<String, MessageAttributeValue> attributes = new LinkedHashMap<>();
        attributes.put("Help.Me", MessageAttributeValue.ofString("String", "Me"));
        attributes.put("Hello", MessageAttributeValue.ofString("String", "There"));
        attributes.put("General", MessageAttributeValue.ofString("String", "Kenobi"));
        assertEquals("4c360f3fdafd970e05fae2f149d997f5", MessageDigests.md5OfAttributes(attributes));
    }

    @Test
    void singleStringNumberAndBinaryAttributes() {
        assertEquals("a311262e065454b75da111d535b8dacd",
                MessageDigests.md5OfAttributes(Map.of("Hello", MessageAttributeValue.ofString("String", "There"))));
        assertEquals("235c5c510d26fb653d073faed50ae77c", MessageDigests.md5OfAttributes(
                Map.of("timestamp", MessageAttributeValue.ofString("Number", "1493147359900"))));
        byte[] binary = "traceparent\u001e00-774062d6c37081a5a0b9b5b88e30627c-2d2482211f6489da-01"
                .getBytes(StandardCharsets.UTF_8);
        assertEquals("8cbe4db156db8a94db8b801b7addb984",
                MessageDigests.md5OfAttributes(Map.of("attr1", MessageAttributeValue.ofBinary("Binary", binary))));
    }

    @Test
    void systemAttributeDigest() {
        assertEquals("5ae4d5d7636402d80f4eb6d213245a88", MessageDigests.md5OfAttributes(Map.of("AWSTraceHeader",
                MessageAttributeValue.ofString("String",
                        "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"))));
    }

    @Test
    void noAttributesMeansNoDigest() {
        assertNull(MessageDigests.md5OfAttributes(Map.of()));
    }

    @Test
    void contentDeduplicationIdIsSha256Hex() {
        assertEquals("2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824",
                MessageDigests.contentDeduplicationId("hello"));
    }
}
