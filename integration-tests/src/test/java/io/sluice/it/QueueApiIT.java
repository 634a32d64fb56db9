package io.sluice.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.sqs.model.InvalidAttributeNameException;
import software.amazon.awssdk.services.sqs.model.ListQueuesResponse;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;
import software.amazon.awssdk.services.sqs.model.QueueDeletedRecentlyException;
import software.amazon.awssdk.services.sqs.model.QueueDoesNotExistException;
import software.amazon.awssdk.services.sqs.model.QueueNameExistsException;
import software.amazon.awssdk.services.sqs.model.SqsException;

/** Queue-level actions through the AWS SDK for Java v2 (JSON protocol). */
class QueueApiIT extends SharedServer {

    @Test
    void createIsIdempotentAndConflictingAttributesAreRefused() {
        String name = unique("create");
        String url = sqs.createQueue(b -> b.queueName(name).attributes(Map.of(QueueAttributeName.VISIBILITY_TIMEOUT, "45")))
                .queueUrl();
        assertEquals(server.endpoint() + "/000000000000/" + name, url);
        assertEquals(url, sqs.createQueue(b -> b.queueName(name)
                .attributes(Map.of(QueueAttributeName.VISIBILITY_TIMEOUT, "45"))).queueUrl());
        QueueNameExistsException conflict = assertThrows(QueueNameExistsException.class, () -> sqs.createQueue(b -> b
                .queueName(name).attributes(Map.of(QueueAttributeName.VISIBILITY_TIMEOUT, "46"))));
        assertEquals("QueueAlreadyExists", conflict.awsErrorDetails().errorCode());
        assertEquals(400, conflict.statusCode());
        assertEquals(url, sqs.getQueueUrl(b -> b.queueName(name)).queueUrl());
    }

    @Test
    void badNamesAndAttributesGetTheSpecErrors() {
        SqsException badName = assertThrows(SqsException.class, () -> sqs.createQueue(b -> b.queueName("bad name!")));
        assertEquals("InvalidParameterValue", badName.awsErrorDetails().errorCode());
        assertEquals(400, badName.statusCode());
        assertThrows(InvalidAttributeNameException.class, () -> sqs.createQueue(b -> b.queueName(unique("x"))
                .attributesWithStrings(Map.of("FifoQueue", "false"))));
        SqsException range = assertThrows(SqsException.class, () -> sqs.createQueue(b -> b.queueName(unique("x"))
                .attributes(Map.of(QueueAttributeName.DELAY_SECONDS, "901"))));
        assertEquals("InvalidAttributeValue", range.awsErrorDetails().errorCode());
    }

    @Test
    void unknownQueueIsQueueDoesNotExistWithTheLegacyCode() {
        QueueDoesNotExistException e = assertThrows(QueueDoesNotExistException.class,
                () -> sqs.getQueueUrl(b -> b.queueName(unique("missing"))));
        assertEquals("AWS.SimpleQueueService.NonExistentQueue", e.awsErrorDetails().errorCode());
        assertEquals(400, e.statusCode());
        assertThrows(QueueDoesNotExistException.class, () -> sqs.sendMessage(b -> b
                .queueUrl(server.endpoint() + "/000000000000/" + unique("missing")).messageBody("x")));
    }

    @Test
    void listQueuesFiltersByPrefixAndPaginates() {
        String prefix = unique("list");
        List<String> created = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            created.add(sqs.createQueue(b -> b.queueName(prefix + "-" + created.size())).queueUrl());
        }
        assertEquals(created, sqs.listQueues(b -> b.queueNamePrefix(prefix)).queueUrls());
        List<String> paged = new ArrayList<>();
        String token = null;
        int pages = 0;
        do {
            String t = token;
            ListQueuesResponse page = sqs.listQueues(b -> b.queueNamePrefix(prefix).maxResults(2).nextToken(t));
            paged.addAll(page.queueUrls());
            token = page.nextToken();
            pages++;
        } while (token != null);
        assertEquals(created, paged);
        assertEquals(3, pages);
    }

    @Test
    void attributesCanBeReadAndChanged() {
        String url = createQueue("attrs");
        Map<String, String> all = sqs.getQueueAttributes(b -> b.queueUrl(url).attributeNames(QueueAttributeName.ALL))
                .attributesAsStrings();
        assertEquals(java.util.Set.of("ApproximateNumberOfMessages",
                "ApproximateNumberOfMessagesDelayed", "ApproximateNumberOfMessagesNotVisible", "CreatedTimestamp",
                "DelaySeconds", "LastModifiedTimestamp", "MaximumMessageSize", "MessageRetentionPeriod", "QueueArn",
                "ReceiveMessageWaitTimeSeconds", "SqsManagedSseEnabled", "VisibilityTimeout"), all.keySet());
        assertEquals("30", all.get("VisibilityTimeout"));
        sqs.setQueueAttributes(b -> b.queueUrl(url).attributes(Map.of(QueueAttributeName.VISIBILITY_TIMEOUT, "5")));
        assertEquals("5", sqs.getQueueAttributes(b -> b.queueUrl(url)
                .attributeNames(QueueAttributeName.VISIBILITY_TIMEOUT)).attributesAsStrings().get("VisibilityTimeout"));
        assertTrue(sqs.getQueueAttributes(b -> b.queueUrl(url)).attributes().isEmpty(), "no names, no attributes");
        SqsException readOnly = assertThrows(SqsException.class, () -> sqs.setQueueAttributes(b -> b.queueUrl(url)
                .attributesWithStrings(Map.of("QueueArn", "x"))));
        assertEquals("InvalidAttributeName", readOnly.awsErrorDetails().errorCode());
    }

    @Test
    void tagsAreStoredAndRemoved() {
        String url = sqs.createQueue(b -> b.queueName(unique("tags")).tags(Map.of("team", "core"))).queueUrl();
        sqs.tagQueue(b -> b.queueUrl(url).tags(Map.of("env", "test")));
        assertEquals(Map.of("team", "core", "env", "test"), sqs.listQueueTags(b -> b.queueUrl(url)).tags());
        sqs.untagQueue(b -> b.queueUrl(url).tagKeys("team", "absent"));
        assertEquals(Map.of("env", "test"), sqs.listQueueTags(b -> b.queueUrl(url)).tags());
    }

    @Test
    void deleteRemovesTheQueueAndItsNameIsHeldForAMinute() {
        String name = unique("delete");
        String url = sqs.createQueue(b -> b.queueName(name)).queueUrl();
        sqs.sendMessage(b -> b.queueUrl(url).messageBody("gone with the queue"));
        sqs.deleteQueue(b -> b.queueUrl(url));
        assertThrows(QueueDoesNotExistException.class, () -> sqs.getQueueUrl(b -> b.queueName(name)));
        assertThrows(QueueDoesNotExistException.class, () -> sqs.receiveMessage(b -> b.queueUrl(url)));
        assertThrows(QueueDeletedRecentlyException.class, () -> sqs.createQueue(b -> b.queueName(name)));
    }

    @Test
    void purgeEmptiesTheQueueOncePerMinute() {
        String url = createQueue("purge");
        sqs.sendMessage(b -> b.queueUrl(url).messageBody("a"));
        sqs.purgeQueue(b -> b.queueUrl(url));
        assertFalse(sqs.receiveMessage(b -> b.queueUrl(url)).hasMessages());
        SqsException again = assertThrows(SqsException.class, () -> sqs.purgeQueue(b -> b.queueUrl(url)));
        assertEquals("AWS.SimpleQueueService.PurgeQueueInProgress", again.awsErrorDetails().errorCode());
        assertEquals(403, again.statusCode());
    }
}
