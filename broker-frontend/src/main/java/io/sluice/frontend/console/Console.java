package io.sluice.frontend.console;

import static io.sluice.frontend.console.ConsoleHttp.cookie;
import static io.sluice.frontend.console.ConsoleHttp.cookies;
import static io.sluice.frontend.console.ConsoleHttp.csrf;
import static io.sluice.frontend.console.ConsoleHttp.done;
import static io.sluice.frontend.console.ConsoleHttp.form;
import static io.sluice.frontend.console.ConsoleHttp.page;
import static io.sluice.frontend.console.ConsoleHttp.parseQuery;
import static io.sluice.frontend.console.ConsoleHttp.redirect;
import static io.sluice.frontend.console.ConsoleHttp.response;
import static io.sluice.frontend.console.ConsoleHttp.unwrap;
import static io.sluice.frontend.console.ConsoleHttp.webjar;
import static io.sluice.frontend.console.Html.esc;

import io.sluice.common.SqsError;
import io.sluice.common.SqsException;
import io.sluice.frontend.auth.Authorizer;
import io.sluice.frontend.auth.CredentialStore;
import io.sluice.frontend.auth.Credentials;
import io.sluice.frontend.http.SqsRequestProcessor;
import io.sluice.frontend.service.SqsServices;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The web console ({@code /console} on the admin port): server-rendered pages over the same SQS actions, authorization
 * and rate limits as the API ({@link SqsRequestProcessor#invoke}), for a key signed in with its secret or for the
 * admin token. A session is an HttpOnly, SameSite=Strict cookie (Secure over TLS); every form that changes state
 * carries the session's CSRF token, and the sign-in form a token of its own (double-submit cookie), so another site can
 * neither act for a signed-in user nor sign a browser into someone else's session. Pages send a Content-Security-Policy
 * that allows scripts from the console itself only (the charts; no inline script) and no framing. A key sees and does
 * only what its rules allow (its queue list is ListQueues'); the cluster page is for admins (the admin token or a key
 * with the {@code *}/{@code *} rule).
 *
 * <p>This class routes a request, checks its origin, session and CSRF token, and signs in and out; the pages are
 * {@link QueueListPage}, {@link QueuePage} and {@link ClusterPage}, calling the API through {@link ConsoleApi}, with
 * {@link ConsoleHttp}'s responses.
 */
public final class Console {
    private static final Logger LOG = LoggerFactory.getLogger(Console.class);
    static final String SESSION_COOKIE = "sluice_console";
    static final String LOGIN_COOKIE = "sluice_console_login";

    /**
     * One request as the admin server hands it over; {@code remoteAddress} is the client's IP address (failed sign-ins
     * are counted per address).
     *
     * @param host      the request's {@code Host} header (null if none)
     * @param origin    its {@code Origin} header (null if none)
     * @param fetchSite its {@code Sec-Fetch-Site} header (null if none)
     */
    public record Request(String method, String path, String query, String cookieHeader, String contentType,
                          byte[] body, boolean tls, String remoteAddress, String host, String origin, String fetchSite) {
        public Request(String method, String path, String query, String cookieHeader, String contentType, byte[] body,
                       boolean tls, String remoteAddress) {
            this(method, path, query, cookieHeader, contentType, body, tls, remoteAddress, null, null, null);
        }
    }

    /** The answer; {@code headers} may repeat a name (Set-Cookie). */
    public record Response(int status, String contentType, byte[] body, List<Map.Entry<String, String>> headers) {
    }

    private final CredentialStore keys;
    private final SignInThrottle throttle;
    private final Predicate<String> adminToken;
    private final ConsoleSessions sessions;
    private final QueueHistory history;
    private final Predicate<String> adminKey;
    private final QueueListPage queueList;
    private final QueuePage queue;
    private final ClusterPage cluster;
    private final UsagePage usage;
    /** A queue page's forms by the last segment of their action ({@code /console/queues/<name>/<form>}). */
    private final Map<String, QueueForm> queueForms;

    /** A form posted on a queue's page. */
    @FunctionalInterface
    private interface QueueForm {
        CompletableFuture<Response> post(ConsoleSessions.Session s, String queue, Map<String, String> form);
    }

    /**
     * @param keys          the access keys and secrets a sign-in is checked against (the API's)
     * @param rules         the keys' rules
     * @param adminKey      whether a key has the admin rule ({@code *} on {@code *}) itself: the cluster page
     * @param adminToken    whether a presented string is the admin token (never true when none is configured)
     * @param clusterStatus the cluster status JSON ({@code /admin/status})
     * @param rebalance     what {@code POST /admin/rebalance} runs (a metadata write: it may block), for admins;
     *                      null where admin writes are disabled (no admin token configured)
     * @param work          where pages are built (never a backend's reply thread: building may wait for the catalog)
     * @param refreshSeconds how often pages reload their figures in place
     */
    public Console(SqsRequestProcessor sqs, SqsServices services, CredentialStore keys,
                   Authorizer rules, Predicate<String> adminKey, Predicate<String> adminToken,
                   Supplier<String> clusterStatus, LongSupplier clockMillis, QueueHistory history,
                   Function<byte[], String> rebalance, Executor work, int refreshSeconds) {
        this.adminKey = adminKey;
        this.history = history;
        this.keys = keys;
        this.adminToken = adminToken;
        this.sessions = new ConsoleSessions(clockMillis);
        this.throttle = new SignInThrottle(clockMillis);
        PageContext pages = new PageContext(new ConsoleApi(sqs, rules), services, history, this::nav, work,
                refreshSeconds);
        this.queueList = new QueueListPage(pages);
        this.queue = new QueuePage(pages);
        this.cluster = new ClusterPage(clusterStatus, rebalance, this::isAdmin, this::nav, refreshSeconds);
        this.usage = new UsagePage(sqs::usageByKey, clockMillis, this::isAdmin, this::nav, refreshSeconds);
        QueueForms forms = new QueueForms(pages, queue);
        this.queueForms = Map.ofEntries(Map.entry("attributes", forms::setAttributes),
                Map.entry("redrive", forms::redrive), Map.entry("cancel-redrive", forms::cancelRedrive),
                Map.entry("send", forms::send), Map.entry("purge", forms::purge),
                Map.entry("delete-queue", forms::deleteQueue), Map.entry("tag", forms::tag),
                Map.entry("untag", forms::untag), Map.entry("poll", forms::poll),
                Map.entry("delete-message", forms::deleteMessage), Map.entry("release-message", forms::releaseMessage));
    }

    /** Answers a request under {@code /console}; never on an event loop (it may wait for a catalog read). */
    public CompletableFuture<Response> handle(Request r) {
        try {
            return route(r).exceptionally(e -> errorPage(r, e));
        } catch (RuntimeException e) {
            return CompletableFuture.completedFuture(errorPage(r, e));
        }
    }

    private CompletableFuture<Response> route(Request r) {
        String path = r.path();
        boolean post = r.method().equals("POST");
        if (post && !sameOrigin(r)) {
            LOG.info("console {} from {} refused: posted from another origin ({}, {})", path, r.remoteAddress(),
                    r.origin(), r.fetchSite());
            return done(page(403, "Refused", null, "<p class=\"error\">This form was posted from another site."
                    + " Open the console itself and try again.</p>"));
        }
        if (path.equals("/console/static/console.css") && !post) {
            return done(response(200, "text/css; charset=utf-8", Html.CSS));
        }
        if (path.equals("/console/static/console.js") && !post) {
            return done(response(200, "text/javascript; charset=utf-8", Html.LIVE));
        }
        if (path.equals("/console/static/charts.js") && !post) {
            return done(response(200, "text/javascript; charset=utf-8", Html.CHARTS));
        }
        if (path.equals("/console/static/uplot.js") && !post) {
            return done(webjar("uPlot.iife.min.js", "text/javascript; charset=utf-8"));
        }
        if (path.equals("/console/static/uplot.css") && !post) {
            return done(webjar("uPlot.min.css", "text/css; charset=utf-8"));
        }
        if (path.equals("/console/login")) {
            return done(post ? login(r) : loginPage(r, null, 200));
        }
        Map<String, String> cookies = cookies(r.cookieHeader());
        ConsoleSessions.Session session = sessions.find(cookies.get(SESSION_COOKIE));
        if (session != null && !session.admin() && !ConsoleSessions.same(session.secretDigest(),
                keys.find(session.accessKeyId()).map(c -> ConsoleSessions.digest(c.secretAccessKey())).orElse(null))) {
            sessions.close(session.id()); // the key was removed, renamed away or given a new secret: sign in again
            session = null;
        }
        if (session == null) {
            return done(redirect("/console/login"));
        }
        history.used();
        Map<String, String> form = post ? form(r) : Map.of();
        if (post && !ConsoleSessions.same(form.get("csrf"), session.csrf())) {
            return done(page(403, "Refused", null, "<p class=\"error\">This form's CSRF token is missing or wrong."
                    + " Reload the page and try again.</p>"));
        }
        Map<String, String> query = parseQuery(r.query());
        if (path.equals("/console") || path.equals("/console/")) {
            return done(redirect("/console/queues"));
        }
        if (path.equals("/console/logout") && post) {
            sessions.close(session.id());
            Response out = redirect("/console/login");
            out.headers().add(Map.entry("Set-Cookie", cookie(SESSION_COOKIE, "", r.tls(), 0)));
            return done(out);
        }
        if (path.equals("/console/queues") && !post) {
            return queueList.queuesPage(session, query);
        }
        if (path.equals("/console/live/queues") && !post) {
            return queueList.queuesFragment(session, query);
        }
        if (path.startsWith("/console/live/history/") && !post) {
            return queue.chart(session, URLDecoder.decode(path.substring("/console/live/history/".length()),
                    StandardCharsets.UTF_8), query.get("range"));
        }
        if (path.startsWith("/console/live/queues/") && !post) {
            return queue.queueLive(session, URLDecoder.decode(path.substring("/console/live/queues/".length()),
                    StandardCharsets.UTF_8));
        }
        if (path.equals("/console/cluster") && !post) {
            return done(cluster.clusterPage(session, query.get("moved")));
        }
        if (path.equals("/console/usage") && !post) {
            return done(usage.usagePage(session));
        }
        if (path.equals("/console/live/usage") && !post) {
            return done(usage.usageLive(session));
        }
        if (path.equals("/console/live/cluster") && !post) {
            return done(cluster.clusterLive(session));
        }
        if (path.equals("/console/cluster/rebalance") && post) {
            return done(cluster.rebalance(session, form));
        }
        if (path.equals("/console/queues/create") && post) {
            return queueList.create(session, form);
        }
        if (path.startsWith("/console/queues/")) {
            String rest = path.substring("/console/queues/".length());
            String[] parts = rest.split("/", 2);
            String name = URLDecoder.decode(parts[0], StandardCharsets.UTF_8);
            if (parts.length == 1 && !post) {
                return queue.queuePage(session, name, query.get("done"), null, "1".equals(query.get("peek")));
            }
            QueueForm action = parts.length == 2 && post ? queueForms.get(parts[1]) : null;
            if (action != null) {
                return action.post(session, name, form);
            }
        }
        return done(page(404, "Not found", nav(session), "<p>No such page.</p>"));
    }

    /**
     * Whether a POST comes from the console's own pages. Cookies ignore ports, and browsers count every port of a host
     * as one site (SameSite), so a page served from another port of the same host can set the console's cookies and
     * post its forms — the sign-in form too, with a CSRF cookie it set itself (login CSRF by cookie tossing: issue
     * 42). A browser says where a post comes from: {@code Sec-Fetch-Site}, which a page cannot set, must be
     * {@code same-origin} (or {@code none}: typed by the user); a browser without it must send an {@code Origin} naming
     * this scheme, host and port, or {@code null} (the console's pages send no referrer, so a browser may send
     * {@code Origin: null} for their own forms). A request with neither (a non-browser client) is not a browser's
     * cross-site post.
     */
    static boolean sameOrigin(Request r) {
        if (r.fetchSite() != null) {
            return r.fetchSite().equals("same-origin") || r.fetchSite().equals("none");
        }
        if (r.origin() == null || r.origin().equals("null")) {
            return true;
        }
        return r.host() != null && r.origin().equalsIgnoreCase((r.tls() ? "https://" : "http://") + r.host());
    }

    // ---- sign-in ----

    private Response loginPage(Request r, String problem, int status) {
        String token = ConsoleSessions.randomToken();
        String body = (problem == null ? "" : "<p class=\"error\">" + esc(problem) + "</p>")
                + "<div class=\"card\"><form method=\"post\" action=\"/console/login\">"
                + "<input type=\"hidden\" name=\"csrf\" value=\"" + token + "\">"
                + "<p><label for=\"access_key\">Access key</label><input id=\"access_key\" name=\"access_key\""
                + " autocomplete=\"username\"></p>"
                + "<p><label for=\"secret_key\">Secret key</label><input id=\"secret_key\" name=\"secret_key\""
                + " type=\"password\" autocomplete=\"current-password\"></p>"
                + "<p class=\"muted\">or</p>"
                + "<p><label for=\"token\">Admin token</label><input id=\"token\" name=\"token\" type=\"password\"></p>"
                + "<p><button id=\"sign-in\" type=\"submit\">Sign in</button></p></form></div>";
        Response out = page(status, "Sign in", null, body);
        out.headers().add(Map.entry("Set-Cookie", cookie(LOGIN_COOKIE, token, r.tls(), -1)));
        return out;
    }

    private Response login(Request r) {
        Map<String, String> form = form(r);
        if (!ConsoleSessions.same(form.get("csrf"), cookies(r.cookieHeader()).get(LOGIN_COOKIE))) {
            return loginPage(r, "The sign-in form expired. Try again.", 403);
        }
        long blocked = throttle.blockedForMillis(r.remoteAddress());
        if (blocked > 0) {
            LOG.info("console sign-in refused for {}: too many failures from it", r.remoteAddress());
            Response out = loginPage(r, "Too many failed sign-ins from your address. Wait a minute and try again.", 429);
            out.headers().add(Map.entry("Retry-After", Long.toString((blocked + 999) / 1000)));
            return out;
        }
        String key = form.getOrDefault("access_key", "").trim();
        String secret = form.getOrDefault("secret_key", "");
        String token = form.getOrDefault("token", "");
        ConsoleSessions.Session session = null;
        if (!token.isEmpty()) {
            if (adminToken.test(token)) {
                session = sessions.open(null, null);
            }
        } else if (!key.isEmpty() && !secret.isEmpty()) {
            Optional<Credentials> known = keys.find(key);
            if (known.isPresent() && ConsoleSessions.same(known.get().secretAccessKey(), secret)) {
                session = sessions.open(key, ConsoleSessions.digest(secret));
            }
        }
        if (session == null) {
            throttle.failed(r.remoteAddress());
            LOG.info("console sign-in from {} refused for {}", r.remoteAddress(), !token.isEmpty() ? "an admin token"
                    : key.matches("[A-Za-z0-9._-]{1,128}") ? "access key " + key : "a malformed access key");
            return loginPage(r, "Sign-in refused: wrong access key, secret or token.", 401);
        }
        LOG.info("console sign-in: {}", session.principal());
        Response out = redirect("/console/queues");
        out.headers().add(Map.entry("Set-Cookie", cookie(SESSION_COOKIE, session.id(), r.tls(), -1)));
        out.headers().add(Map.entry("Set-Cookie", cookie(LOGIN_COOKIE, "", r.tls(), 0)));
        return out;
    }

    // ---- pages ----

    private boolean isAdmin(ConsoleSessions.Session s) {
        return s.admin() || adminKey.test(s.accessKeyId());
    }

    private String nav(ConsoleSessions.Session s) {
        return "<a href=\"/console/queues\">Queues</a><a href=\"/console/usage\">Usage</a>"
                + (isAdmin(s) ? "<a href=\"/console/cluster\">Cluster</a>" : "")
                + "<form method=\"post\" action=\"/console/logout\">" + csrf(s)
                + "<span class=\"who\">" + esc(s.principal()) + "</span> <button id=\"sign-out\" type=\"submit\">"
                + "Sign out</button></form>";
    }

    private Response errorPage(Request r, Throwable e) {
        Throwable cause = unwrap(e);
        if (cause instanceof SqsException sqsError) {
            int status = sqsError.failure().error() == SqsError.ACCESS_DENIED ? 403 : 400;
            ConsoleSessions.Session s = sessions.find(cookies(r.cookieHeader()).get(SESSION_COOKIE));
            return page(status, status == 403 ? "Access denied" : "Refused", s == null ? null : nav(s),
                    "<p class=\"error\" id=\"problem\">" + esc(sqsError.failure().error().queryCode() + ": "
                            + sqsError.failure().message())
                            + "</p><p><a href=\"/console/queues\">All queues</a></p>");
        }
        LOG.warn("console request {} {} failed", r.method(), r.path(), cause);
        return page(500, "Error", null, "<p class=\"error\">The request failed; the node's log has the details.</p>");
    }

}
