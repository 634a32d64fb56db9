package io.sluice.server;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.metadata.image.ClusterImage;
import io.sluice.metadata.image.MetadataRecord;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The start-up rules for configured access keys. */
class ConfiguredKeysTest {
    private static final ClusterImage NO_KEYS = ClusterImage.EMPTY;

    @Test
    void aFrontendNeedsConfiguredKeys() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ConfiguredKeys.check(Map.of(), true, "127.0.0.1", true, NO_KEYS));
        assertTrue(e.getMessage().contains("--access-key"), e.getMessage());
        assertDoesNotThrow(() -> ConfiguredKeys.check(Map.of(), true, "127.0.0.1", false, NO_KEYS), "auth off");
        assertDoesNotThrow(() -> ConfiguredKeys.check(Map.of("k", "a-secret-of-its-own"), true, "0.0.0.0", true,
                NO_KEYS));
    }

    @Test
    void documentedSecretsOnlyOnLoopback() {
        for (String placeholder : ConfiguredKeys.PLACEHOLDER_SECRETS) {
            Map<String, String> keys = Map.of("ops", "a-secret-of-its-own", "sluice", placeholder);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> ConfiguredKeys.check(keys, true, "0.0.0.0", true, NO_KEYS), placeholder);
            assertTrue(e.getMessage().contains("[sluice]") && !e.getMessage().contains(placeholder), e.getMessage());
            assertDoesNotThrow(() -> ConfiguredKeys.check(keys, true, "127.0.0.1", true, NO_KEYS), "loopback");
            assertDoesNotThrow(() -> ConfiguredKeys.check(keys, false, "0.0.0.0", true, NO_KEYS), "sluice dev");
        }
    }

    @Test
    void aConfiguredKeyAlsoInTheCatalogIsAnError() {
        ClusterImage catalog = NO_KEYS.replay(new MetadataRecord.AccessKeySet("ops", "stored-secret", List.of()));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ConfiguredKeys.check(Map.of("ops", "configured-secret"), false, "127.0.0.1", true, catalog));
        assertTrue(e.getMessage().contains("[ops]") && !e.getMessage().contains("secret-"), e.getMessage());
        assertDoesNotThrow(() -> ConfiguredKeys.check(Map.of("other", "configured-secret"), true, "127.0.0.1", true,
                catalog));
    }

    @Test
    void aClashArisingLaterRefusesTheKey() {
        ClusterImage[] catalog = {NO_KEYS};
        CatalogAccessKeys keys = new CatalogAccessKeys(Map.of("ops", "configured-secret"), Map.of(), () -> catalog[0]);
        assertTrue(keys.find("ops").isPresent());
        catalog[0] = NO_KEYS.replay(new MetadataRecord.AccessKeySet("ops", "stored-secret", List.of()));
        assertTrue(keys.find("ops").isEmpty(), "neither copy wins");
        catalog[0] = catalog[0].replay(new MetadataRecord.AccessKeySet("new", "new-secret", List.of()));
        assertTrue(keys.find("new").isPresent());
    }
}
