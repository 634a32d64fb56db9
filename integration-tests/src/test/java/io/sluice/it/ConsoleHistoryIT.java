package io.sluice.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.http.HttpResponse;
import java.util.Map;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.sqs.SqsClient;

/**
 * Issue 47, item 6: the console's charts outlive a restart. The shard's replica records its partitions' counts
 * beside its store (at its start, every minute and at its stop); after `sluice dev` restarts, the day's chart still
 * shows the queue's figures from before the stop (messages delayed then, visible by the restart), which the restarted
 * node could not have seen itself.
 */
class ConsoleHistoryIT {
    @Test
    void aQueuesChartOutlivesARestart() throws Exception {
        SluiceProcess server = SluiceProcess.start("console-history");
        try {
            long sentAt;
            try (SqsClient sqs = SqsClients.client(server.endpoint())) {
                String url = sqs.createQueue(b -> b.queueName("remembered")).queueUrl();
                sentAt = System.currentTimeMillis();
                for (int i = 0; i < 4; i++) {
                    int n = i;
                    sqs.sendMessage(b -> b.queueUrl(url).messageBody("kept " + n).delaySeconds(20));
                }
            }
            server.stop(); // a clean stop records a last point: 4 delayed
            long stoppedMinute = System.currentTimeMillis() / 60_000;
            // restarted in a later minute (a minute's point is its last write) and once the delay is over: whatever
            // the node records from now on has the 4 visible, none delayed
            while (System.currentTimeMillis() / 60_000 == stoppedMinute || System.currentTimeMillis() < sentAt + 21_000) {
                Thread.sleep(200);
            }
            server.restart();
            String base = server.adminEndpoint().toString().replaceAll("/$", "");
            String session = ConsoleSession.signIn(base, Map.of("access_key", SluiceProcess.ACCESS_KEY, "secret_key",
                    SluiceProcess.SECRET_KEY));
            HttpResponse<String> day = ConsoleSession.get(base, "/console/live/history/remembered?range=86400",
                    session);
            assertEquals(200, day.statusCode(), day.body());
            JsonNode chart = new ObjectMapper().readTree(day.body());
            assertEquals(86_400, chart.path("now").asLong() - chart.path("from").asLong());
            boolean delayedBefore = false;
            for (JsonNode d : chart.path("delayed")) {
                delayedBefore |= d.asInt() == 4;
            }
            assertTrue(delayedBefore, "the 4 delayed messages before the restart are on the day's chart (recorded"
                    + " before the stop, read back after the start): " + day.body());
            assertEquals(303, ConsoleSession.get(base, "/console/live/history/remembered?range=86400", null)
                    .statusCode(), "no session: to the sign-in");
        } finally {
            server.close();
        }
    }
}
