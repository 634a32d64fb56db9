package io.sluice.metadata.image;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Records and commands that carry a secret never print it (they reach logs and error messages). */
class SecretRedactionTest {
    @Test
    void accessKeySecretsAreRedacted() {
        String record = new MetadataRecord.AccessKeySet("key-1", "s3cr3t-value", List.of(List.of("*", "q-*")))
                .toString();
        String command = new MetadataCommand.SetAccessKey("key-1", "s3cr3t-value", List.of()).toString();
        for (String s : List.of(record, command)) {
            assertFalse(s.contains("s3cr3t-value"), s);
            assertTrue(s.contains("key-1") && s.contains("<redacted>"), s);
        }
    }
}
