package io.sluice.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.common.ReceiptHandle;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The nemesis checker's double-delivery rule, on the histories that matter: a lease delivered again inside its window
 * is a finding; an older lease whose answer came late (after a newer one, as after a paused leader in the 30-minute
 * run of 2026-12-06: receive counts 3 then 2) is not; the same lease answered twice is.
 */
class HistoryTest {
    private static final int VISIBILITY = 5;
    private static final long SLACK_MILLIS = 800;

    private static long ms(long millis) {
        return TimeUnit.MILLISECONDS.toNanos(millis);
    }

    private static History.Receive receive(int count, long startMillis, long endMillis) {
        return new History.Receive("q", "body", "id-1", "receipt-" + count + "-" + startMillis, count,
                ms(startMillis), ms(endMillis), VISIBILITY, 0);
    }

    private static int doubles(History.Receive... receives) {
        History h = new History();
        h.receives.addAll(java.util.List.of(receives));
        return h.check(Map.of(), Set.of(), SLACK_MILLIS).unexplainedDoubleDeliveries().size();
    }

    @Test
    void aLeaseGrantedAgainInsideItsWindowIsAFinding() {
        assertEquals(1, doubles(receive(2, 1_000, 1_010), receive(3, 2_000, 2_010)));
        assertEquals(0, doubles(receive(2, 1_000, 1_010), receive(3, 6_000, 6_010)), "after the window");
    }

    @Test
    void anOlderLeaseAnsweredLateIsNot() {
        // the run's case: a receive held up 5.5 s by a paused leader got the count-2 lease, whose window ended before
        // the count-3 lease a later receive got and answered first
        assertEquals(0, doubles(receive(3, 1_380_601, 1_380_614), receive(2, 1_375_329, 1_380_807)));
    }

    @Test
    void theSameLeaseAnsweredTwiceIsAFinding() {
        assertEquals(1, doubles(receive(2, 1_000, 1_010), receive(2, 1_500, 1_510)));
    }

    @Test
    void aFindingSaysWhereEachCopyIsStoredAndWhenItsTimesStart() {
        History h = new History();
        // as clients hold them: sealed (the handle, then its MAC)
        io.sluice.frontend.service.ReceiptHandleSeal seal = new io.sluice.frontend.service.ReceiptHandleSeal(
                () -> java.util.Base64.getEncoder().encodeToString(new byte[32]));
        h.receives.add(new History.Receive("q", "body", "id-1", seal.seal(new ReceiptHandle(7, 0, 41, 1)), 1,
                ms(1_000), ms(1_010), VISIBILITY, 0));
        h.receives.add(new History.Receive("q", "body", "id-1", seal.seal(new ReceiptHandle(7, 0, 58, 1)), 1,
                ms(1_500), ms(1_510), VISIBILITY, 0));
        String finding = h.check(Map.of(), Set.of(), SLACK_MILLIS).unexplainedDoubleDeliveries().get(0);
        assertTrue(finding.contains("stored at partition 0 seq 41 then partition 0 seq 58"), finding);
        assertTrue(finding.matches(".*; \\+0 is \\d{4}-\\d\\d-\\d\\dT[0-9:.]+Z\\)"),
                "+0 on the wall clock: " + finding);
    }
}
