package io.sluice.it;

import static io.sluice.it.DeployFiles.asMap;
import static io.sluice.it.DeployFiles.map;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * deploy/prometheus: the alert rules and the Prometheus configuration pass {@code promtool} (check rules, check
 * config, and the unit tests of alerts.test.yml, in which every alert fires and is also shown not to fire), the
 * dashboard's queries parse, every alert links to its runbook section in docs/operations.md, and the metric names
 * used are the ones Sluice exports.
 *
 * <p>Without promtool (Debian package {@code prometheus}) the promtool checks are skipped, unless
 * {@code SLUICE_REQUIRE_TOOLS=1} (CI), where they fail.
 */
class AlertRulesTest {
    /** The metrics Sluice exports (docs/operations.md), without the _bucket/_count/_sum suffixes of histograms. */
    private static final Set<String> SLUICE_METRICS = Set.of(
            "sluice_queue_messages", "sluice_queue_oldest_message_age_seconds", "sluice_queue_messages_sent_total",
            "sluice_queue_messages_received_total", "sluice_queue_messages_deleted_total",
            "sluice_queue_messages_expired_total", "sluice_queue_messages_purged_total",
            "sluice_queue_dead_lettered_total", "sluice_shard_applied_index",
            "sluice_metadata_leader", "sluice_metadata_leader_known",
            "sqs_long_polls_parked", "sqs_usage_throttled_total",
            "sluice_shard_leader", "sluice_shard_leader_known", "sluice_shard_replicas",
            "sluice_shard_replicas_in_sync", "sluice_shard_follower_lag_entries", "sluice_storage_bytes",
            "sluice_queue_empty_receives_total", "sluice_queue_throttled_total",
            "sqs_requests_seconds", "sqs_usage_requests_total", "sqs_usage_bytes_total",
            "sluice_clock_offset_seconds");
    private static final Pattern METRIC = Pattern.compile("\\b(?:sluice|sqs)_[a-z_]+");
    private static final Pattern HEADING = Pattern.compile("(?m)^#{1,6}\\s+(.+?)\\s*#*\\s*$");

    private static final Path PROMETHEUS = DeployFiles.deploy("prometheus");

    @Test
    void promtoolChecksTheRules() throws Exception {
        assertPromtool(PROMETHEUS, "check", "rules", "alerts.yml");
    }

    @Test
    void promtoolUnitTestsPass() throws Exception {
        assertPromtool(PROMETHEUS, "test", "rules", "alerts.test.yml");
    }

    /**
     * prometheus.yml names alerts.yml relative to itself, so the check reads the rule file too. The scrape jobs read
     * the admin read token from the compose secret's path, which promtool requires to exist: the check runs on a copy
     * of the folder with that path pointed at a file of the copy.
     */
    @Test
    void promtoolChecksTheConfiguration() throws Exception {
        Path promtool = promtool();
        Path dir = Files.createTempDirectory("prometheus-config");
        Files.writeString(dir.resolve("admin-read-token"), "a-token\n");
        for (String name : List.of("prometheus.yml", "prometheus.combined.yml", "alerts.yml")) {
            String text = Files.readString(PROMETHEUS.resolve(name));
            if (name.startsWith("prometheus")) {
                assertTrue(text.contains(READ_TOKEN_FILE), name + " scrapes with the read token");
                text = text.replace(READ_TOKEN_FILE, dir.resolve("admin-read-token").toString());
            }
            Files.writeString(dir.resolve(name), text);
        }
        for (String config : List.of("prometheus.yml", "prometheus.combined.yml")) {
            String out = assertPromtool(promtool, dir, "check", "config", config);
            assertTrue(out.contains("alerts.yml"), "the configuration loads alerts.yml: " + out);
        }
    }

    /** Where the compose files hand Prometheus the admin read token (the secret admin-read-token). */
    static final String READ_TOKEN_FILE = "/run/secrets/admin-read-token";

    /** Every query of the Grafana dashboard is valid PromQL (as recording rules, Grafana's variables filled in). */
    @Test
    void theDashboardQueriesParse() throws Exception {
        Path promtool = promtool();
        JsonNode dash = new ObjectMapper().readTree(DeployFiles.deploy("grafana/sluice-dashboard.json").toFile());
        StringBuilder rules = new StringBuilder("groups:\n  - name: dashboard\n    rules:\n");
        int n = 0;
        for (JsonNode panel : dash.path("panels")) {
            for (JsonNode target : panel.path("targets")) {
                String expr = target.path("expr").asText().replace("$__rate_interval", "5m")
                        .replace("$__interval", "1m").replace("$queue", ".*");
                rules.append("      - record: dashboard:query_").append(++n).append("\n        expr: '")
                        .append(expr.replace("'", "''")).append("'\n");
            }
        }
        assertTrue(n >= 10, "the dashboard has queries: " + n);
        Path dir = Files.createTempDirectory("sluice-dashboard-rules");
        try {
            Files.writeString(dir.resolve("dashboard.rules.yml"), rules);
            assertPromtool(promtool, dir, "check", "rules", "dashboard.rules.yml");
        } finally {
            Files.deleteIfExists(dir.resolve("dashboard.rules.yml"));
            Files.deleteIfExists(dir);
        }
    }

    @Test
    void everyAlertHasASeverityASummaryAndARunbookSectionInOperationsMd() throws IOException {
        Set<String> anchors = anchors(DeployFiles.root().resolve("docs/operations.md"));
        Set<String> missing = new java.util.LinkedHashSet<>();
        for (Map<String, Object> rule : alertRules()) {
            String alert = String.valueOf(rule.get("alert"));
            assertTrue(Set.of("warning", "critical").contains(map(rule, "labels").get("severity")),
                    alert + ": severity warning or critical");
            Map<String, Object> annotations = map(rule, "annotations");
            assertFalse(String.valueOf(annotations.getOrDefault("summary", "")).isBlank(), alert + ": a summary");
            String expected = "docs/operations.md#" + anchorOf("Alert: " + alert);
            assertEquals(expected, annotations.get("runbook"), alert + ": runbook annotation");
            if (!anchors.contains(anchorOf("Alert: " + alert))) {
                missing.add("### Alert: " + alert);
            }
        }
        assertTrue(missing.isEmpty(), "docs/operations.md lacks the runbook sections " + missing);
    }

    /** alerts.test.yml shows every alert firing (at each of its severities) and not firing. */
    @Test
    void everyAlertIsUnitTestedFiringAndNotFiring() throws IOException {
        Map<String, Set<String>> severities = new TreeMap<>();
        for (Map<String, Object> rule : alertRules()) {
            severities.computeIfAbsent(String.valueOf(rule.get("alert")), k -> new TreeSet<>())
                    .add(String.valueOf(map(rule, "labels").get("severity")));
        }
        Map<String, Set<String>> fired = new HashMap<>();
        Set<String> quiet = new TreeSet<>();
        Map<String, Object> tests = DeployFiles.load(PROMETHEUS.resolve("alerts.test.yml"));
        assertEquals(List.of("alerts.yml"), DeployFiles.strings(tests, "rule_files"));
        for (Object test : (List<?>) tests.get("tests")) {
            for (Object c : (List<?>) asMap(test, "test").getOrDefault("alert_rule_test", List.of())) {
                Map<String, Object> check = asMap(c, "alert_rule_test");
                String alert = String.valueOf(check.get("alertname"));
                List<?> expected = (List<?>) check.getOrDefault("exp_alerts", List.of());
                if (expected == null || expected.isEmpty()) {
                    quiet.add(alert);
                }
                for (Object e : expected == null ? List.of() : expected) {
                    fired.computeIfAbsent(alert, k -> new TreeSet<>())
                            .add(String.valueOf(map(asMap(e, "exp_alert"), "exp_labels").get("severity")));
                }
            }
        }
        for (Map.Entry<String, Set<String>> alert : severities.entrySet()) {
            assertEquals(alert.getValue(), fired.getOrDefault(alert.getKey(), Set.of()),
                    alert.getKey() + ": a test where it fires, at each severity");
            assertTrue(quiet.contains(alert.getKey()), alert.getKey() + ": a test where it must not fire");
        }
        assertTrue(severities.keySet().containsAll(fired.keySet()), "tests of alerts that do not exist: "
                + fired.keySet());
    }

    /** A misspelt metric name is a rule that never fires and a panel that stays empty. */
    @Test
    void rulesAndDashboardUseTheMetricsSluiceExports() throws IOException {
        Map<String, String> sources = new LinkedHashMap<>();
        sources.put("alerts.yml", Files.readString(PROMETHEUS.resolve("alerts.yml")));
        sources.put("alerts.test.yml", Files.readString(PROMETHEUS.resolve("alerts.test.yml")));
        sources.put("sluice-dashboard.json", Files.readString(DeployFiles.deploy("grafana/sluice-dashboard.json")));
        for (Map.Entry<String, String> s : sources.entrySet()) {
            Matcher m = METRIC.matcher(s.getValue());
            while (m.find()) {
                if (m.group().endsWith("_")) {
                    continue; // a family in a comment, e.g. sluice_queue_*
                }
                String name = m.group().replaceAll("_(bucket|count|sum)$", "");
                assertTrue(SLUICE_METRICS.contains(name), s.getKey() + " uses " + m.group()
                        + ", which Sluice does not export (docs/operations.md)");
            }
        }
    }

    // ------------------------------------------------------------------------------------------------ helpers

    /**
     * The Sluice metric names the alert rules and the dashboard query (histogram series as their base name), for
     * the checks against a live scrape (QueueMetricsIT, ClusterScriptIT).
     */
    static Set<String> referencedMetrics() throws IOException {
        Set<String> names = new java.util.TreeSet<>();
        for (String text : List.of(Files.readString(PROMETHEUS.resolve("alerts.yml")),
                Files.readString(DeployFiles.deploy("grafana/sluice-dashboard.json")))) {
            Matcher m = METRIC.matcher(text);
            while (m.find()) {
                if (!m.group().endsWith("_")) {
                    names.add(baseName(m.group()));
                }
            }
        }
        return names;
    }

    /** A histogram's series are exported as _bucket, _count and _sum of one name. */
    static String baseName(String series) {
        return series.replaceAll("_(bucket|count|sum)$", "");
    }

    static List<Map<String, Object>> alertRules() throws IOException {
        List<Map<String, Object>> out = new ArrayList<>();
        for (Object group : (List<?>) DeployFiles.load(PROMETHEUS.resolve("alerts.yml")).get("groups")) {
            for (Object rule : (List<?>) asMap(group, "group").get("rules")) {
                Map<String, Object> r = asMap(rule, "rule");
                if (r.containsKey("alert")) {
                    out.add(r);
                }
            }
        }
        assertFalse(out.isEmpty(), "alert rules");
        return out;
    }

    /** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
    static String anchorOf(String heading) {
        return heading.trim().toLowerCase(Locale.ROOT).replaceAll("[^\\p{L}\\p{N} _-]", "").replace(' ', '-');
    }

    /** The anchors of a Markdown file's headings (a repeated heading gets -1, -2, ... as on GitHub). */
    static Set<String> anchors(Path markdown) throws IOException {
        Set<String> out = new TreeSet<>();
        Map<String, Integer> seen = new HashMap<>();
        String text = Files.readString(markdown).replaceAll("(?s)```.*?```", "");
        Matcher m = HEADING.matcher(text);
        while (m.find()) {
            String anchor = anchorOf(m.group(1));
            int n = seen.merge(anchor, 1, Integer::sum);
            out.add(n == 1 ? anchor : anchor + "-" + (n - 1));
        }
        return out;
    }

    /** promtool from the PATH; skips the test without it, unless SLUICE_REQUIRE_TOOLS=1. */
    static Path promtool() {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            Path p = Path.of(dir, "promtool");
            if (Files.isExecutable(p)) {
                return p;
            }
        }
        if ("1".equals(System.getenv("SLUICE_REQUIRE_TOOLS"))) {
            fail("promtool is not installed and SLUICE_REQUIRE_TOOLS=1 (Debian: apt-get install prometheus)");
        }
        Assumptions.abort("promtool is not installed (Debian: apt-get install prometheus)");
        return null;
    }

    private static String assertPromtool(Path dir, String... args) throws Exception {
        return assertPromtool(promtool(), dir, args);
    }

    /** Runs promtool in {@code dir}; fails with its output unless it exits 0. */
    private static String assertPromtool(Path promtool, Path dir, String... args) throws Exception {
        List<String> command = new ArrayList<>();
        command.add(promtool.toString());
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            fail("promtool " + String.join(" ", args) + " did not finish within 60 s:\n" + out);
        }
        assertEquals(0, p.exitValue(), "promtool " + String.join(" ", args) + " in " + dir + ":\n" + out);
        assertNotNull(out);
        return out;
    }
}
