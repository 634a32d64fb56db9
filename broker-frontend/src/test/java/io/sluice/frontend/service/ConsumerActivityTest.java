package io.sluice.frontend.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Who consumes a queue: sums over the last five minutes, per key and address, bounded. */
class ConsumerActivityTest {
    final AtomicLong now = new AtomicLong(1_000_000);
    final ConsumerActivity activity = new ConsumerActivity(now::get);

    @Test
    void receivesAndDeletesAreSummedPerReceiverOverTheWindow() {
        activity.received("jobs", "worker", "10.0.0.1", 10);
        activity.received("jobs", "worker", "10.0.0.1", 0); // an empty receive is still a call
        activity.deleted("jobs", "worker", "10.0.0.1", 7);
        activity.received("jobs", "worker", "10.0.0.2", 3);
        now.addAndGet(9_000);
        List<ConsumerActivity.Seen> seen = activity.seen("jobs");
        assertEquals(2, seen.size());
        ConsumerActivity.Seen first = seen.get(0);
        assertEquals(new ConsumerActivity.Receiver("worker", "10.0.0.1"), first.receiver(), "most received first");
        assertEquals(2, first.receiveCalls());
        assertEquals(10, first.received());
        assertEquals(3, first.heldApprox());
        assertEquals(10, first.seconds(), "watched for 10 s so far: rates are over that, not the whole window");
        assertEquals(List.of(), activity.seen("other"));
    }

    @Test
    void whatIsOlderThanTheWindowIsForgotten() {
        activity.received("jobs", "worker", "10.0.0.1", 10);
        now.addAndGet(200_000);
        activity.received("jobs", "worker", "10.0.0.1", 1);
        assertEquals(11, activity.seen("jobs").get(0).received());
        now.addAndGet(110_000); // the first receive is 310 s old, the second 110 s
        assertEquals(1, activity.seen("jobs").get(0).received());
        now.addAndGet(200_000); // nothing for 310 s: not a consumer any more
        assertEquals(List.of(), activity.seen("jobs"));
        activity.prune(now.get());
        activity.received("jobs", "worker", "10.0.0.1", 2);
        assertEquals(2, activity.seen("jobs").get(0).received(), "counted afresh");
        assertEquals(1, activity.seen("jobs").get(0).seconds(), "watched again from its return");
    }

    @Test
    void receiversPerQueueAreBounded() {
        for (int i = 0; i < ConsumerActivity.MAX_PER_QUEUE + 20; i++) {
            activity.received("jobs", "worker", "10.0.0." + i, 1);
        }
        assertEquals(ConsumerActivity.MAX_PER_QUEUE, activity.seen("jobs").size());
        activity.received(null, "worker", "10.0.0.1", 1); // an account-wide call names no queue: not counted
        assertTrue(activity.seen("jobs").stream().allMatch(s -> s.received() == 1));
    }
}
