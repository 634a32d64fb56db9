package io.sluice.frontend.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.sluice.catalog.QueueMetadata;
import io.sluice.common.SystemClock;
import io.sluice.frontend.FakeCluster;
import io.sluice.frontend.FrontendConfig;
import io.sluice.frontend.action.ActionTable;
import io.sluice.frontend.service.LongPolls;
import io.sluice.frontend.service.MoveTasks;
import io.sluice.frontend.service.SqsServices;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionId;
import io.sluice.partition.PartitionOutcome;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 44: a frontend that cannot complete a request in time answers 503 ServiceUnavailable (which every SDK
 * retries) at its deadline instead of holding the connection; a shard or metadata group it cannot reach (a Raft
 * {@code IOException}) is 503 too, not 500 InternalError; any other failure stays 500.
 */
class RequestDeadlineTest {
    private static final QueueMetadata QUEUE = new QueueMetadata("jobs", 7, false, Map.of(), Map.of(), 0, 0, 1, 3);
    private final ExecutorService workers = Executors.newFixedThreadPool(2);

    @AfterEach
    void stop() {
        workers.shutdownNow();
    }

    @Test
    void aSendThatDoesNotCompleteIsAnswered503AtTheDeadline() throws Exception {
        long start = System.nanoTime();
        SqsRequestProcessor.Outgoing out = send(CompletableFuture::new, 300);
        long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertEquals(503, out.status(), body(out));
        assertTrue(body(out).contains("ServiceUnavailable"), body(out));
        assertTrue(took >= 300 && took < 5_000, "answered after " + took + " ms");
    }

    @Test
    void anUnreachableClusterIs503() throws Exception {
        SqsRequestProcessor.Outgoing out = send(() -> CompletableFuture.failedFuture(
                new IOException("the shard's leader did not answer")), 60_000);
        assertEquals(503, out.status(), body(out));
        assertTrue(body(out).contains("ServiceUnavailable"), body(out));
    }

    @Test
    void anyOtherFailureStaysAnInternalError() throws Exception {
        SqsRequestProcessor.Outgoing out = send(() -> CompletableFuture.failedFuture(
                new IllegalStateException("a bug")), 60_000);
        assertEquals(500, out.status(), body(out));
    }

    private static String body(SqsRequestProcessor.Outgoing out) {
        return new String(out.body(), StandardCharsets.UTF_8);
    }

    private SqsRequestProcessor.Outgoing send(Supplier<CompletableFuture<PartitionOutcome>> outcome, long deadline)
            throws Exception {
        SqsServices services = new SqsServices(new FakeCluster.Catalog(Map.of(QUEUE.name(), QUEUE)), new Shard(outcome), SystemClock.INSTANCE,
                FrontendConfig.DEFAULTS, null);
        SqsRequestProcessor processor = new SqsRequestProcessor(new ActionTable(services,
                new LongPolls(SystemClock.INSTANCE), new MoveTasks(services)), null, null, workers,
                new SimpleMeterRegistry(), AccessKeyRateLimiter.UNLIMITED, name -> false, deadline);
        byte[] body = "{\"QueueUrl\":\"http://localhost:9324/000000000000/jobs\",\"MessageBody\":\"x\"}"
                .getBytes(StandardCharsets.UTF_8);
        SqsRequestProcessor.Incoming in = new SqsRequestProcessor.Incoming("POST", "/", Map.of(
                "host", List.of("localhost:9324"), "content-type", List.of("application/x-amz-json-1.0"),
                "x-amz-target", List.of("AmazonSQS.SendMessage")), body, "127.0.0.1", () -> true);
        return processor.process(in).get(30, TimeUnit.SECONDS);
    }

    /** A shard whose every command ends as {@code outcome} says: never, or with a failure. */
    private static final class Shard extends FakeCluster.Shard {
        private final Supplier<CompletableFuture<PartitionOutcome>> outcome;

        Shard(Supplier<CompletableFuture<PartitionOutcome>> outcome) {
            this.outcome = outcome;
        }

        @Override
        public CompletableFuture<PartitionOutcome> submit(PartitionId partition, PartitionCommand command) {
            return outcome.get();
        }

        @Override
        public CompletableFuture<Boolean> awaitConfigured(PartitionId partition, long configVersion) {
            return CompletableFuture.completedFuture(true);
        }
    }
}
