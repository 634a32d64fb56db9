package io.sluice.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.SqsException;

/** Signature V4 is verified on every request. */
class AuthIT extends SharedServer {

    @Test
    void wrongSecretIsSignatureDoesNotMatch() {
        try (SqsClient wrong = SqsClients.client(server.endpoint(), SluiceProcess.ACCESS_KEY, "not-the-secret")) {
            SqsException e = assertThrows(SqsException.class, wrong::listQueues);
            assertEquals("SignatureDoesNotMatch", e.awsErrorDetails().errorCode());
            assertEquals(403, e.statusCode());
        }
    }

    @Test
    void unknownKeyIsInvalidClientTokenId() {
        try (SqsClient unknown = SqsClients.client(server.endpoint(), "AKIDUNKNOWN", SluiceProcess.SECRET_KEY)) {
            SqsException e = assertThrows(SqsException.class, unknown::listQueues);
            assertEquals("InvalidClientTokenId", e.awsErrorDetails().errorCode());
            assertEquals(403, e.statusCode());
            assertEquals("The security token included in the request is invalid.", e.awsErrorDetails().errorMessage());
        }
    }

    @Test
    void unsignedRequestIsRefused() throws Exception {
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(server.endpoint() + "/"))
                .header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString("Action=ListQueues&Version=2012-11-05")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(403, r.statusCode());
        assertEquals(true, r.body().contains("<Code>MissingAuthenticationToken</Code>"), r.body());
    }
}
