package io.sluice.it;

import static io.sluice.it.DeployFiles.map;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.sluice.server.ConfigKey;
import io.sluice.server.ServerConfig;
import io.sluice.server.ServerConfigKeys;
import io.sluice.server.SluiceMain;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import picocli.CommandLine;

/** What the deployment files must agree with in Sluice itself: the launcher's flags and the configuration keys. */
final class LauncherChecks {
    /** Admin port flags and defaults of the roles (SluiceMain). */
    static final Map<String, Integer> DEFAULT_ADMIN_PORT = Map.of("metadata", 9425, "backend", 9525,
            "frontend", 9325, "dev", 9325);
    /** SLUICE_* variables that are not configuration keys: Logback's levels, the image's entry point. */
    static final Set<String> OTHER_SLUICE_VARIABLES = Set.of("SLUICE_LOG_LEVEL", "SLUICE_ACCESS_LOG_LEVEL",
            "SLUICE_WAIT_FOR_HOST", "SLUICE_WAIT_FOR_HOST_SECONDS", "SLUICE_HEALTH_URL");
    /** The data folder of every stateful role is below this mount (the image's volume). */
    static final String DATA_MOUNT = "/var/lib/sluice";

    private LauncherChecks() {
    }


    /** The launcher's own command-line parser accepts the role and flags (unknown or missing flags fail). */
    static void parseWithLauncher(String where, List<String> args) {
        try {
            CommandLine.ParseResult parsed = new CommandLine(new SluiceMain()).parseArgs(args.toArray(String[]::new));
            assertTrue(parsed.hasSubcommand(), where + ": a role");
            assertTrue(Set.of("metadata", "backend", "frontend").contains(parsed.subcommand().commandSpec().name()),
                    where + ": a cluster role, not " + parsed.subcommand().commandSpec().name());
        } catch (CommandLine.ParameterException e) {
            fail(where + ": sluice refuses " + args + ": " + e.getMessage());
        }
    }

    /** SLUICE_* variables are configuration keys (or one of the few others) and their values are valid. */
    static void assertConfiguration(String where, Map<String, String> env) {
        Set<String> keys = ServerConfigKeys.all().stream().map(ConfigKey::environmentName).collect(Collectors.toSet());
        Map<String, String> config = new HashMap<>();
        env.forEach((k, v) -> {
            if (k.startsWith("SLUICE_")) {
                assertTrue(keys.contains(k) || OTHER_SLUICE_VARIABLES.contains(k),
                        where + ": " + k + " is not a configuration key (docs/configuration.md)");
                if (keys.contains(k)) {
                    config.put(k, v);
                }
            }
        });
        try {
            ServerConfig.load(null, config, Map.of());
        } catch (RuntimeException e) {
            fail(where + ": Sluice refuses the configuration " + config + ": " + e.getMessage());
        }
    }
}
