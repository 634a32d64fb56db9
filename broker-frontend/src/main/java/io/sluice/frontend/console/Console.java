package io.sluice.frontend.console;

import static io.sluice.frontend.console.Html.esc;
import static io.sluice.frontend.console.Html.url;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sluice.common.SqsError;
import io.sluice.common.SqsException;
import io.sluice.common.validation.QueueAttributeName;
import io.sluice.frontend.auth.Authorizer;
import io.sluice.frontend.auth.CredentialStore;
import io.sluice.frontend.auth.Credentials;
import io.sluice.frontend.http.SqsRequestProcessor;
import io.sluice.frontend.protocol.QueryParameters;
import io.sluice.frontend.service.SqsServices;
import io.sluice.partition.PeekedMessage;
import io.sluice.partition.StoredMessage;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
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
 * that allows scripts from the console itself only (the charts; no inline script) and no framing. A key sees and does only what its rules allow (its queue list is
 * ListQueues'); the cluster page is for admins (the admin token or a key with the {@code *}/{@code *} rule).
 */
public final class Console {
    private static final Logger LOG = LoggerFactory.getLogger(Console.class);
    static final String SESSION_COOKIE = "sluice_console";
    static final String LOGIN_COOKIE = "sluice_console_login";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String HTML = "text/html; charset=utf-8";

    /**
     * One request as the admin server hands it over; {@code remoteAddress} is the client's IP address (failed sign-ins
     * are counted per address).
     */
    /**
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

    private final SqsRequestProcessor sqs;
    private final SqsServices services;
    private final CredentialStore keys;
    private final SignInThrottle throttle;
    private final Authorizer rules;
    private final Predicate<String> adminToken;
    private final Supplier<String> clusterStatus;
    private final ConsoleSessions sessions;
    private final QueueHistory history;
    private final Function<byte[], String> rebalance;
    private final Predicate<String> adminKey;
    private final Executor work;

    /**
     * @param keys          the access keys and secrets a sign-in is checked against (the API's)
     * @param rules         the keys' rules
     * @param adminKey      whether a key has the admin rule ({@code *} on {@code *}) itself: the cluster page
     * @param adminToken    whether a presented string is the admin token (never true when none is configured)
     * @param clusterStatus the cluster status JSON ({@code /admin/status})
     * @param rebalance     what {@code POST /admin/rebalance} runs (a metadata write: it may block), for admins;
     *                      null where admin writes are disabled (no admin token configured)
     * @param work          where pages are built (never a backend's reply thread: building may wait for the catalog)
     */
    public Console(SqsRequestProcessor sqs, SqsServices services, CredentialStore keys,
                   Authorizer rules, Predicate<String> adminKey, Predicate<String> adminToken,
                   Supplier<String> clusterStatus, LongSupplier clockMillis, QueueHistory history,
                   Function<byte[], String> rebalance, Executor work) {
        this.adminKey = adminKey;
        this.work = work;
        this.history = history;
        this.rebalance = rebalance;
        this.sqs = sqs;
        this.services = services;
        this.keys = keys;
        this.rules = rules;
        this.adminToken = adminToken;
        this.clusterStatus = clusterStatus;
        this.sessions = new ConsoleSessions(clockMillis);
        this.throttle = new SignInThrottle(clockMillis);
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
            return queuesPage(session, query);
        }
        if (path.equals("/console/cluster") && !post) {
            return done(clusterPage(session, query.get("moved")));
        }
        if (path.equals("/console/cluster/rebalance") && post) {
            return done(rebalance(session, form));
        }
        if (path.startsWith("/console/queues/")) {
            String rest = path.substring("/console/queues/".length());
            String[] parts = rest.split("/", 2);
            String name = URLDecoder.decode(parts[0], StandardCharsets.UTF_8);
            if (parts.length == 1 && !post) {
                return queuePage(session, name, query.get("done"), null, "1".equals(query.get("peek")));
            }
            if (parts.length == 2 && post && parts[1].equals("attributes")) {
                return setAttributes(session, name, form);
            }
            if (parts.length == 2 && post && parts[1].equals("redrive")) {
                return redrive(session, name, form);
            }
            if (parts.length == 2 && post && parts[1].equals("cancel-redrive")) {
                return cancelRedrive(session, name, form);
            }
            if (parts.length == 2 && post && parts[1].equals("send")) {
                return send(session, name, form);
            }
            if (parts.length == 2 && post && parts[1].equals("purge")) {
                return purge(session, name, form);
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

    // ---- queues ----

    /** One row of the queue list. */
    private record Row(String name, String url, Map<String, String> attributes) {
        long num(String attribute) {
            try {
                return Long.parseLong(attributes.getOrDefault(attribute, "0"));
            } catch (NumberFormatException e) {
                return 0;
            }
        }
    }

    /** Queues one list page shows (each costs a count query per partition on every 10 s refresh). */
    static final int LIST_LIMIT = 200;

    private static final List<String> LIST_ATTRIBUTES = List.of("All", "SluicePartitions",
            "SluiceApproximateAgeOfOldestMessage");

    private CompletableFuture<Response> queuesPage(ConsoleSessions.Session s, Map<String, String> query) {
        String filter = query.getOrDefault("filter", "");
        ObjectNode list = JsonNodeFactory.instance.objectNode().put("MaxResults", LIST_LIMIT);
        if (!filter.isEmpty()) {
            list.put("QueueNamePrefix", filter);
        }
        boolean[] more = {false};
        return call(s, "ListQueues", list).thenCompose(out -> {
            more[0] = out.hasNonNull("NextToken");
            List<CompletableFuture<Row>> rows = new ArrayList<>();
            for (JsonNode u : out.path("QueueUrls")) {
                String url = u.asText();
                rows.add(attributes(s, url).handle((a, e) -> new Row(url.substring(url.lastIndexOf('/') + 1), url,
                        e == null ? a : Map.of())));
            }
            return CompletableFuture.allOf(rows.toArray(CompletableFuture[]::new))
                    .thenApply(v -> rows.stream().map(CompletableFuture::join).toList());
        }).thenApplyAsync(rows -> {
            String sort = query.getOrDefault("sort", "name");
            boolean capped = more[0];
            Comparator<Row> order = switch (sort) {
                case "visible" -> Comparator.comparingLong((Row w) -> -w.num("ApproximateNumberOfMessages"));
                case "inflight" -> Comparator.comparingLong((Row w) -> -w.num("ApproximateNumberOfMessagesNotVisible"));
                case "delayed" -> Comparator.comparingLong((Row w) -> -w.num("ApproximateNumberOfMessagesDelayed"));
                case "age" -> Comparator.comparingLong((Row w) -> -w.num("SluiceApproximateAgeOfOldestMessage"));
                default -> Comparator.comparing(Row::name);
            };
            Map<String, List<String>> sources = new LinkedHashMap<>();
            for (Row row : rows) {
                String target = deadLetterTarget(row.attributes());
                if (target != null) {
                    sources.computeIfAbsent(target, k -> new ArrayList<>()).add(row.name());
                }
            }
            StringBuilder b = new StringBuilder();
            b.append("<form class=\"inline\" method=\"get\" action=\"/console/queues\"><div><label for=\"filter\">")
                    .append("Name starts with</label><input id=\"filter\" name=\"filter\" value=\"").append(esc(filter))
                    .append("\"></div><input type=\"hidden\" name=\"sort\" value=\"").append(esc(sort))
                    .append("\"><button type=\"submit\">Filter</button></form>");
            b.append("<p class=\"muted\">").append(rows.size()).append(rows.size() == 1 ? " queue" : " queues")
                    .append(", refreshed every 10 s.</p><div class=\"scroll\"><table id=\"queues\"><thead><tr>")
                    .append(th("Name", "name", filter, false)).append("<th class=\"opt\">Type</th>")
                    .append("<th class=\"num opt\">Partitions</th>")
                    .append(th("Visible", "visible", filter, true)).append(th("In flight", "inflight", filter, true))
                    .append(th("Delayed", "delayed", filter, true)).append(th("Oldest (s)", "age", filter, true))
                    .append("<th class=\"num opt\">Sent/s</th><th class=\"num opt\">Received/s</th>")
                    .append("<th class=\"opt\">Dead-letter target</th><th class=\"opt\">Dead-letter sources</th>")
                    .append("</tr></thead><tbody>");
            for (Row row : rows.stream().sorted(order).toList()) {
                Map<String, String> a = row.attributes();
                b.append("<tr><td class=\"wrap\"><a href=\"/console/queues/").append(url(row.name())).append("\">")
                        .append(esc(row.name())).append("</a></td><td class=\"opt\">")
                        .append(row.name().endsWith(".fifo") ? "FIFO" : "standard").append("</td><td class=\"num opt\">")
                        .append(esc(a.getOrDefault("SluicePartitions", "1"))).append("</td><td class=\"num\">")
                        .append(esc(a.getOrDefault("ApproximateNumberOfMessages", "?"))).append("</td><td class=\"num\">")
                        .append(esc(a.getOrDefault("ApproximateNumberOfMessagesNotVisible", "?")))
                        .append("</td><td class=\"num\">")
                        .append(esc(a.getOrDefault("ApproximateNumberOfMessagesDelayed", "?")))
                        .append("</td><td class=\"num\">")
                        .append(esc(a.getOrDefault("SluiceApproximateAgeOfOldestMessage", "?")))
                        .append("</td>").append(rateCells(row.name()))
                        .append("<td class=\"opt wrap\">").append(esc(Optional.ofNullable(deadLetterTarget(a))
                                .orElse(""))).append("</td><td class=\"opt wrap\">")
                        .append(esc(String.join(", ", sources.getOrDefault(row.name(), List.of()))))
                        .append("</td></tr>");
            }
            b.append("</tbody></table></div>");
            if (capped) {
                b.append("<p class=\"muted\">Showing the first ").append(LIST_LIMIT)
                        .append(" queues by name: filter by a prefix to see others.</p>");
            }
            return page(200, "Queues", nav(s), 10, b.toString());
        }, work);
    }

    /** The queue's sent and received rates over the last 10 s (from this node's samples), blank when not known. */
    private String rateCells(String queue) {
        float[] r = services.catalog().get(queue).map(q -> history.rates(q.queueId())).orElse(null);
        return r == null ? "<td class=\"num opt\"></td><td class=\"num opt\"></td>"
                : String.format(Locale.ROOT, "<td class=\"num opt\">%.1f</td><td class=\"num opt\">%.1f</td>",
                        r[0], r[1]);
    }

    private static String th(String label, String key, String filter, boolean numeric) {
        return "<th" + (numeric ? " class=\"num\"" : "") + "><a href=\"/console/queues?sort=" + key
                + (filter.isEmpty() ? "" : "&amp;filter=" + esc(url(filter))) + "\">" + esc(label) + "</a></th>";
    }

    /** The dead-letter queue's name from a RedrivePolicy, or null. */
    private static String deadLetterTarget(Map<String, String> attributes) {
        String policy = attributes.get("RedrivePolicy");
        if (policy == null || policy.isEmpty()) {
            return null;
        }
        try {
            String arn = JSON.readTree(policy).path("deadLetterTargetArn").asText("");
            return arn.isEmpty() ? null : arn.substring(arn.lastIndexOf(':') + 1);
        } catch (IOException e) {
            return null;
        }
    }

    private CompletableFuture<Map<String, String>> attributes(ConsoleSessions.Session s, String queueUrl) {
        ObjectNode req = JsonNodeFactory.instance.objectNode().put("QueueUrl", queueUrl);
        LIST_ATTRIBUTES.forEach(req.putArray("AttributeNames")::add);
        return call(s, "GetQueueAttributes", req).thenApply(out -> {
            Map<String, String> values = new TreeMap<>();
            out.path("Attributes").fields().forEachRemaining(e -> values.put(e.getKey(), e.getValue().asText()));
            return values;
        });
    }

    private CompletableFuture<String> queueUrl(ConsoleSessions.Session s, String name) {
        return call(s, "GetQueueUrl", JsonNodeFactory.instance.objectNode().put("QueueName", name))
                .thenApply(out -> out.path("QueueUrl").asText());
    }

    private static final Map<String, String> DONE = Map.of("sent", "Message sent.", "purged", "Queue purged.",
            "attributes", "Attributes saved.", "redrive", "Redrive started.", "cancelled", "Redrive cancelled.");

    /** What a queue's page shows besides its attributes, read before it is rendered. */
    private record Extras(List<PeekedMessage> peeked, List<String> sources, JsonNode tasks) {
    }

    private CompletableFuture<Response> queuePage(ConsoleSessions.Session s, String name, String done,
                                                  String problem) {
        return queuePage(s, name, done, problem, false);
    }

    private CompletableFuture<Response> queuePage(ConsoleSessions.Session s, String name, String done,
                                                  String problem, boolean peek) {
        return queueUrl(s, name).thenCompose(url -> attributes(s, url).thenCompose(a -> extras(s, name, url,
                a.get("QueueArn"), peek).thenApplyAsync(x -> render(s, name, done, problem, a, x, peek), work)));
    }

    private CompletableFuture<Extras> extras(ConsoleSessions.Session s, String name, String url, String arn,
                                             boolean peek) {
        CompletableFuture<List<PeekedMessage>> peeked = peek
                ? (allowed(s, "ReceiveMessage", name) ? services.peek(name, 10)
                        : CompletableFuture.failedFuture(new SqsException(SqsError.ACCESS_DENIED,
                                "Access to the resource is denied.")))
                : CompletableFuture.completedFuture(null);
        CompletableFuture<List<String>> sources = call(s, "ListDeadLetterSourceQueues",
                JsonNodeFactory.instance.objectNode().put("QueueUrl", url)).handle((out, e) -> {
                    List<String> names = new ArrayList<>();
                    if (e == null) {
                        out.path("queueUrls").forEach(u -> names.add(u.asText().substring(u.asText().lastIndexOf('/') + 1)));
                    }
                    return names; // a key that may not list them sees no dead-letter section
                });
        CompletableFuture<JsonNode> tasks = arn == null ? CompletableFuture.completedFuture(null)
                : call(s, "ListMessageMoveTasks", JsonNodeFactory.instance.objectNode().put("SourceArn", arn)
                        .put("MaxResults", 10)).handle((out, e) -> e == null ? out.path("Results") : null);
        return peeked.thenCompose(p -> sources.thenCombine(tasks, (so, t) -> new Extras(p, so, t)));
    }

    private boolean allowed(ConsoleSessions.Session s, String action, String queue) {
        return s.admin() || rules.isAllowed(s.accessKeyId(), action, queue);
    }

    private Response render(ConsoleSessions.Session s, String name, String done, String problem,
                            Map<String, String> a, Extras x, boolean peeking) {
        {
            StringBuilder b = new StringBuilder();
            if (problem != null) {
                b.append("<p class=\"error\" id=\"problem\">").append(esc(problem)).append("</p>");
            } else if (done != null && DONE.containsKey(done)) {
                b.append("<p class=\"flash\" id=\"done\">").append(DONE.get(done)).append("</p>");
            }
            b.append("<p><a href=\"/console/queues\">All queues</a></p>");
            String samples = services.catalog().get(name).map(q -> history.json(q.queueId())).orElse(null);
            b.append("<h2>Last hour</h2>");
            if (samples == null) {
                b.append("<p class=\"muted\" id=\"no-history\">No samples yet (every ")
                        .append(QueueHistory.EVERY_SECONDS).append(" s; at most the first queues by name are kept).</p>");
            } else {
                b.append("<div class=\"charts\"><div id=\"depth-chart\"></div><div id=\"age-chart\"></div>")
                        .append("<div id=\"rate-chart\"></div></div>")
                        .append("<script type=\"application/json\" id=\"history-data\">").append(samples)
                        .append("</script><script src=\"/console/static/uplot.js\"></script>")
                        .append("<script src=\"/console/static/charts.js\"></script>");
            }
            b.append("<h2>Attributes</h2><div class=\"scroll\"><table id=\"attributes\"><tbody>");
            a.forEach((k, v) -> b.append("<tr><th>").append(esc(k)).append("</th><td class=\"wrap\" id=\"attr-")
                    .append(esc(k)).append("\">").append(esc(v)).append("</td></tr>"));
            b.append("</tbody></table></div>");
            String action = "/console/queues/" + url(name);
            boolean fifo = name.endsWith(".fifo");
            b.append("<h2>Next messages</h2>");
            if (x.peeked() == null) {
                b.append("<p><a id=\"peek\" href=\"").append(action).append("?peek=1\">Peek at the next 10</a>")
                        .append(" <span class=\"muted\">(read only: nothing is leased, receive counts stay)</span></p>");
            } else {
                b.append(peekTable(x.peeked()));
            }
            boolean deadLetterQueue = !x.sources().isEmpty() || (x.tasks() != null && x.tasks().size() > 0);
            boolean running = false;
            if (deadLetterQueue) {
                b.append("<h2>Dead-letter queue</h2><p>Sources: <span id=\"dlq-sources\">")
                        .append(esc(String.join(", ", x.sources()))).append("</span></p>");
                if (x.tasks() != null && x.tasks().size() > 0) {
                    b.append("<div class=\"scroll\"><table id=\"redrives\"><thead><tr><th>Started</th><th>Status</th>")
                            .append("<th class=\"num\">Moved</th><th class=\"num\">To move</th><th>Destination</th>")
                            .append("<th></th></tr></thead><tbody>");
                    for (JsonNode t : x.tasks()) {
                        String status = t.path("Status").asText();
                        running |= status.equals("RUNNING");
                        b.append("<tr><td>").append(esc(Instant.ofEpochMilli(t.path("StartedTimestamp")
                                        .asLong()).toString())).append("</td><td class=\"status\">").append(esc(status))
                                .append(t.has("FailureReason") ? " (" + esc(t.path("FailureReason").asText()) + ")" : "")
                                .append("</td><td class=\"num moved\">").append(t.path("ApproximateNumberOfMessagesMoved")
                                        .asLong()).append("</td><td class=\"num\">")
                                .append(t.path("ApproximateNumberOfMessagesToMove").asLong()).append("</td><td class=\"wrap\">")
                                .append(esc(t.path("DestinationArn").asText("the original sources"))).append("</td><td>");
                        if (status.equals("RUNNING") && t.has("TaskHandle")) {
                            b.append("<form method=\"post\" action=\"").append(action).append("/cancel-redrive\">")
                                    .append(csrf(s)).append("<input type=\"hidden\" name=\"task\" value=\"")
                                    .append(esc(t.path("TaskHandle").asText())).append("\"><button class=\"danger\"")
                                    .append(" id=\"cancel-redrive\" type=\"submit\">Cancel</button></form>");
                        }
                        b.append("</td></tr>");
                    }
                    b.append("</tbody></table></div>");
                }
                if (!running) {
                    b.append("<div class=\"card\"><form method=\"post\" action=\"").append(action)
                            .append("/redrive\">").append(csrf(s)).append("<p>Move this queue's messages back to the")
                            .append(" queues they came from.</p><p><label for=\"rate\">At most this many per second")
                            .append(" (empty: as fast as it goes)</label><input id=\"rate\" name=\"rate\"")
                            .append(" inputmode=\"numeric\"></p><button id=\"redrive\" type=\"submit\">Start")
                            .append(" redrive</button></form></div>");
                }
            }
            b.append("<h2>Edit attributes</h2><div class=\"card\"><form method=\"post\" action=\"").append(action)
                    .append("/attributes\">").append(csrf(s));
            for (QueueAttributeName n : QueueAttributeName
                    .values()) {
                if (!n.settable() || (n.fifoOnly() && !fifo) || n.wireName().equals("FifoQueue")) {
                    continue;
                }
                String id = "set-" + n.wireName();
                String value = esc(a.getOrDefault(n.wireName(), ""));
                boolean json = n.wireName().startsWith("Redrive") || n.wireName().equals("Policy")
                        || n.wireName().equals("SluiceRedeliveryBackoff");
                b.append("<p><label for=\"").append(id).append("\">").append(n.wireName()).append("</label>")
                        // a parser drops one newline right after <textarea>: this one, never the value's own
                        .append(json ? "<textarea id=\"" + id + "\" name=\"" + n.wireName() + "\">\n" + value
                                + "</textarea>" : "<input id=\"" + id + "\" name=\"" + n.wireName() + "\" value=\""
                                + value + "\" size=\"40\">")
                        .append("<input type=\"hidden\" name=\"was-").append(n.wireName()).append("\" value=\"")
                        .append(value).append("\"></p>");
            }
            b.append("<button id=\"save-attributes\" type=\"submit\">Save</button></form></div>");
            b.append("<h2>Send a test message</h2><div class=\"card\"><form method=\"post\" action=\"").append(action)
                    .append("/send\">").append(csrf(s)).append("<p><label for=\"body\">Body</label>")
                    .append("<textarea id=\"body\" name=\"body\"></textarea></p>");
            if (fifo) {
                b.append("<p><label for=\"group\">Message group id</label><input id=\"group\" name=\"group\"></p>")
                        .append("<p><label for=\"dedup\">Deduplication id (optional with content-based")
                        .append(" deduplication)</label><input id=\"dedup\" name=\"dedup\"></p>");
            }
            b.append("<button id=\"send\" type=\"submit\">Send</button></form></div>");
            b.append("<h2>Purge</h2><div class=\"card\"><form method=\"post\" action=\"").append(action)
                    .append("/purge\">").append(csrf(s)).append("<p>Deletes every message in the queue. Type the")
                    .append(" queue's name to confirm.</p><p><label for=\"confirm\">Queue name</label>")
                    .append("<input id=\"confirm\" name=\"confirm\" autocomplete=\"off\"></p>")
                    .append("<button id=\"purge\" class=\"danger\" type=\"submit\">Purge</button></form></div>");
            // while a redrive runs the page follows its progress
            // a page with a peek or a problem does not reload (a reload would peek again, or re-post nothing)
            return page(problem == null ? 200 : 400, name, nav(s), running && !peeking && problem == null ? 2 : 0,
                    b.toString());
        }
    }

    private static String peekTable(List<PeekedMessage> peeked) {
        if (peeked.isEmpty()) {
            return "<p id=\"peeked-none\">No message is visible now.</p>";
        }
        StringBuilder b = new StringBuilder("<div class=\"scroll\"><table id=\"peeked\"><thead><tr><th>Message id</th>"
                + "<th>Sent</th><th class=\"num\">Receives</th><th>Group</th><th>From (dead-letter source)</th>"
                + "<th>Dead-lettered because</th><th>Body</th></tr></thead><tbody>");
        for (PeekedMessage p : peeked) {
            var m = p.message();
            String body = m.body().length() > 500 ? m.body().substring(0, 500) + "…" : m.body();
            b.append("<tr><td class=\"wrap\">").append(esc(m.messageId())).append("</td><td>")
                    .append(esc(Instant.ofEpochMilli(m.sentTimestampMillis()).toString()))
                    .append("</td><td class=\"num receives\">").append(p.receiveCount()).append("</td><td>")
                    .append(esc(m.groupId())).append("</td><td class=\"wrap\">").append(esc(m.deadLetterSourceArn()))
                    .append("</td><td class=\"reason\">").append(esc(reason(m))).append("</td><td class=\"wrap body\">")
                    .append(esc(body)).append("</td></tr>");
        }
        return b.append("</tbody></table></div>").toString();
    }

    /** Why a dead-letter copy was handed off, in words; blank for other messages. */
    static String reason(StoredMessage m) {
        if (m.deadLetterSourceArn() == null) {
            return "";
        }
        if (m.deadLetterReason() == null) {
            return "not recorded"; // a copy made before reasons were kept
        }
        return switch (m.deadLetterReason()) {
            case MAX_RECEIVES_EXCEEDED -> "maxReceiveCount reached"; // received that often, and came back once more
            case RETENTION_EXPIRED -> "retention period ended";
            case SOURCE_QUEUE_DELETED -> "source queue deleted";
        };
    }

    private CompletableFuture<Response> setAttributes(ConsoleSessions.Session s, String name,
                                                      Map<String, String> form) {
        return queueUrl(s, name).thenCompose(url -> attributes(s, url).thenCompose(current -> {
            ObjectNode changed = JsonNodeFactory.instance.objectNode();
            for (QueueAttributeName n : QueueAttributeName
                    .values()) {
                // only what this user changed on the page (not what someone else changed since it was shown)
                String v = normalize(form.get(n.wireName()));
                String was = normalize(form.get("was-" + n.wireName()));
                if (n.settable() && !n.wireName().equals("FifoQueue") && v != null && was != null && !v.equals(was)) {
                    changed.put(n.wireName(), v);
                }
            }
            if (changed.isEmpty()) {
                return CompletableFuture.completedFuture(null);
            }
            ObjectNode req = JsonNodeFactory.instance.objectNode().put("QueueUrl", url);
            req.set("Attributes", changed);
            return call(s, "SetQueueAttributes", req);
        })).thenApply(out -> redirect("/console/queues/" + url(name) + "?done=attributes"))
                .exceptionallyCompose(e -> actionFailed(s, name, e));
    }

    /** Form values as browsers send them back (a textarea's line ends become CR LF). */
    private static String normalize(String v) {
        return v == null ? null : v.replace("\r\n", "\n");
    }

    private CompletableFuture<Response> redrive(ConsoleSessions.Session s, String name, Map<String, String> form) {
        String rate = form.getOrDefault("rate", "").trim();
        return queueUrl(s, name).thenCompose(url -> attributes(s, url)).thenCompose(a -> {
            ObjectNode req = JsonNodeFactory.instance.objectNode().put("SourceArn", a.get("QueueArn"));
            if (!rate.isEmpty()) {
                try {
                    req.put("MaxNumberOfMessagesPerSecond", Integer.parseInt(rate));
                } catch (NumberFormatException e) {
                    throw new SqsException(SqsError.INVALID_PARAMETER_VALUE, "The rate must be a whole number.");
                }
            }
            return call(s, "StartMessageMoveTask", req);
        }).thenApply(out -> redirect("/console/queues/" + url(name) + "?done=redrive"))
                .exceptionallyCompose(e -> actionFailed(s, name, e));
    }

    private CompletableFuture<Response> cancelRedrive(ConsoleSessions.Session s, String name,
                                                      Map<String, String> form) {
        return call(s, "CancelMessageMoveTask", JsonNodeFactory.instance.objectNode()
                .put("TaskHandle", form.getOrDefault("task", "")))
                .thenApply(out -> redirect("/console/queues/" + url(name) + "?done=cancelled"))
                .exceptionallyCompose(e -> actionFailed(s, name, e));
    }

    private CompletableFuture<Response> send(ConsoleSessions.Session s, String name, Map<String, String> form) {
        String body = form.getOrDefault("body", "");
        return queueUrl(s, name).thenCompose(url -> {
            ObjectNode req = JsonNodeFactory.instance.objectNode().put("QueueUrl", url).put("MessageBody", body);
            if (!form.getOrDefault("group", "").isEmpty()) {
                req.put("MessageGroupId", form.get("group"));
            }
            if (!form.getOrDefault("dedup", "").isEmpty()) {
                req.put("MessageDeduplicationId", form.get("dedup"));
            }
            return call(s, "SendMessage", req);
        }).thenApply(out -> redirect("/console/queues/" + url(name) + "?done=sent"))
                .exceptionallyCompose(e -> actionFailed(s, name, e));
    }

    private CompletableFuture<Response> purge(ConsoleSessions.Session s, String name, Map<String, String> form) {
        if (!name.equals(form.get("confirm"))) {
            return queuePage(s, name, null, "Not purged: type the queue's name exactly to confirm.");
        }
        return queueUrl(s, name).thenCompose(url -> call(s, "PurgeQueue",
                        JsonNodeFactory.instance.objectNode().put("QueueUrl", url)))
                .thenApply(out -> redirect("/console/queues/" + url(name) + "?done=purged"))
                .exceptionallyCompose(e -> actionFailed(s, name, e));
    }

    /** An action the API refused (its SQS error shown on the queue's page); anything else goes to the error page. */
    private CompletableFuture<Response> actionFailed(ConsoleSessions.Session s, String name, Throwable e) {
        Throwable cause = unwrap(e);
        if (cause instanceof SqsException sqsError && sqsError.failure().error() != SqsError.ACCESS_DENIED) {
            return queuePage(s, name, null, sqsError.failure().error().queryCode() + ": "
                    + sqsError.failure().message());
        }
        return CompletableFuture.failedFuture(cause);
    }

    // ---- cluster ----

    private Response rebalance(ConsoleSessions.Session s, Map<String, String> form) {
        if (!s.admin() || rebalance == null) { // as POST /admin/rebalance: the admin token, not an SQS key
            return page(403, "Cluster", nav(s), "<p class=\"error\">Rebalancing needs the admin token.</p>");
        }
        int moves;
        try {
            moves = Integer.parseInt(form.getOrDefault("max_moves", "1").trim());
        } catch (NumberFormatException e) {
            moves = -1;
        }
        if (moves < 1 || moves > 1000) {
            return page(400, "Cluster", nav(s), "<p class=\"error\" id=\"problem\">At most 1 to 1,000 moves.</p>");
        }
        JsonNode out;
        try {
            out = JSON.readTree(rebalance.apply(("{\"maxMoves\":" + moves + "}").getBytes(StandardCharsets.UTF_8)));
        } catch (IOException | RuntimeException e) {
            LOG.warn("console rebalance failed", e);
            return page(503, "Cluster", nav(s), "<p class=\"error\" id=\"problem\">The rebalance could not be"
                    + " made: " + esc(e.getMessage()) + "</p>");
        }
        LOG.info("console rebalance by {}: {}", s.principal(), out);
        return redirect("/console/cluster?moved=" + out.path("moves").size());
    }

    /**
     * The shards table: each shard's catalog replicas and partitions, and from its leader's latest report the leader,
     * members in sync, each follower's lag in log entries, and whether a membership change is pending.
     */
    private static void shards(StringBuilder b, JsonNode status) {
        if (status.path("shards").isEmpty()) {
            return; // sluice dev: one local store, no Raft groups
        }
        boolean known = status.path("shardReportsKnown").asBoolean();
        b.append("<h2>Shards</h2><div class=\"scroll\"><table id=\"shards\"><thead><tr><th>Shard</th>")
                .append("<th class=\"num\">Partitions</th><th>Replicas</th><th>Leader</th><th class=\"num\">In sync")
                .append("</th><th>Follower lag</th><th>Membership</th></tr></thead><tbody>");
        for (JsonNode sh : status.path("shards")) {
            List<String> replicas = new ArrayList<>();
            sh.path("replicas").forEach(r -> replicas.add(r.asText()));
            b.append("<tr><td>").append(esc(sh.path("shardId").asText())).append("</td><td class=\"num\">")
                    .append(sh.path("partitions").asInt()).append("</td><td>").append(esc(String.join(", ", replicas)))
                    .append("</td>");
            if (!known || sh.path("leader").isNull()) {
                b.append("<td class=\"").append(known ? "dead\">no leader reported" : "muted\">not known here")
                        .append("</td><td></td><td></td><td></td></tr>");
                continue;
            }
            int members = sh.path("members").size();
            int inSync = sh.path("inSync").asInt();
            List<String> lag = new ArrayList<>();
            sh.path("followerLag").fields().forEachRemaining(e -> lag.add(e.getKey() + ": " + e.getValue().asLong()));
            boolean pending = sh.path("membershipPending").asBoolean();
            b.append("<td class=\"leader\">").append(esc(sh.path("leader").asText())).append("</td><td class=\"num ")
                    .append(inSync < members ? "dead" : "ok").append(" in-sync\">").append(inSync).append(" / ")
                    .append(members).append("</td><td>").append(esc(String.join(", ", lag))).append("</td><td class=\"")
                    .append(pending ? "muted membership\">pending" : "membership\">settled").append("</td></tr>");
        }
        b.append("</tbody></table></div>");
        if (!known) {
            b.append("<p class=\"muted\">Shard leaders report to the metadata group's leader; it could not be asked.</p>");
        }
    }

    private Response clusterPage(ConsoleSessions.Session s, String moved) {
        if (!isAdmin(s)) {
            return page(403, "Cluster", nav(s), "<p class=\"error\">The cluster page is for admins.</p>");
        }
        JsonNode status;
        try {
            status = JSON.readTree(clusterStatus.get());
        } catch (IOException | RuntimeException e) {
            return page(503, "Cluster", nav(s), "<p class=\"error\">Cluster status unavailable: "
                    + esc(e.getMessage()) + "</p>");
        }
        StringBuilder b = new StringBuilder();
        if (moved != null && moved.matches("\\d{1,4}")) {
            b.append("<p class=\"flash\" id=\"done\">Rebalance done: ").append(moved).append(" replica move")
                    .append(moved.equals("1") ? "" : "s").append(" proposed.</p>");
        }
        b.append("<p class=\"muted\">Refreshed every 10 s.</p>");
        b.append("<h2>Metadata members</h2><div class=\"scroll\"><table id=\"metadata\"><thead><tr><th>Id</th>")
                .append("<th>Address</th><th>Role</th></tr></thead><tbody>");
        for (JsonNode m : status.path("metadata")) {
            b.append("<tr><td>").append(esc(m.path("id").asText())).append("</td><td>")
                    .append(esc(m.path("address").asText())).append("</td><td>").append(esc(m.path("role").asText()))
                    .append("</td></tr>");
        }
        b.append("</tbody></table></div><h2>Backends</h2><div class=\"scroll\"><table id=\"backends\"><thead><tr>")
                .append("<th>Id</th><th>Address</th><th>State</th><th class=\"num\">Replicas</th>")
                .append("<th class=\"num\">Shards</th></tr></thead><tbody>");
        boolean known = status.path("livenessKnown").asBoolean(true);
        for (JsonNode n : status.path("backends")) {
            boolean alive = n.path("alive").asBoolean();
            String state = !known ? "not known here" : alive ? "alive" : "dead";
            b.append("<tr><td>").append(esc(n.path("id").asText())).append("</td><td>")
                    .append(esc(n.path("address").asText())).append("</td><td class=\"")
                    .append(!known ? "muted" : alive ? "ok" : "dead").append("\">").append(state)
                    .append("</td><td class=\"num\">")
                    .append(n.path("replicas").asInt()).append("</td><td class=\"num\">").append(n.path("shards").asInt())
                    .append("</td></tr>");
        }
        b.append("</tbody></table></div>");
        if (!known) {
            b.append("<p class=\"muted\">Backend liveness is tracked by the metadata group's leader: its node's")
                    .append(" console (or <code>sluice admin status</code> against it) shows it.</p>");
        }
        b.append("<p>Under-replicated partitions: <strong id=\"under-replicated\">")
                .append(status.path("underReplicatedPartitions").asInt()).append("</strong></p>");
        shards(b, status);
        if (rebalance != null && s.admin()) {
            b.append("<h2>Rebalance</h2><div class=\"card\"><form method=\"post\" action=\"/console/cluster/")
                    .append("rebalance\">").append(csrf(s)).append("<p>Moves shard replicas from the fullest backends")
                    .append(" onto the emptiest (Raft membership changes, one step at a time), as")
                    .append(" <code>sluice admin rebalance</code> does.</p><p><label for=\"max_moves\">At most this")
                    .append(" many moves</label><input id=\"max_moves\" name=\"max_moves\" value=\"1\"")
                    .append(" inputmode=\"numeric\"></p><button id=\"rebalance\" type=\"submit\">Rebalance</button>")
                    .append("</form></div>");
        }
        return page(200, "Cluster", nav(s), 10, b.toString());
    }

    private boolean isAdmin(ConsoleSessions.Session s) {
        return s.admin() || adminKey.test(s.accessKeyId());
    }

    // ---- plumbing ----

    private static final Set<String> CHANGES = Set.of("SendMessage", "PurgeQueue",
            "SetQueueAttributes", "StartMessageMoveTask", "CancelMessageMoveTask");

    private CompletableFuture<ObjectNode> call(ConsoleSessions.Session s, String action, ObjectNode request) {
        if (CHANGES.contains(action)) { // the SQS access log does not see console actions: say who changed what
            LOG.info("console {} by {} on {}", action, s.principal(), request.path("QueueUrl").asText(
                    request.path("SourceArn").asText(request.path("TaskHandle").isMissingNode() ? "" : "a task")));
        }
        return sqs.invoke(s.principal(), s.admin(), action, request, "console.invalid");
    }

    private String nav(ConsoleSessions.Session s) {
        return "<a href=\"/console/queues\">Queues</a>" + (isAdmin(s) ? "<a href=\"/console/cluster\">Cluster</a>" : "")
                + "<form method=\"post\" action=\"/console/logout\">" + csrf(s)
                + "<span class=\"who\">" + esc(s.principal()) + "</span> <button id=\"sign-out\" type=\"submit\">"
                + "Sign out</button></form>";
    }

    private static String csrf(ConsoleSessions.Session s) {
        return "<input type=\"hidden\" name=\"csrf\" value=\"" + s.csrf() + "\">";
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

    private static Throwable unwrap(Throwable e) {
        while ((e instanceof CompletionException || e instanceof ExecutionException)
                && e.getCause() != null) {
            e = e.getCause();
        }
        return e;
    }

    private static CompletableFuture<Response> done(Response r) {
        return CompletableFuture.completedFuture(r);
    }

    private static Response page(int status, String title, String nav, String body) {
        return page(status, title, nav, 0, body);
    }

    private static Response page(int status, String title, String nav, int refresh, String body) {
        return response(status, HTML, Html.page(title, nav, refresh, body));
    }

    private static Response response(int status, String type, String body) {
        List<Map.Entry<String, String>> headers = new ArrayList<>(List.of(
                Map.entry("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self';"
                        + " img-src 'self';"
                        + " form-action 'self'; frame-ancestors 'none'; base-uri 'none'"),
                Map.entry("X-Frame-Options", "DENY"), Map.entry("X-Content-Type-Options", "nosniff"),
                Map.entry("Referrer-Policy", "no-referrer"), Map.entry("Cache-Control", "no-store")));
        return new Response(status, type, body.getBytes(StandardCharsets.UTF_8), headers);
    }

    /** A file of the uPlot webjar (on the classpath: the console works offline, no CDN). */
    private static Response webjar(String file, String type) {
        String path = "META-INF/resources/webjars/uplot/" + UPLOT_VERSION + "/dist/" + file;
        try (InputStream in = Console.class.getClassLoader().getResourceAsStream(path)) {
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

    private static Response redirect(String location) {
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
    private static Map<String, String> form(Request r) {
        String type = r.contentType() == null ? "" : r.contentType().toLowerCase(Locale.ROOT);
        if (!type.startsWith("application/x-www-form-urlencoded") || r.body() == null) {
            return Map.of();
        }
        return QueryParameters.decode(null, r.body(), type);
    }

    static Map<String, String> parseQuery(String query) {
        return QueryParameters.decode(query, new byte[0], null);
    }
}
