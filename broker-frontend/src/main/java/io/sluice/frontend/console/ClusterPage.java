package io.sluice.frontend.console;

import static io.sluice.frontend.console.ConsoleHttp.csrf;
import static io.sluice.frontend.console.ConsoleHttp.page;
import static io.sluice.frontend.console.ConsoleHttp.redirect;
import static io.sluice.frontend.console.ConsoleHttp.response;
import static io.sluice.frontend.console.Html.esc;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sluice.frontend.console.Console.Response;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The console's cluster page ({@code /console/cluster}), for admins: members, backends, shards, and rebalance. */
final class ClusterPage {
    private static final Logger LOG = LoggerFactory.getLogger(ClusterPage.class);
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Supplier<String> clusterStatus;
    private final Function<byte[], String> rebalance;
    private final Predicate<ConsoleSessions.Session> isAdmin;
    private final Function<ConsoleSessions.Session, String> nav;
    private final int refreshSeconds;

    /**
     * @param clusterStatus the cluster status JSON ({@code /admin/status})
     * @param rebalance     what {@code POST /admin/rebalance} runs (a metadata write: it may block), for admins;
     *                      null where admin writes are disabled (no admin token configured)
     * @param isAdmin       whether a session may see the page
     */
    ClusterPage(Supplier<String> clusterStatus, Function<byte[], String> rebalance,
                Predicate<ConsoleSessions.Session> isAdmin, Function<ConsoleSessions.Session, String> nav,
                int refreshSeconds) {
        this.refreshSeconds = refreshSeconds;
        this.clusterStatus = clusterStatus;
        this.rebalance = rebalance;
        this.isAdmin = isAdmin;
        this.nav = nav;
    }

    Response rebalance(ConsoleSessions.Session s, Map<String, String> form) {
        if (!s.admin() || rebalance == null) { // as POST /admin/rebalance: the admin token, not an SQS key
            return page(403, "Cluster", nav.apply(s), "<p class=\"error\">Rebalancing needs the admin token.</p>");
        }
        int moves;
        try {
            moves = Integer.parseInt(form.getOrDefault("max_moves", "1").trim());
        } catch (NumberFormatException e) {
            moves = -1;
        }
        if (moves < 1 || moves > 1000) {
            return page(400, "Cluster", nav.apply(s), "<p class=\"error\" id=\"problem\">At most 1 to 1,000 moves.</p>");
        }
        JsonNode out;
        try {
            out = JSON.readTree(rebalance.apply(("{\"maxMoves\":" + moves + "}").getBytes(StandardCharsets.UTF_8)));
        } catch (IOException | RuntimeException e) {
            LOG.warn("console rebalance failed", e);
            return page(503, "Cluster", nav.apply(s), "<p class=\"error\" id=\"problem\">The rebalance could not be"
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

    Response clusterPage(ConsoleSessions.Session s, String moved) {
        if (!isAdmin.test(s)) {
            return page(403, "Cluster", nav.apply(s), "<p class=\"error\">The cluster page is for admins.</p>");
        }
        StringBuilder b = new StringBuilder();
        if (moved != null && moved.matches("\\d{1,4}")) {
            b.append("<p class=\"flash\" id=\"done\">Rebalance done: ").append(moved).append(" replica move")
                    .append(moved.equals("1") ? "" : "s").append(" proposed.</p>");
        }
        b.append("<div id=\"cluster-live\" data-live=\"/console/live/cluster\" data-every=\"").append(refreshSeconds)
                .append("\" data-refreshed=\"0\">").append(live()).append("</div>");
        if (rebalance != null && s.admin()) {
            b.append("<h2>Rebalance</h2><div class=\"card\"><form method=\"post\" action=\"/console/cluster/")
                    .append("rebalance\">").append(csrf(s)).append("<p>Moves shard replicas from the fullest backends")
                    .append(" onto the emptiest (Raft membership changes, one step at a time), as")
                    .append(" <code>sluice admin rebalance</code> does.</p><p><label for=\"max_moves\">At most this")
                    .append(" many moves</label><input id=\"max_moves\" name=\"max_moves\" value=\"1\"")
                    .append(" inputmode=\"numeric\"></p><button id=\"rebalance\" type=\"submit\">Rebalance</button>")
                    .append("</form></div>");
        }
        return page(200, "Cluster", nav.apply(s), b.toString());
    }

    /** The live region alone ({@code /console/live/cluster}), for admins. */
    Response clusterLive(ConsoleSessions.Session s) {
        if (!isAdmin.test(s)) {
            return response(403, "text/html; charset=utf-8", "<p class=\"error\">The cluster page is for admins.</p>");
        }
        return response(200, "text/html; charset=utf-8", live());
    }

    /** Members, backends and shards from the status now. */
    private String live() {
        JsonNode status;
        try {
            status = JSON.readTree(clusterStatus.get());
        } catch (IOException | RuntimeException e) {
            return "<p class=\"error\">Cluster status unavailable: " + esc(e.getMessage()) + "</p>";
        }
        StringBuilder b = new StringBuilder();
        b.append("<p class=\"muted\">Refreshed in place every ").append(refreshSeconds).append(" s.</p>");
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
        return b.toString();
    }
}
