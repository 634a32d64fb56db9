package io.sluice.frontend.http;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Per-queue series of a frontend go once their queue left the catalog, whichever frontend deleted it. */
class QueueSeriesCleanupTest {
    @Test
    void seriesOfQueuesNoLongerInTheCatalogAreRemoved() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        SqsRequestProcessor processor = new SqsRequestProcessor(null, null, null, Runnable::run, registry,
                AccessKeyRateLimiter.UNLIMITED, queue -> queue.equals("kept"));
        for (String queue : List.of("kept", "gone")) {
            registry.counter("sluice.queue.empty_receives", "queue", queue).increment();
            registry.counter("sluice.queue.throttled", "queue", queue, "reason", "rate").increment();
        }
        registry.counter("sqs.usage.requests", "access_key", "k").increment();

        processor.forgetDeletedQueues();

        assertEquals(List.of("kept", "kept"), registry.getMeters().stream().map(m -> m.getId().getTag("queue"))
                .filter(q -> q != null).toList());
        assertEquals(1, registry.find("sqs.usage.requests").meters().size(), "other series untouched");
    }
}
