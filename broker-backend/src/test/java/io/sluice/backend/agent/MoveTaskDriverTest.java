package io.sluice.backend.agent;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.backend.shard.OneReplicaShard;
import io.sluice.catalog.QueueMetadata;
import io.sluice.common.SystemClock;
import io.sluice.common.validation.QueueAttributesValidator;
import io.sluice.metadata.raft.CachedCatalog;
import io.sluice.metadata.raft.MetadataClient;
import io.sluice.partition.MoveTask;
import io.sluice.partition.NewMessage;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionConfig;
import io.sluice.partition.PartitionId;
import io.sluice.partition.PartitionResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A shard leader's move-task driver on real parts (a one-member metadata group, a shard on RocksDB) whose cached
 * catalog lags: the task's destination was created after the cache's last refresh (in a cluster, created through a
 * frontend a moment before StartMessageMoveTask, while the dead-letter queue's primary refreshes its copy once a
 * second), or a redrive's source queue was. The driver asks the metadata group before a missing destination counts
 * as refused, so the task completes instead of failing with NonExistentQueue; a destination that really does not
 * exist still fails it.
 */
class MoveTaskDriverTest {
    private static final long AN_HOUR_MILLIS = 3_600_000;

    @TempDir
    Path dir;
    OneMemberMetadata metadata;
    MetadataClient client;
    /** The catalog queues are created through (a frontend's, say). */
    CachedCatalog writer;
    /** The driver's: refreshed only when asked, so it lags behind {@link #writer}. */
    CachedCatalog lagging;
    OneReplicaShard shard;
    PartitionId dlq;

    @BeforeEach
    void start() throws Exception {
        metadata = OneMemberMetadata.start(dir.resolve("metadata"));
        client = metadata.client();
        writer = new CachedCatalog(client, 100);
        lagging = new CachedCatalog(client, AN_HOUR_MILLIS, false);
        shard = new OneReplicaShard(dir.resolve("shard"), SystemClock.INSTANCE);
        dlq = new PartitionId(create("dlq").queueId(), 0);
        for (int i = 0; i < 3; i++) {
            shard.submit(dlq, new PartitionCommand.Send(List.of(NewMessage.of("m-" + i, "body-" + i)))).join();
        }
        lagging.refresh(); // knows the dead-letter queue; the destination comes after
    }

    @AfterEach
    void stop() throws Exception {
        for (AutoCloseable c : new AutoCloseable[] {shard, lagging, writer, metadata}) {
            if (c != null) { // a start that failed part of the way
                c.close();
            }
        }
    }

    private QueueMetadata create(String name) {
        var validated = QueueAttributesValidator.forCreate(name, Map.of()).orElseThrow();
        QueueMetadata q = writer.create(name, false, validated.toStringMap(), Map.of(), 1,
                System.currentTimeMillis()).queue();
        shard.createPartition(new PartitionId(q.queueId(), 0), PartitionConfig.forQueue(q, validated, 1000)).join();
        return q;
    }

    private static String arn(String queueName) {
        return "arn:aws:sqs:us-east-1:000000000000:" + queueName;
    }

    private MoveTask moveTo(String destinationName) {
        return move(dlq, arn(destinationName));
    }

    /** Starts a task on {@code from} (to {@code destinationArn}, or null: back to each message's source) and drives it. */
    private MoveTask move(PartitionId from, String destinationArn) {
        return move(from, destinationArn, shard);
    }

    private MoveTask move(PartitionId from, String destinationArn, io.sluice.partition.PartitionService via) {
        var started = shard.submit(from, new PartitionCommand.StartMoveTask("task-1", destinationArn, 0,
                System.currentTimeMillis())).join();
        assertFalse(started.response() instanceof PartitionResponse.Rejected, "started: " + started.response());
        try (MoveTaskDriver driver = new MoveTaskDriver(lagging::image, lagging::refresh, via,
                () -> shard.core().moveTasksToDrive(), p -> true).start()) {
            MoveTask ended = await().atMost(Duration.ofSeconds(60)).until(() -> shard.moveTasks(from).join().get(0),
                    t -> t.status() != MoveTask.Status.RUNNING && t.leased().isEmpty());
            assertEquals(ended.moved(), driver.moved(), "the driver's own count (its metric)");
            return ended;
        }
    }

    @Test
    void aDestinationCreatedAfterTheCachedCatalogIsFound() {
        QueueMetadata destination = create("fresh");
        assertFalse(lagging.image().queues().containsKey("fresh"), "the driver's catalog lags (the test's premise)");

        MoveTask done = moveTo("fresh");

        assertEquals(MoveTask.Status.COMPLETED, done.status(), "failure: " + done.failureReason());
        assertEquals(3, done.moved());
        assertEquals(3, shard.counts(new PartitionId(destination.queueId(), 0)).join().visible());
        assertEquals(0, shard.counts(dlq).join().visible());
    }

    @Test
    void aRedriveToASourceQueueCreatedAfterTheCachedCatalogIsFound() {
        PartitionId deadLetters = new PartitionId(create("dlq-2").queueId(), 0);
        lagging.refresh(); // knows this dead-letter queue, not the source created next
        QueueMetadata source = create("late-source");
        long now = System.currentTimeMillis();
        for (int i = 0; i < 3; i++) { // as a hand-off stores them: the queue they were dead-lettered from
            shard.submit(deadLetters, new PartitionCommand.Send(List.of(new NewMessage("d-" + i, "dead-" + i, Map.of(),
                    Map.of(), -1, null, null, null, new NewMessage.Provenance(now, 3, now, arn("late-source")))))).join();
        }
        assertFalse(lagging.image().queues().containsKey("late-source"), "the driver's catalog lags (the premise)");

        MoveTask done = move(deadLetters, null);

        assertEquals(MoveTask.Status.COMPLETED, done.status(), "failure: " + done.failureReason());
        assertEquals(3, done.moved());
        assertEquals(3, shard.counts(new PartitionId(source.queueId(), 0)).join().visible());
    }

    @Test
    void aDestinationThatDoesNotExistStillFailsTheTask() {
        MoveTask done = moveTo("nowhere");

        assertEquals(MoveTask.Status.FAILED, done.status());
        assertEquals("AWS.SimpleQueueService.NonExistentQueue", done.failureReason());
        assertEquals(0, done.moved());
        assertEquals(3, shard.counts(dlq).join().visible(), "the messages stay in the dead-letter queue");
    }

    /** A move copies its messages in a few sends, not one each, and in their order. */
    @Test
    void aMoveSendsItsCopiesInBatches() {
        for (int i = 3; i < 100; i++) {
            shard.submit(dlq, new PartitionCommand.Send(List.of(NewMessage.of("m-" + i, "body-" + i)))).join();
        }
        QueueMetadata destination = create("bulk");
        PartitionId to = new PartitionId(destination.queueId(), 0);
        DeadLetterHandOffsTest.Flaky counting = new DeadLetterHandOffsTest.Flaky(shard, to);

        MoveTask done = move(dlq, arn("bulk"), counting);

        assertEquals(MoveTask.Status.COMPLETED, done.status(), "failure: " + done.failureReason());
        assertEquals(100, done.moved());
        assertEquals(100, counting.copies.get());
        assertTrue(counting.copySends.get() <= 2 * ((100 + MoveTaskDriver.BATCH - 1) / MoveTaskDriver.BATCH),
                counting.copySends.get() + " sends for 100 copies");
        assertEquals(100, shard.counts(to).join().visible());
    }

    /**
     * A destination deleted a moment ago, still in the driver's cached catalog: the copies land in a partition not yet
     * retired, but they do not count as moved; the task fails and the messages stay in the dead-letter queue.
     */
    @Test
    void aDestinationDeletedMeanwhileFailsTheTaskAndKeepsTheMessages() {
        create("gone");
        lagging.refresh();
        writer.delete("gone", System.currentTimeMillis());
        assertTrue(lagging.image().queues().containsKey("gone"), "the driver's catalog lags (the premise)");

        MoveTask done = moveTo("gone");

        assertEquals(MoveTask.Status.FAILED, done.status());
        assertEquals("AWS.SimpleQueueService.NonExistentQueue", done.failureReason());
        assertEquals(0, done.moved());
        assertEquals(3, shard.counts(dlq).join().visible(), "the messages stay in the dead-letter queue");
    }
}
