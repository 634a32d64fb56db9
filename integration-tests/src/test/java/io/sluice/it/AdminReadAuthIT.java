package io.sluice.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Issue 42 item 10: outside {@code sluice dev} the admin port does not tell strangers what exists. A cluster role's
 * {@code /metrics} and {@code /admin/status} (queue names, access key ids, backends) answer 401 without a token, 401
 * with a wrong one, and 200 with the read token or the admin token; the read token cannot write; {@code /health} and
 * {@code /ready} stay open. With no token configured those reads answer 403 and the start says why; with
 * {@code sluice.admin.read-auth=false} they are open again. {@code sluice admin status} presents the token.
 */
class AdminReadAuthIT {
    private static final HttpClient HTTP = HttpClient.newHttpClient();
    private static final String ADMIN_TOKEN = "it-admin-" + java.util.UUID.randomUUID();

    private static HttpResponse<String> get(MetadataProcess m, String path, String token) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(m.adminUri(path));
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void aClusterRoleShowsMetricsAndStatusOnlyToATokenHolder() throws Exception {
        MetadataProcess m = MetadataProcess.single("read-auth", Map.of("SLUICE_ADMIN_TOKEN", ADMIN_TOKEN));
        m.start();
        try {
            // readiness is open to anyone (no token); it turns 200 once the group has elected its leader
            await("readiness, without a token").atMost(Duration.ofSeconds(60))
                    .pollInterval(Duration.ofMillis(100))
                    .until(() -> get(m, "/ready", null).statusCode() == 200);
            for (String path : List.of("/metrics", "/admin/status")) {
                HttpResponse<String> anonymous = get(m, path, null);
                assertEquals(401, anonymous.statusCode(), path + " without a token: " + anonymous.body());
                assertEquals("Bearer", anonymous.headers().firstValue("WWW-Authenticate").orElse(null));
                assertFalse(anonymous.body().contains("m1"), "nothing about the cluster: " + anonymous.body());
                assertEquals(401, get(m, path, "not-the-token").statusCode(), path + " with a wrong token");
                assertEquals(401, get(m, path, ProcessFixtures.READ_TOKEN + "x").statusCode(), "a longer token");
                assertEquals(200, get(m, path, ProcessFixtures.READ_TOKEN).statusCode(), path + " with the read token");
                assertEquals(200, get(m, path, ADMIN_TOKEN).statusCode(), path + " with the admin token");
            }
            assertTrue(get(m, "/admin/status", ProcessFixtures.READ_TOKEN).body().contains("\"m1\""));
            assertTrue(get(m, "/metrics", ProcessFixtures.READ_TOKEN).body().contains("jvm_"), "a Prometheus scrape");
            assertEquals(200, get(m, "/health", null).statusCode(), "liveness stays open");

            // the read token reads; it does not write
            HttpResponse<String> write = putKey(m, ProcessFixtures.READ_TOKEN);
            assertEquals(401, write.statusCode(), "an admin write with the read token: " + write.body());
            HttpResponse<String> admin = putKey(m, ADMIN_TOKEN);
            assertEquals(200, admin.statusCode(), "the same write with the admin token: " + admin.body());

            // the CLI: refused without a token, served with it
            String adminUrl = "http://127.0.0.1:" + m.adminPort;
            Cli refused = cli("admin", "status", "--admin-url", adminUrl);
            assertEquals(1, refused.exit(), refused.out());
            assertTrue(refused.out().contains("401"), refused.out());
            Path tokenFile = Files.createTempFile(SluiceProcess.itDir(), "read-token", "");
            Files.writeString(tokenFile, ProcessFixtures.READ_TOKEN + "\n");
            Cli served = cli("admin", "status", "--admin-url", adminUrl, "--token-file", tokenFile.toString());
            assertEquals(0, served.exit(), served.out());
            assertTrue(served.out().lines().anyMatch(l -> l.startsWith("metadata") && l.endsWith("leader")), served.out());
        } finally {
            m.stop();
        }
    }

    @Test
    void withoutATokenTheReadsAreClosedAndTheStartSaysWhy() throws Exception {
        MetadataProcess m = MetadataProcess.single("read-auth-none", Map.of("SLUICE_ADMIN_READ_TOKEN", ""));
        m.start();
        try {
            for (String path : List.of("/metrics", "/admin/status")) {
                HttpResponse<String> r = get(m, path, null);
                assertEquals(403, r.statusCode(), path + ": " + r.body());
                assertTrue(r.body().contains("sluice.admin.read-token"), r.body());
                assertEquals(403, get(m, path, "anything").statusCode(), "no token matches when none is set");
            }
            assertEquals(200, get(m, "/health", null).statusCode());
            String log = Files.readString(m.log());
            assertTrue(log.contains("GET /metrics and GET /admin/status will answer 403"), log);
        } finally {
            m.stop();
        }
    }

    @Test
    void readAuthOffOpensThemAgain() throws Exception {
        MetadataProcess m = MetadataProcess.single("read-auth-off", Map.of("SLUICE_ADMIN_READ_AUTH", "false"));
        m.start();
        try {
            assertEquals(200, get(m, "/metrics", null).statusCode());
            assertEquals(200, get(m, "/admin/status", null).statusCode());
        } finally {
            m.stop();
        }
    }

    private static HttpResponse<String> putKey(MetadataProcess m, String token) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(m.adminUri("/admin/access-keys"))
                .header("Authorization", "Bearer " + token).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"accessKey\":\"second-key\",\"secretKey\":"
                        + "\"s3cret-s3cret-s3cret\",\"admin\":true}")).build(), HttpResponse.BodyHandlers.ofString());
    }

    private record Cli(int exit, String out) {
    }

    private static Cli cli(String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-jar", SluiceProcess.jar()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().remove("SLUICE_ADMIN_TOKEN");
        pb.environment().remove("SLUICE_ADMIN_READ_TOKEN");
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the CLI returns");
        return new Cli(p.exitValue(), out);
    }
}
