package io.sluice.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Who reads and who writes on the admin port (issue 42 item 10); the HTTP side is AdminReadAuthIT. */
class AdminAccessTest {
    private static ServerConfig config(Map<String, String> environment) {
        return ServerConfig.load(null, environment, Map.of());
    }

    @Test
    void clusterRolesNeedATokenToReadUnlessToldOtherwise() {
        AdminAccess access = AdminAccess.configured(config(Map.of("SLUICE_ADMIN_READ_TOKEN", "reader-1",
                "SLUICE_ADMIN_TOKEN", "writer-1")));
        assertTrue(access.readsNeedToken());
        assertTrue(access.readsEnabled());
        assertTrue(access.permitsRead("Bearer reader-1"));
        assertTrue(access.permitsRead("Bearer writer-1"), "the admin token reads too");
        assertFalse(access.permitsRead("Bearer reader-"));
        assertFalse(access.permitsRead("Basic reader-1"));
        assertFalse(access.permitsRead(null));
        assertTrue(access.permits("Bearer writer-1"));
        assertFalse(access.permits("Bearer reader-1"), "the read token never writes");

        AdminAccess none = AdminAccess.configured(config(Map.of()));
        assertTrue(none.readsNeedToken());
        assertFalse(none.readsEnabled(), "no token: reads that need one are refused outright");
        assertFalse(none.permitsRead("Bearer "));

        assertFalse(AdminAccess.configured(config(Map.of("SLUICE_ADMIN_READ_AUTH", "false"))).readsNeedToken());
        assertFalse(AdminAccess.configured(config(Map.of("SLUICE_ADMIN_METRICS_AUTH", "false"))).readsNeedToken(),
                "the deprecated key still decides when read-auth is not given");
        assertTrue(AdminAccess.configured(config(Map.of("SLUICE_ADMIN_METRICS_AUTH", "false",
                "SLUICE_ADMIN_READ_AUTH", "true"))).readsNeedToken(), "read-auth wins");
    }

    @Test
    void devReadsAreOpenUnlessToldOtherwise(@TempDir Path data) {
        assertFalse(AdminAccess.forDev(config(Map.of()), data).readsNeedToken());
        assertTrue(AdminAccess.forDev(config(Map.of("SLUICE_ADMIN_READ_AUTH", "true")), data).readsNeedToken());
        assertTrue(AdminAccess.forDev(config(Map.of("SLUICE_ADMIN_METRICS_AUTH", "true")), data).readsNeedToken());
    }

    @Test
    void theReadTokenComesFromAFile(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("read-token");
        Files.writeString(file, "from-the-file\n");
        AdminAccess access = AdminAccess.configured(config(Map.of("SLUICE_ADMIN_READ_TOKEN_FILE", file.toString())));
        assertTrue(access.permitsRead("Bearer from-the-file"));
        AdminAccess both = AdminAccess.configured(config(Map.of("SLUICE_ADMIN_READ_TOKEN_FILE", file.toString(),
                "SLUICE_ADMIN_READ_TOKEN", "given")));
        assertTrue(both.permitsRead("Bearer given"));
        assertFalse(both.permitsRead("Bearer from-the-file"), "the setting wins over the file");
        Files.writeString(file, "  \n");
        assertThrows(IllegalArgumentException.class, () -> AdminAccess.configured(config(Map.of(
                "SLUICE_ADMIN_READ_TOKEN_FILE", file.toString()))), "an empty file is a mistake, not no token");
        assertThrows(IllegalArgumentException.class, () -> AdminAccess.configured(config(Map.of(
                "SLUICE_ADMIN_READ_TOKEN_FILE", dir.resolve("missing").toString()))));
    }

    @Test
    void documentedTokensOnlyOnLoopback() {
        for (String placeholder : ConfiguredKeys.PLACEHOLDER_SECRETS) {
            for (String key : new String[] {"SLUICE_ADMIN_READ_TOKEN", "SLUICE_ADMIN_TOKEN"}) {
                IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> AdminAccess.configured(
                        config(Map.of(key, placeholder, "SLUICE_ADMIN_HOST", "0.0.0.0"))), key + "=" + placeholder);
                assertFalse(e.getMessage().contains(placeholder), "the message does not repeat a token");
                assertEquals(placeholder.length() > 0, AdminAccess.configured(config(Map.of(key, placeholder)))
                        .readsEnabled(), "on loopback it is accepted");
            }
        }
    }
}
