package io.sluice.server;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** The {@code sluice} command line. */
@Command(name = "sluice", mixinStandardHelpOptions = true, version = "sluice 0.1.0-SNAPSHOT",
        description = "A clustered, durable work-queue server that speaks the Amazon SQS API.",
        subcommands = {SluiceMain.Dev.class})
public final class SluiceMain implements Runnable {

    public static void main(String[] args) {
        System.exit(new CommandLine(new SluiceMain()).execute(args));
    }

    @Override
    public void run() {
        new CommandLine(this).usage(System.out);
    }

    /** {@code sluice dev}: all roles in one process, data on local disk. The flags are a contract: keep them. */
    @Command(name = "dev", mixinStandardHelpOptions = true,
            description = "Run a single-process development server (replication factor 1, data forced to disk).")
    static final class Dev implements Callable<Integer> {
        @Option(names = "--port", description = "SQS endpoint port (default ${DEFAULT-VALUE}).", defaultValue = "9324")
        int port;

        @Option(names = "--admin-port", description = "Health and metrics port (default ${DEFAULT-VALUE}).",
                defaultValue = "9325")
        int adminPort;

        @Option(names = "--data-dir", description = "Data folder (default ${DEFAULT-VALUE}).", defaultValue = "./data")
        String dataDir;

        @Option(names = "--access-key", description = "Accepted access key id (default ${DEFAULT-VALUE}).",
                defaultValue = "sluice")
        String accessKey;

        @Option(names = "--secret-key", description = "Accepted secret key (default ${DEFAULT-VALUE}).",
                defaultValue = "sluice-dev-secret")
        String secretKey;

        @Option(names = "--host", description = "Bind address (default ${DEFAULT-VALUE}).", defaultValue = "127.0.0.1")
        String host;

        @Option(names = "--config", description = "A properties file of configuration keys (docs/configuration.md).")
        Path configFile;

        @Option(names = "--no-auth", description = "Accept unsigned requests (SigV4 verification off).")
        boolean noAuth;

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() throws Exception {
            Map<String, String> overrides = new HashMap<>();
            CommandLine.ParseResult parsed = spec.commandLine().getParseResult();
            putIfGiven(parsed, overrides, "--port", ServerConfigKeys.PORT, Integer.toString(port));
            putIfGiven(parsed, overrides, "--admin-port", ServerConfigKeys.ADMIN_PORT, Integer.toString(adminPort));
            putIfGiven(parsed, overrides, "--data-dir", ServerConfigKeys.DATA_DIR, dataDir);
            putIfGiven(parsed, overrides, "--access-key", ServerConfigKeys.ACCESS_KEY, accessKey);
            putIfGiven(parsed, overrides, "--secret-key", ServerConfigKeys.SECRET_KEY, secretKey);
            putIfGiven(parsed, overrides, "--host", ServerConfigKeys.HOST, host);
            if (noAuth) {
                overrides.put(ServerConfigKeys.AUTH_ENABLED.name(), "false");
            }
            ServerConfig config = ServerConfig.load(configFile, System.getenv(), overrides);
            DevServer server = new DevServer(config);
            CountDownLatch stopped = new CountDownLatch(1);
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                server.close();
                stopped.countDown();
            }, "sluice-shutdown"));
            server.start();
            System.out.printf("Sluice dev is running.%n  SQS endpoint: http://%s:%d%n  Admin:        http://%s:%d/health"
                            + "%n  Credentials:  AWS_ACCESS_KEY_ID=%s AWS_SECRET_ACCESS_KEY=%s (any region)%s%n",
                    config.get(ServerConfigKeys.HOST), server.sqsAddress().getPort(), config.get(ServerConfigKeys.HOST),
                    server.adminAddress().getPort(), config.get(ServerConfigKeys.ACCESS_KEY),
                    config.get(ServerConfigKeys.SECRET_KEY),
                    config.get(ServerConfigKeys.AUTH_ENABLED) ? "" : "  [authentication OFF]");
            stopped.await();
            return 0;
        }

        /** Command-line values win over file and environment, but only when actually given. */
        private static void putIfGiven(CommandLine.ParseResult parsed, Map<String, String> overrides, String option,
                                       ConfigKey<?> key, String value) {
            if (parsed.hasMatchedOption(option)) {
                overrides.put(key.name(), value);
            }
        }
    }
}
