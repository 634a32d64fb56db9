package io.sluice.it;

import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import software.amazon.awssdk.services.sqs.SqsClient;

/** One {@code sluice dev} process per test class, with an SDK client for it. */
abstract class SharedServer {
    static SluiceProcess server;
    static SqsClient sqs;

    @BeforeAll
    static void startServer() throws Exception {
        server = SluiceProcess.start("it");
        sqs = SqsClients.client(server.endpoint());
    }

    @AfterAll
    static void stopServer() throws Exception {
        if (sqs != null) {
            sqs.close();
        }
        if (server != null) {
            server.stop();
        }
    }

    static String unique(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    static String createQueue(String prefix) {
        return sqs.createQueue(b -> b.queueName(unique(prefix))).queueUrl();
    }
}
