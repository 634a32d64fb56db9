package io.sluice.common.validation;

import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * A queue ARN, {@code arn:<partition>:sqs:<region>:<12-digit account>:<queue name>} (spec 1.2). Parsing checks the
 * shape only; whether the queue exists is the caller's business.
 */
public record QueueArn(String partition, String region, String accountId, String queueName) {
    private static final Pattern PARTITION = Pattern.compile("aws(-[a-z]+)*");
    private static final Pattern REGION = Pattern.compile("[a-z0-9]+(-[a-z0-9]+)*");
    private static final Pattern ACCOUNT = Pattern.compile("[0-9]{12}");

    public QueueArn {
        Objects.requireNonNull(partition, "partition");
        Objects.requireNonNull(region, "region");
        Objects.requireNonNull(accountId, "accountId");
        Objects.requireNonNull(queueName, "queueName");
    }

    /** The ARN, or empty when the text is not a well-formed SQS queue ARN. */
    public static Optional<QueueArn> parse(String text) {
        if (text == null) {
            return Optional.empty();
        }
        String[] parts = text.split(":", -1);
        if (parts.length != 6 || !parts[0].equals("arn") || !PARTITION.matcher(parts[1]).matches()
                || !parts[2].equals("sqs") || !REGION.matcher(parts[3]).matches()
                || !ACCOUNT.matcher(parts[4]).matches()) {
            return Optional.empty();
        }
        String name = parts[5];
        boolean validName = QueueNames.hasFifoSuffix(name) ? QueueNames.isValidFifoName(name)
                : QueueNames.isValidStandardName(name);
        return validName ? Optional.of(new QueueArn(parts[1], parts[3], parts[4], name)) : Optional.empty();
    }

    public boolean isFifo() {
        return QueueNames.hasFifoSuffix(queueName);
    }

    @Override
    public String toString() {
        return "arn:" + partition + ":sqs:" + region + ":" + accountId + ":" + queueName;
    }
}
