package io.sluice.server;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.sluice.metadata.raft.MetadataUnavailableException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * How the admin port answers a write its handler could not do: 400 for a body it refused, 503 (retry later) when the
 * catalog could not take it now, 500 otherwise; the reason is JSON even when it holds quotes.
 */
class AdminWritesTest {
    private static final String TOKEN = "writer-token-1";

    @Test
    void aRefusedWriteAnswersByWhyItWasRefused() throws Exception {
        Map<String, Function<byte[], String>> posts = Map.of(
                "/admin/ok", body -> "{\"status\":\"OK\"}",
                "/admin/bad", body -> {
                    throw new IllegalArgumentException("accessKey and \"secretKey\" are required");
                },
                "/admin/busy", body -> {
                    throw new MetadataUnavailableException("metadata write failed: no leader", null);
                },
                "/admin/broken", body -> {
                    throw new NullPointerException("a bug");
                });
        AdminAccess access = AdminAccess.configured(ServerConfig.load(null, Map.of("SLUICE_ADMIN_TOKEN", TOKEN), Map.of()));
        AdminServer server = new AdminServer(new PrometheusMeterRegistry(PrometheusConfig.DEFAULT), () -> true,
                () -> true, () -> "{}", posts, access);
        InetSocketAddress address = server.start("127.0.0.1", 0, null);
        try {
            HttpClient http = HttpClient.newHttpClient();
            Function<String, HttpResponse<String>> post = path -> {
                try {
                    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + address.getPort() + path))
                            .header("Authorization", "Bearer " + TOKEN).header("Content-Type", "application/json")
                            .POST(HttpRequest.BodyPublishers.ofString("{}")).build(), HttpResponse.BodyHandlers.ofString());
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            };
            assertEquals(200, post.apply("/admin/ok").statusCode());
            HttpResponse<String> bad = post.apply("/admin/bad");
            assertEquals(400, bad.statusCode(), bad.body());
            assertEquals("{\"error\":\"accessKey and \\\"secretKey\\\" are required\"}", bad.body());
            HttpResponse<String> busy = post.apply("/admin/busy");
            assertEquals(503, busy.statusCode(), busy.body());
            assertEquals("{\"error\":\"metadata write failed: no leader\"}", busy.body());
            assertEquals(500, post.apply("/admin/broken").statusCode());
        } finally {
            server.close();
        }
    }
}
