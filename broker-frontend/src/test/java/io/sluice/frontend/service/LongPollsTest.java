package io.sluice.frontend.service;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.sluice.common.ManualClock;
import io.sluice.partition.Effect;
import io.sluice.partition.PartitionId;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** An arrival wakes as many parked polls as there are visible messages, not every poll parked on the queue. */
class LongPollsTest {
    private static final PartitionId P = new PartitionId(1, 0);

    @Test
    void anArrivalWakesAsManyPollsAsThereAreMessages() {
        try (LongPolls polls = new LongPolls(new ManualClock(0))) {
            List<CompletableFuture<Void>> parked = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                parked.add(polls.register(List.of(P), 20_000));
            }
            polls.onEffects(List.of(new Effect.MessagesAvailable(P, 2)));
            assertEquals(2, parked.stream().filter(CompletableFuture::isDone).count());
            assertEquals(3, polls.parked(), "the others stay parked");

            polls.onEffects(List.of(new Effect.MessagesAvailable(P, 0)));
            assertEquals(3, parked.stream().filter(CompletableFuture::isDone).count(), "at least one always wakes");

            polls.onEffects(List.of(new Effect.MessagesAvailable(P, Integer.MAX_VALUE)));
            assertEquals(5, parked.stream().filter(CompletableFuture::isDone).count(), "an unknown count wakes all");
            assertEquals(0, polls.parked());
        }
    }
}
