package io.sluice.it;

import static org.awaitility.Awaitility.await;

import io.sluice.testing.Ports;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A real {@code sluice dev} process started from the launcher jar on free loopback ports. Stop it gracefully
 * (SIGTERM) or kill it (SIGKILL) by its PID; restart it on the same data folder.
 */
public final class SluiceProcess implements AutoCloseable, SqsServer {
    public static final String ACCESS_KEY = "it-key";
    public static final String SECRET_KEY = "it-secret";

    private final Path dataDir;
    private final Path log;
    private final List<String> extraArgs;
    private final java.util.Map<String, String> extraEnv;
    private String role = "dev";
    /** Where this run's lines start in {@link #log}. */
    private long logFrom;
    private Process process;
    private int port;
    private int adminPort;
    private int metadataPort;

    private SluiceProcess(Path dataDir, List<String> extraArgs, java.util.Map<String, String> extraEnv) {
        this.dataDir = dataDir;
        this.log = dataDir.resolveSibling(dataDir.getFileName() + ".log");
        this.extraArgs = extraArgs;
        this.extraEnv = extraEnv;
    }

    /** Starts a server with a fresh data folder. */
    public static SluiceProcess start(String name, String... extraArgs) throws IOException {
        return start(name, java.util.Map.of(), extraArgs);
    }

    /** Starts a server with a fresh data folder and extra environment (configuration keys as SLUICE_...). */
    public static SluiceProcess start(String name, java.util.Map<String, String> env, String... extraArgs)
            throws IOException {
        Path data = Files.createTempDirectory(itDir(), name + "-");
        SluiceProcess p = new SluiceProcess(data, List.of(extraArgs), env);
        p.launch();
        return p;
    }

    /** Starts {@code sluice frontend} for a cluster whose metadata group is {@code metadataPeers}. */
    public static SluiceProcess startFrontend(String name, String metadataPeers) throws IOException {
        Path data = Files.createTempDirectory(itDir(), name + "-");
        SluiceProcess p = new SluiceProcess(data, List.of("--metadata-peers", metadataPeers), java.util.Map.of());
        p.role = "frontend";
        p.launch();
        return p;
    }

    /** Where test servers keep their data and logs. */
    public static Path itDir() throws IOException {
        Path base = Path.of(System.getProperty("sluice.it.dir", "target/it"));
        Files.createDirectories(base);
        return base;
    }

    private void launch() throws IOException {
        port = Ports.free();
        adminPort = Ports.free();
        List<String> cmd = new ArrayList<>(List.of(role,
                "--port", Integer.toString(port), "--admin-port", Integer.toString(adminPort),
                "--access-key", ACCESS_KEY, "--secret-key", SECRET_KEY));
        if (role.equals("dev")) {
            cmd.addAll(List.of("--data-dir", dataDir.toString()));
        }
        cmd.addAll(extraArgs);
        if (metadataPort == 0) {
            metadataPort = Ports.free(); // kept across restarts: the metadata member's address is part of its group
        }
        java.util.Map<String, String> env = new java.util.HashMap<>(java.util.Map.of("SLUICE_ACCESS_LOG_LEVEL", "WARN",
                "SLUICE_METADATA_PORT", Integer.toString(metadataPort)));
        env.putAll(extraEnv);
        logFrom = Files.exists(log) ? Files.size(log) : 0; // a restart appends to the same log
        process = ProcessFixtures.launch(List.of("-Xmx512m", "-XX:+UseSerialGC"), cmd, log, env);
        ProcessFixtures.awaitHealthy(process, adminPort, log, "sluice " + role);
    }

    /** Runs the launcher with {@code args} (e.g. {@code admin status ...}); returns its output, failing on non-zero exit. */
    static String runCli(String... args) throws IOException, InterruptedException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = new ArrayList<>(List.of(java));
        cmd.addAll(ClassArchive.jvmOptions());
        cmd.addAll(List.of("-jar", jar()));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new AssertionError("sluice " + String.join(" ", args) + " failed:\n" + out);
        }
        return out;
    }

    static String jar() {
        String jar = System.getProperty("sluice.jar");
        if (jar == null || !Files.exists(Path.of(jar))) {
            throw new IllegalStateException("launcher jar not found: " + jar + " (run mvn package first)");
        }
        return jar;
    }

    public URI endpoint() {
        return URI.create("http://127.0.0.1:" + port);
    }

    /** The Raft port of its in-process metadata member (sluice dev). */
    public int metadataPort() {
        return metadataPort;
    }

    /** Its data folder (sluice dev keeps its generated admin token there, in {@code admin-token}). */
    public Path dataDir() {
        return dataDir;
    }

    public int port() {
        return port;
    }

    public URI adminEndpoint() {
        return URI.create("http://127.0.0.1:" + adminPort);
    }

    /** Waits until the server holds at least {@code n} parked long polls (its {@code sqs_long_polls_parked} gauge). */
    public void awaitParkedPolls(int n) {
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(20))
                .until(() -> PromScrape.of(adminEndpoint()).sum("sqs_long_polls_parked") >= n);
    }

    public long pid() {
        return process.pid();
    }

    /** SIGTERM and wait: the graceful path. */
    /**
     * SIGTERM, the graceful path; a {@code sluice dev} must then stop cleanly (its last line says so, and its shutdown
     * threw nothing): a shutdown cut short leaves its stores unclosed, to be recovered at the next start.
     */
    public void stop() throws InterruptedException {
        boolean running = alive();
        ProcessFixtures.stop(process);
        if (running && role.equals("dev")) {
            String text;
            try {
                byte[] all = Files.readAllBytes(log);
                text = new String(all, (int) Math.min(logFrom, all.length), all.length - (int) Math.min(logFrom,
                        all.length), StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            if (!text.contains("Sluice dev stopped") || text.contains("Exception in thread \"sluice-shutdown\"")) {
                throw new AssertionError("sluice dev did not stop cleanly; see " + log);
            }
        }
    }

    /** SIGKILL: the crash path. */
    public void kill() throws InterruptedException {
        ProcessFixtures.kill(process);
    }

    /** Starts again on the same data folder (new ports). */
    public void restart() throws IOException {
        launch();
    }

    public boolean alive() {
        return process != null && process.isAlive();
    }

    @Override
    public void close() throws InterruptedException {
        stop();
    }

}
