package io.sluice.frontend.console;

import io.sluice.frontend.console.Console.Request;
import io.sluice.frontend.console.Console.Response;
import io.sluice.frontend.protocol.QueryParameters;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * The console's HTTP plumbing: pages with their security headers (CSP, no framing, no referrer, no caching), redirects,
 * the uPlot webjar's files, session cookies, and form and query decoding. Static helpers only.
 */
final class ConsoleHttp {
    private static final String HTML = "text/html; charset=utf-8";

    private ConsoleHttp() {
    }

    static CompletableFuture<Response> done(Response r) {
        return CompletableFuture.completedFuture(r);
    }

    static Response page(int status, String title, String nav, String body) {
        return response(status, HTML, Html.page(title, nav, body));
    }

    static Response response(int status, String type, String body) {
        List<Map.Entry<String, String>> headers = new ArrayList<>(List.of(
                Map.entry("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self';"
                        + " img-src 'self'; connect-src 'self';"
                        + " form-action 'self'; frame-ancestors 'none'; base-uri 'none'"),
                Map.entry("X-Frame-Options", "DENY"), Map.entry("X-Content-Type-Options", "nosniff"),
                Map.entry("Referrer-Policy", "no-referrer"), Map.entry("Cache-Control", "no-store")));
        return new Response(status, type, body.getBytes(StandardCharsets.UTF_8), headers);
    }

    /** A file of the uPlot webjar (on the classpath: the console works offline, no CDN). */
    static Response webjar(String file, String type) {
        String path = "META-INF/resources/webjars/uplot/" + UPLOT_VERSION + "/dist/" + file;
        try (InputStream in = ConsoleHttp.class.getClassLoader().getResourceAsStream(path)) {
            if (in == null) {
                return response(404, "text/plain; charset=utf-8", "not found\n");
            }
            Response r = new Response(200, type, in.readAllBytes(), new ArrayList<>());
            r.headers().add(Map.entry("Cache-Control", "max-age=86400"));
            r.headers().add(Map.entry("X-Content-Type-Options", "nosniff"));
            return r;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The uPlot webjar's version (its resources' folder); the pom's uplot.version. */
    static final String UPLOT_VERSION = "1.6.30";

    static Response redirect(String location) {
        Response r = response(303, "text/plain; charset=utf-8", "");
        r.headers().add(Map.entry("Location", location));
        return r;
    }

    /** A cookie scoped to the console; maxAge 0 deletes it, -1 makes it last for the browser session. */
    static String cookie(String name, String value, boolean tls, int maxAge) {
        return name + "=" + value + "; Path=/console; HttpOnly; SameSite=Strict" + (tls ? "; Secure" : "")
                + (maxAge >= 0 ? "; Max-Age=" + maxAge : "");
    }

    static Map<String, String> cookies(String header) {
        Map<String, String> out = new LinkedHashMap<>();
        if (header == null) {
            return out;
        }
        for (String part : header.split(";")) {
            int eq = part.indexOf('=');
            if (eq > 0) {
                out.putIfAbsent(part.substring(0, eq).trim(), part.substring(eq + 1).trim());
            }
        }
        return out;
    }

    /** A form post's fields, decoded as the Query protocol's are (strict UTF-8, bounded, first value wins). */
    static Map<String, String> form(Request r) {
        String type = r.contentType() == null ? "" : r.contentType().toLowerCase(Locale.ROOT);
        if (!type.startsWith("application/x-www-form-urlencoded") || r.body() == null) {
            return Map.of();
        }
        return QueryParameters.decode(null, r.body(), type);
    }

    static Map<String, String> parseQuery(String query) {
        return QueryParameters.decode(query, new byte[0], null);
    }

    static Throwable unwrap(Throwable e) {
        while ((e instanceof CompletionException || e instanceof ExecutionException)
                && e.getCause() != null) {
            e = e.getCause();
        }
        return e;
    }

    static String csrf(ConsoleSessions.Session s) {
        return "<input type=\"hidden\" name=\"csrf\" value=\"" + s.csrf() + "\">";
    }
}
