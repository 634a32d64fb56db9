package io.sluice.it;

import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import software.amazon.awssdk.services.sqs.SqsClient;

/**
 * One server per test class, with an SDK client for it: a {@code sluice dev} process, or with
 * {@code -Dsluice.server=split} or {@code combined} (scripts/client-suite.sh) a cluster of that topology, so the same
 * client suites (the SDK's, boto3's and the CLI's) run on both topologies as well as on {@code sluice dev}.
 */
abstract class SharedServer {
    static SqsServer server;
    static SqsClient sqs;

    @BeforeAll
    static void startServer() throws Exception {
        String kind = System.getProperty("sluice.server", "dev").trim();
        server = switch (kind.isEmpty() ? "dev" : kind) {
            case "dev" -> SluiceProcess.start("it");
            case "split" -> ClusterServer.start(LocalCluster.Topology.SPLIT, "clients");
            case "combined" -> ClusterServer.start(LocalCluster.Topology.COMBINED, "clients");
            default -> throw new IllegalArgumentException("sluice.server: dev, split or combined, not " + kind);
        };
        sqs = SqsClients.client(server.endpoint());
    }

    @AfterAll
    static void stopServer() throws Exception {
        if (sqs != null) {
            sqs.close();
            sqs = null;
        }
        if (server != null) {
            SqsServer stopping = server;
            server = null;
            stopping.stop();
        }
    }

    static String unique(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    static String createQueue(String prefix) {
        return sqs.createQueue(b -> b.queueName(unique(prefix))).queueUrl();
    }
}
