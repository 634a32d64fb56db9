package io.sluice.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** The Grafana dashboard: its variables and a panel per topic. */
class GrafanaDashboardTest {
    // ------------------------------------------------------------------------------------------------ Grafana

    @Test
    void theDashboardHasItsVariablesAndAPanelPerTopic() throws IOException {
        JsonNode dash = new ObjectMapper().readTree(DeployFiles.deploy("grafana/sluice-dashboard.json").toFile());
        assertTrue(dash.path("schemaVersion").asInt() >= 36, "schemaVersion");
        Map<String, JsonNode> vars = new HashMap<>();
        dash.path("templating").path("list").forEach(v -> vars.put(v.path("name").asText(), v));
        assertEquals("datasource", vars.get("datasource").path("type").asText(), "a data source variable");
        assertEquals("prometheus", vars.get("datasource").path("query").asText());
        assertTrue(vars.get("queue").toString().contains("label_values(sluice_queue_messages, queue)"),
                "a queue variable from label_values(sluice_queue_messages, queue)");
        List<String> exprs = new ArrayList<>();
        Set<Integer> ids = new TreeSet<>();
        for (JsonNode panel : dash.path("panels")) {
            assertTrue(ids.add(panel.path("id").asInt()), "panel ids are unique: " + panel.path("id"));
            if (panel.path("type").asText().equals("row")) {
                continue;
            }
            String title = panel.path("title").asText();
            assertEquals("${datasource}", panel.path("datasource").path("uid").asText(), title + ": data source");
            assertTrue(panel.path("targets").size() > 0, title + ": queries");
            for (JsonNode t : panel.path("targets")) {
                assertFalse(t.path("expr").asText().isBlank(), title + ": an expression");
                exprs.add(t.path("expr").asText());
            }
        }
        String all = String.join("\n", exprs);
        for (String needed : List.of("sluice_queue_messages{", "sluice_queue_oldest_message_age_seconds",
                "sluice_queue_messages_sent_total", "sluice_queue_messages_received_total",
                "sluice_queue_messages_deleted_total", "sluice_queue_empty_receives_total",
                "sluice_queue_throttled_total", "histogram_quantile(0.5,", "histogram_quantile(0.99,",
                "sqs_requests_seconds_bucket", "outcome=~\"5..\"", "sluice_queue_dead_lettered_total",
                "sluice_shard_leader)", "sluice_shard_follower_lag_entries", "sluice_storage_bytes")) {
            assertTrue(all.contains(needed), "a panel uses " + needed);
        }
    }
}
