package io.sluice.it;

import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** Launching the launcher jar as a real process, waiting for it to serve, and stopping it by its PID. */
final class ProcessFixtures {
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    private ProcessFixtures() {
    }

    /**
     * The read token every process these fixtures start is given (SLUICE_ADMIN_READ_TOKEN, unless the test sets its
     * own): outside {@code sluice dev}, GET /metrics and /admin/status need it.
     */
    static final String READ_TOKEN = "it-read-" + java.util.UUID.randomUUID();

    /** A request to an admin endpoint carrying {@link #READ_TOKEN}. */
    static HttpRequest.Builder adminRequest(URI uri) {
        return HttpRequest.newBuilder(uri).header("Authorization", "Bearer " + READ_TOKEN);
    }

    /** {@code java <jvmArgs> -jar sluice.jar <args>}, output appended to {@code log}. */
    static Process launch(List<String> jvmArgs, List<String> args, Path log, Map<String, String> env) throws IOException {
        return launch(List.of(), jvmArgs, args, log, env);
    }

    /**
     * {@link #launch(List, List, Path, Map)} behind {@code prefix}, a command that execs it, keeping its PID (e.g.
     * {@code ip netns exec NAMESPACE}: a process on a host of its own).
     */
    static Process launch(List<String> prefix, List<String> jvmArgs, List<String> args, Path log,
                          Map<String, String> env) throws IOException {
        List<String> cmd = new ArrayList<>(prefix);
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(ClassArchive.jvmOptions());
        cmd.addAll(jvmArgs);
        cmd.addAll(List.of("-jar", SluiceProcess.jar()));
        cmd.addAll(args);
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
        if (!env.containsKey("SLUICE_ADMIN_READ_TOKEN") && !env.containsKey("SLUICE_ADMIN_READ_TOKEN_FILE")) {
            pb.environment().put("SLUICE_ADMIN_READ_TOKEN", READ_TOKEN);
        }
        pb.environment().putAll(env);
        return pb.start();
    }

    /** Waits until {@code GET /health} on the admin port answers 200; fails at once if the process exits. */
    static void awaitHealthy(Process process, int adminPort, Path log, String name) {
        awaitHealthy(process, URI.create("http://127.0.0.1:" + adminPort), log, name);
    }

    /** {@link #awaitHealthy(Process, int, Path, String)} for an admin endpoint at any address. */
    static void awaitHealthy(Process process, URI admin, Path log, String name) {
        URI health = admin.resolve("/health");
        await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(100)).until(() -> {
            if (!process.isAlive()) {
                throw new IllegalStateException(name + " exited with " + process.exitValue() + "; see " + log);
            }
            try {
                return HTTP.send(HttpRequest.newBuilder(health).build(), HttpResponse.BodyHandlers.ofString())
                        .statusCode() == 200;
            } catch (IOException e) {
                return false;
            }
        });
    }

    /** SIGTERM and wait (the graceful path); SIGKILL if it has not stopped after 30 s. */
    static void stop(Process process) throws InterruptedException {
        if (process != null && process.isAlive()) {
            process.destroy();
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                kill(process);
            }
        }
    }

    /** SIGKILL: the crash path. */
    static void kill(Process process) throws InterruptedException {
        if (process != null && process.isAlive()) {
            process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        }
    }
}
