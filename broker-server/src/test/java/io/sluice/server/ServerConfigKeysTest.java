package io.sluice.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ServerConfigKeysTest {

    @Test
    void everyFieldIsAConfigKeyWithADocAndAUniqueName() {
        Set<String> names = new HashSet<>();
        for (Field f : ServerConfigKeys.class.getDeclaredFields()) {
            if (f.isSynthetic()) {
                continue;
            }
            assertTrue(Modifier.isStatic(f.getModifiers()) && f.getType() == ConfigKey.class,
                    "not a ConfigKey constant: " + f.getName());
        }
        for (ConfigKey<?> k : ServerConfigKeys.all()) {
            assertTrue(k.name().startsWith("sluice."), k.name());
            assertFalse(k.doc().isBlank(), k.name());
            assertTrue(names.add(k.name()), "duplicate " + k.name());
            k.parser().apply(String.valueOf(k.defaultValue())); // the default passes its own validation
        }
    }

    /** docs/configuration.md is generated from the keys; regenerate it with -Dsluice.writeDocs=true. */
    @Test
    void configurationDocIsCurrent() throws IOException {
        Path doc = Path.of("..", "docs", "configuration.md");
        String expected = ServerConfigKeys.renderMarkdown();
        if (Boolean.getBoolean("sluice.writeDocs")) {
            Files.writeString(doc, expected);
        }
        assertEquals(expected, Files.readString(doc), "docs/configuration.md is stale: run the build with"
                + " -Dsluice.writeDocs=true once and commit it");
    }

    @Test
    void precedenceIsDefaultFileEnvironmentCommandLine(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("sluice.properties");
        Files.writeString(file, "sluice.port=1000\nsluice.admin-port=2000\nsluice.region=eu-west-1\n");
        ServerConfig config = ServerConfig.load(file, Map.of("SLUICE_ADMIN_PORT", "3000", "SLUICE_REGION", "ap-south-1"),
                Map.of("sluice.region", "us-west-2"));
        assertEquals(1000, config.get(ServerConfigKeys.PORT));
        assertEquals(3000, config.get(ServerConfigKeys.ADMIN_PORT));
        assertEquals("us-west-2", config.get(ServerConfigKeys.REGION));
        assertEquals("./data", config.get(ServerConfigKeys.DATA_DIR));
    }

    @Test
    void badValuesAndUnknownKeysFailAtStart(@TempDir Path dir) throws IOException {
        assertThrows(IllegalArgumentException.class, () -> ServerConfig.load(null, Map.of("SLUICE_PORT", "70000"), Map.of()));
        assertThrows(IllegalArgumentException.class, () -> ServerConfig.load(null, Map.of(), Map.of("sluice.auth.enabled", "yes")));
        Path file = dir.resolve("bad.properties");
        Files.writeString(file, "sluice.prot=1\n");
        assertThrows(IllegalArgumentException.class, () -> ServerConfig.load(file, Map.of(), Map.of()));
    }
}
