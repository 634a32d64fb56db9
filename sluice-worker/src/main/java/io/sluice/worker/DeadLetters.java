package io.sluice.worker;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import software.amazon.awssdk.services.sqs.SqsAsyncClient;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.MessageAttributeValue;
import software.amazon.awssdk.services.sqs.model.MessageSystemAttributeName;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;
import software.amazon.awssdk.services.sqs.model.SendMessageRequest;

/**
 * {@link MessageContext#deadLetterNow}: sends a copy of the message (body, message attributes, and for a FIFO queue
 * its group, deduplicated by its message id) to the queue's dead-letter queue, with the reason in the message attribute
 * {@value #REASON}, then deletes it from the queue. The dead-letter queue is the source queue's RedrivePolicy target,
 * looked up once a minute. At least once: a delete that fails after the send leaves the message to be received (and
 * dead-lettered) again.
 */
final class DeadLetters {
    static final String REASON = "SluiceDeadLetterReason";
    private static final Pattern TARGET = Pattern.compile("\"deadLetterTargetArn\"\\s*:\\s*\"([^\"]+)\"");
    private static final long REFRESH_NANOS = 60_000_000_000L;

    private final SqsAsyncClient sqs;
    private final String queueUrl;
    private volatile CompletableFuture<String> target;
    private volatile long resolvedAt;

    DeadLetters(SqsAsyncClient sqs, String queueUrl) {
        this.sqs = sqs;
        this.queueUrl = queueUrl;
    }

    CompletableFuture<Void> move(Message m, String reason) {
        return targetUrl().thenCompose(url -> {
            Map<String, MessageAttributeValue> attributes = new HashMap<>(m.messageAttributes());
            if (attributes.size() < 10) { // SQS's limit: without room, the reason is only logged
                String r = reason.length() > 1024 ? reason.substring(0, 1024) : reason;
                attributes.put(REASON, MessageAttributeValue.builder().dataType("String")
                        .stringValue(r.isEmpty() ? "-" : r).build());
            }
            SendMessageRequest.Builder send = SendMessageRequest.builder().queueUrl(url).messageBody(m.body())
                    .messageAttributes(attributes);
            String group = m.attributes().get(MessageSystemAttributeName
                    .MESSAGE_GROUP_ID);
            if (url.endsWith(".fifo")) {
                send.messageGroupId(group != null ? group : "dead-letters").messageDeduplicationId(m.messageId());
            } else {
                send.delaySeconds(0);
            }
            return sqs.sendMessage(send.build());
        }).thenCompose(sent -> sqs.deleteMessage(d -> d.queueUrl(queueUrl).receiptHandle(m.receiptHandle())))
                .thenApply(deleted -> null);
    }

    private CompletableFuture<String> targetUrl() {
        CompletableFuture<String> t = target;
        if (t == null || t.isCompletedExceptionally() || System.nanoTime() - resolvedAt > REFRESH_NANOS) {
            resolvedAt = System.nanoTime();
            t = sqs.getQueueAttributes(r -> r.queueUrl(queueUrl).attributeNames(QueueAttributeName.REDRIVE_POLICY))
                    .thenCompose(a -> {
                        String policy = a.attributes().get(QueueAttributeName.REDRIVE_POLICY);
                        Matcher arn = TARGET.matcher(policy == null ? "" : policy);
                        if (!arn.find()) {
                            throw new IllegalStateException("the queue has no dead-letter queue (RedrivePolicy)");
                        }
                        String[] parts = arn.group(1).split(":");
                        String name = parts[parts.length - 1];
                        String owner = parts.length >= 6 ? parts[4] : null;
                        return sqs.getQueueUrl(r -> r.queueName(name).queueOwnerAWSAccountId(owner));
                    }).thenApply(r -> r.queueUrl());
            target = t;
        }
        return t;
    }
}
