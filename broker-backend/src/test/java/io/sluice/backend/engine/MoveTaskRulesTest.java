package io.sluice.backend.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.common.SqsError;
import io.sluice.partition.MoveTask;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionConfig;
import io.sluice.partition.PartitionOutcome;
import io.sluice.partition.PartitionResponse;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A partition's share of a message move task: start, lease, finish, cancel, fail, and what survives a reopen. */
class MoveTaskRulesTest {
    @TempDir
    Path dir;

    private static PartitionResponse.Count count(PartitionOutcome o) {
        return assertInstanceOf(PartitionResponse.Count.class, o.response());
    }

    private static SqsError refusal(PartitionOutcome o) {
        return assertInstanceOf(PartitionResponse.Rejected.class, o.response()).failure().error();
    }

    private static List<PartitionResponse.Delivery> lease(EngineFixture q, String task, int max) {
        return assertInstanceOf(PartitionResponse.Received.class,
                q.apply(new PartitionCommand.LeaseMoveBatch(task, max)).response()).deliveries();
    }

    private static List<Long> seqs(List<PartitionResponse.Delivery> deliveries) {
        return deliveries.stream().map(PartitionResponse.Delivery::seq).toList();
    }

    private static MoveTask only(EngineFixture q) {
        List<MoveTask> tasks = q.engine.state().moveTasks();
        assertEquals(1, tasks.size());
        return tasks.get(0);
    }

    private static void send(EngineFixture q, int n) {
        for (int i = 0; i < n; i++) {
            q.send("m" + i);
        }
    }

    @Test
    void aTaskGoesOnPastMoreExpiredMessagesThanOneBatchMaySetAside() {
        try (EngineFixture q = new EngineFixture(dir, PartitionConfig.STANDARD_DEFAULTS.withRetentionSeconds(60))) {
            send(q, ReceiveCommands.MAX_SET_ASIDE + 500); // past retention before the task leases them
            q.advanceSeconds(50);
            send(q, 10);
            q.apply(new PartitionCommand.StartMoveTask("t1", null, 0, 42));
            q.advanceSeconds(11);
            assertTrue(lease(q, "t1", 10).isEmpty(), "the first batch expires a thousand and chooses nothing");
            assertEquals(MoveTask.Status.RUNNING, only(q).status(), "not done: it stopped where one batch may");
            List<PartitionResponse.Delivery> next = lease(q, "t1", 10);
            assertEquals(10, next.size(), "the rest expired on the way, then the live ones");
        }
    }

    @Test
    void aTaskMovesWhatWasVisibleAtItsStartInLeasedBatchesThatAreNotReceives() {
        try (EngineFixture q = new EngineFixture(dir, PartitionConfig.STANDARD_DEFAULTS)) {
            send(q, 5);
            assertEquals(5, count(q.apply(new PartitionCommand.StartMoveTask("t1", null, 0, 42))).count());
            q.send("sent after the start");
            List<PartitionResponse.Delivery> first = lease(q, "t1", 3);
            assertEquals(List.of(1L, 2L, 3L), seqs(first));
            assertTrue(first.stream().allMatch(d -> d.receiveCount() == 0), "a move lease counts no receive");
            assertEquals(List.of(4L, 5L, 6L), q.receive(10, 30).stream().map(d -> d.delivery().seq()).toList(),
                    "consumers do not get a leased batch");
            assertEquals(3, count(q.apply(new PartitionCommand.FinishMoveBatch("t1", seqs(first), seqs(first), null))).count());
            assertEquals(3, only(q).moved());
            assertEquals(MoveTask.Status.RUNNING, only(q).status());
            assertEquals(3, q.engine.state().totals().deleted(), "moved messages leave the queue as deleted ones");

            q.advanceSeconds(31); // the consumer's lease on 4..6 runs out
            List<PartitionResponse.Delivery> second = lease(q, "t1", 10);
            assertEquals(List.of(4L, 5L), seqs(second), "toMove in all: one message is left");
            q.apply(new PartitionCommand.FinishMoveBatch("t1", seqs(second), seqs(second), null));
            assertEquals(MoveTask.Status.COMPLETED, only(q).status());
            assertEquals(5, only(q).moved());
            assertEquals(5, only(q).toMove());
            assertEquals(1, q.engine.state().countsAt(q.clock.nowMillis()).visible());
            assertTrue(lease(q, "t1", 10).isEmpty());
        }
    }

    @Test
    void aBatchLeasedBeforeARestartIsAnsweredAgainAndCountedOnce() {
        try (EngineFixture q = new EngineFixture(dir, PartitionConfig.STANDARD_DEFAULTS)) {
            send(q, 4);
            q.apply(new PartitionCommand.StartMoveTask("t1", "arn:aws:sqs:us-east-1:000000000000:dest", 7, 42));
            List<Long> batch = seqs(lease(q, "t1", 2));
            String before = q.engine.state().describe();
            q.reopen(); // the primary dies mid-batch; the next one loads the task from the store
            assertEquals(before, q.engine.state().describe(), "the task is state: the same after a reload");
            MoveTask t = only(q);
            assertEquals(batch, t.leased());
            assertEquals("arn:aws:sqs:us-east-1:000000000000:dest", t.destinationArn());
            assertEquals(7, t.ratePerSecond());
            assertEquals(batch, seqs(lease(q, "t1", 10)), "the unfinished batch comes first, the same messages");
            assertEquals(2, count(q.apply(new PartitionCommand.FinishMoveBatch("t1", batch, batch, null))).count());
            assertEquals(0, count(q.apply(new PartitionCommand.FinishMoveBatch("t1", batch, batch, null))).count(),
                    "a second driver's finish of the same batch counts nothing");
            assertEquals(2, only(q).moved());
            List<Long> next = seqs(lease(q, "t1", 10));
            assertEquals(List.of(3L, 4L), next);
            assertEquals(0, count(q.apply(new PartitionCommand.FinishMoveBatch("t1", batch, batch, "RequestThrottled")))
                    .count(), "a late finish of the earlier batch neither releases nor fails the current one");
            assertEquals(next, only(q).leased());
            assertEquals(MoveTask.Status.RUNNING, only(q).status());
            assertEquals(0, q.engine.state().countsAt(q.clock.nowMillis()).visible());
        }
    }

    @Test
    void aRefusedCopyFailsTheTaskAndTheRestOfTheBatchIsVisibleAgainAtOnce() {
        try (EngineFixture q = new EngineFixture(dir, PartitionConfig.STANDARD_DEFAULTS)) {
            send(q, 3);
            q.apply(new PartitionCommand.StartMoveTask("t1", null, 0, 42));
            List<Long> batch = seqs(lease(q, "t1", 10));
            assertEquals(3, batch.size());
            q.apply(new PartitionCommand.FinishMoveBatch("t1", batch, List.of(batch.get(0)), "RequestThrottled"));
            MoveTask t = only(q);
            assertEquals(MoveTask.Status.FAILED, t.status());
            assertEquals("RequestThrottled", t.failureReason());
            assertEquals(1, t.moved());
            assertEquals(2, q.engine.state().countsAt(q.clock.nowMillis()).visible());
            assertTrue(lease(q, "t1", 10).isEmpty(), "a failed task leases nothing more");
            assertTrue(q.engine.state().moveTasksToDrive().isEmpty());
        }
    }

    @Test
    void onlyOneTaskRunsAtATimeAndACancelLetsItsLeasedBatchFinish() {
        try (EngineFixture q = new EngineFixture(dir, PartitionConfig.STANDARD_DEFAULTS)) {
            send(q, 3);
            q.apply(new PartitionCommand.StartMoveTask("t1", null, 0, 42));
            assertEquals(SqsError.INVALID_PARAMETER_VALUE,
                    refusal(q.apply(new PartitionCommand.StartMoveTask("t2", null, 0, 43))));
            assertEquals(SqsError.RESOURCE_NOT_FOUND, refusal(q.apply(new PartitionCommand.CancelMoveTask("nope"))));
            List<Long> batch = seqs(lease(q, "t1", 2));
            assertEquals(0, count(q.apply(new PartitionCommand.CancelMoveTask("t1"))).count());
            assertEquals(SqsError.INVALID_PARAMETER_VALUE, refusal(q.apply(new PartitionCommand.CancelMoveTask("t1"))),
                    "only active tasks can be cancelled");
            assertEquals(1, q.engine.state().moveTasksToDrive().size(), "its leased batch still wants finishing");
            assertEquals(batch, seqs(lease(q, "t1", 10)));
            q.apply(new PartitionCommand.FinishMoveBatch("t1", batch, batch, null));
            assertEquals(MoveTask.Status.CANCELLED, only(q).status());
            assertEquals(2, only(q).moved());
            assertTrue(lease(q, "t1", 10).isEmpty());
            assertTrue(q.engine.state().moveTasksToDrive().isEmpty());
            assertEquals(1, count(q.apply(new PartitionCommand.StartMoveTask("t2", null, 0, 43))).count());
        }
    }

    @Test
    void anEmptyQueueCompletesAtOnceAndTheNewestTenTasksAreKept() {
        try (EngineFixture q = new EngineFixture(dir, PartitionConfig.STANDARD_DEFAULTS)) {
            for (int i = 0; i < 12; i++) {
                assertEquals(0, count(q.apply(new PartitionCommand.StartMoveTask("t" + i, null, 0, 100 + i))).count());
            }
            List<MoveTask> tasks = q.engine.state().moveTasks();
            assertEquals(10, tasks.size());
            assertEquals("t11", tasks.get(0).taskId(), "newest first");
            assertEquals("t2", tasks.get(9).taskId());
            assertTrue(tasks.stream().allMatch(t -> t.status() == MoveTask.Status.COMPLETED));
            q.reopen();
            assertEquals(tasks, q.engine.state().moveTasks(), "forgotten ones are gone from the store too");
        }
    }

    @Test
    void aFifoTaskLeasesAGroupInOrderAndKeepsTheGroupBlockedWhileItMoves() {
        try (EngineFixture q = new EngineFixture(dir, PartitionConfig.FIFO_DEFAULTS)) {
            q.sendFifo("g", "a");
            q.sendFifo("g", "b");
            q.sendFifo("h", "c");
            q.apply(new PartitionCommand.StartMoveTask("t1", null, 0, 42));
            List<Long> batch = seqs(lease(q, "t1", 2));
            assertEquals(List.of(1L, 2L), batch, "group g's run, in order");
            assertEquals(List.of("c"), q.bodies(q.receive(10, 30)), "g is held by the move");
            q.apply(new PartitionCommand.FinishMoveBatch("t1", batch, batch, null));
            assertEquals(2, only(q).moved());
        }
    }

    @Test
    void movesCommandsRoundTripThroughTheLogCodec() {
        List<PartitionCommand> commands = List.of(new PartitionCommand.StartMoveTask("t", "arn", 5, 9L),
                new PartitionCommand.StartMoveTask("t", null, 0, 9L), new PartitionCommand.CancelMoveTask("t"),
                new PartitionCommand.LeaseMoveBatch("t", 10),
                new PartitionCommand.FinishMoveBatch("t", List.of(1L, 5L, 6L), List.of(1L, 5L), "RequestThrottled"),
                new PartitionCommand.FinishMoveBatch("t", List.of(), List.of(), null));
        for (PartitionCommand c : commands) {
            var batch = List.of(new io.sluice.partition.CommandCodec.Addressed(EngineFixture.PARTITION, c));
            assertEquals(batch, io.sluice.partition.CommandCodec.decode(io.sluice.partition.CommandCodec.encode(batch)));
        }
        MoveTask t = new MoveTask("t", null, 3, 1, 2, 3, MoveTask.Status.FAILED, "x", List.of(4L), 99L);
        assertEquals(List.of(t), MoveTask.decodeList(MoveTask.encodeList(List.of(t))));
    }

    @Test
    void consumersCannotReleaseALeasedMessageAndOneTakenAfterTheLeaseLapsedStaysTheirs() {
        try (EngineFixture q = new EngineFixture(dir, PartitionConfig.STANDARD_DEFAULTS)) {
            send(q, 2);
            var early = q.receive(10, 5); // a consumer's handles from before the task
            q.advanceSeconds(6);
            q.apply(new PartitionCommand.StartMoveTask("t1", null, 0, 42));
            List<Long> batch = seqs(lease(q, "t1", 10));
            assertEquals(List.of(1L, 2L), batch);
            assertEquals(SqsError.INVALID_PARAMETER_VALUE,
                    q.changeVisibility(early.get(0).delivery().receiptHandle(), 0).error(),
                    "an old handle cannot make a leased message visible to others");
            q.advanceSeconds(MoveTasks.LEASE_SECONDS + 1); // the driver stalled: the lease ran out
            var taken = q.receive(1, 30);
            assertEquals(List.of(1L), taken.stream().map(d -> d.delivery().seq()).toList());
            assertEquals(2, count(q.apply(new PartitionCommand.FinishMoveBatch("t1", batch, batch, null))).count(),
                    "both were copied, so both count as moved");
            assertEquals(2, only(q).moved());
            assertEquals(1, q.engine.state().countsAt(q.clock.nowMillis()).inflight(),
                    "the one the consumer took stays with it; the other was removed");
            assertEquals(null, q.delete(taken.get(0).delivery().receiptHandle()));
        }
    }
}
