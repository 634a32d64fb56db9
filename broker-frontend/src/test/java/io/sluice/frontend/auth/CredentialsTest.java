package io.sluice.frontend.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class CredentialsTest {

    @Test
    void storeFindsExactKeysOnly() {
        CredentialStore store = new InMemoryCredentialStore(Map.of("AKID1", "s1", "AKID2", "s2"));
        assertEquals(Optional.of(new Credentials("AKID1", "s1")), store.find("AKID1"));
        assertEquals(Optional.empty(), store.find("akid1"));
        assertEquals(Optional.empty(), store.find(""));
        assertEquals(Optional.empty(), store.find(null));
    }

    @Test
    void toStringHidesTheSecret() {
        assertFalse(new Credentials("AKID1", "very-secret").toString().contains("very-secret"));
    }

    @Test
    void rejectsEmptyKeys() {
        assertThrows(IllegalArgumentException.class, () -> new Credentials("", "s"));
        assertThrows(IllegalArgumentException.class, () -> new InMemoryCredentialStore(Map.of("AKID", "")));
    }
}
