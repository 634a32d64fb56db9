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

    /** A role's own defaults (e.g. a metadata member's admin port) sit under the file and the environment. */
    @Test
    void roleDefaultsYieldToTheEnvironmentAndFlagsToNothing() {
        picocli.CommandLine cli = new picocli.CommandLine(new SluiceMain());
        picocli.CommandLine.ParseResult parsed = cli.parseArgs("metadata", "--node-id", "m1", "--peers", "m1=h:1",
                "--admin-port", "7000").subcommand();
        Map<String, String> overrides = new java.util.HashMap<>();
        Map<String, String> defaults = new java.util.HashMap<>();
        SluiceMain.flagOrDefault(parsed, overrides, defaults, "--admin-port", ServerConfigKeys.ADMIN_PORT, "7000");
        SluiceMain.flagOrDefault(parsed, overrides, defaults, "--host", ServerConfigKeys.HOST, "127.0.0.1");
        ServerConfig config = ServerConfig.load(null, Map.of("SLUICE_HOST", "0.0.0.0", "SLUICE_ADMIN_PORT", "3000"),
                overrides, defaults);
        assertEquals("0.0.0.0", config.get(ServerConfigKeys.HOST), "a flag left out: the environment wins");
        assertEquals(7000, config.get(ServerConfigKeys.ADMIN_PORT), "a flag given: it wins");
        assertEquals("127.0.0.1", ServerConfig.load(null, Map.of(), overrides, defaults).get(ServerConfigKeys.HOST),
                "nothing set: the role's default");
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
