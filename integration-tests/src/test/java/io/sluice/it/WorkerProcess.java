package io.sluice.it;

import io.sluice.worker.SluiceWorker;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;

/**
 * A worker in a JVM of its own, for {@link WorkerIT}'s kill test: its handler writes the message id to a file and
 * then works "forever", so the test can SIGKILL it mid-message.
 * Usage: {@code WorkerProcess ENDPOINT QUEUE_URL VISIBILITY_SECONDS MARKER_FILE}
 */
public final class WorkerProcess {
    private WorkerProcess() {
    }

    public static void main(String[] args) throws Exception {
        URI endpoint = URI.create(args[0]);
        String queueUrl = args[1];
        int visibility = Integer.parseInt(args[2]);
        Path marker = Path.of(args[3]);
        SluiceWorker worker = SluiceWorker.builder(WorkerIT.asyncClient(endpoint, null), queueUrl, m -> {
            Files.writeString(marker, m.messageId() + "\n", StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                    StandardOpenOption.APPEND);
            Thread.sleep(Duration.ofHours(1).toMillis());
        }).concurrency(1).visibilityTimeout(Duration.ofSeconds(visibility)).waitTime(Duration.ofSeconds(1)).build();
        worker.start();
        Thread.sleep(Duration.ofHours(1).toMillis());
    }
}
