package io.sluice.backend.shard;

import io.sluice.common.Clock;
import java.util.function.LongSupplier;

/**
 * The time a shard leader stamps on its log entries (and reads counts at), kept within {@code maxSkewMillis} of a
 * reference clock even when this machine's wall clock is wrong.
 *
 * <p>Every replica applies an entry at the leader's stamp, so a leader whose clock runs ahead would make in-flight
 * messages visible early (double delivery), end deduplication windows and expire retained messages, and a clock
 * behind would hold them back. The wall clock is therefore trusted only as far as it agrees with a reference:
 *
 * <ul>
 *   <li>With a reference (the metadata leader's clock, read on each heartbeat round trip,
 *       {@link #observeReference}), the reference is projected forward on this process's monotonic clock, and the
 *       stamp is the wall clock clamped to that projection ± {@code maxSkewMillis}. A wall clock that jumps, or was
 *       wrong from the start, cannot move the stamp further than that.</li>
 *   <li>Before any reference (the first seconds after start), a stamp is at most the last stamp this replica applied
 *       plus the monotonic time since it applied it, plus {@code maxSkewMillis}.</li>
 * </ul>
 *
 * <p>{@link #skewed()} says this machine's wall clock is off by more than the bound: its backend then steps down from
 * every shard it leads (the stamps are already corrected; stepping down puts a replica with a sound clock in charge)
 * and {@link #offsetMillis()} is exported as {@code sluice_clock_offset_seconds}.
 */
public final class LeaderClock {
    /** Default bound between a leader's wall clock and the reference (configurable per backend). */
    public static final long DEFAULT_MAX_SKEW_MILLIS = 1_000;
    /** A reference read over a round trip longer than this says too little about the offset: ignored. */
    static final long MAX_ROUND_TRIP_MILLIS = 1_000;

    private final Clock wall;
    private final LongSupplier nanos;
    private final long maxSkewMillis;
    private volatile Reference reference;

    /** The reference clock's time at a moment of this process's monotonic clock. */
    private record Reference(long millis, long atNanos) {
    }

    public LeaderClock(Clock wall, LongSupplier monotonicNanos, long maxSkewMillis) {
        if (maxSkewMillis <= 0) {
            throw new IllegalArgumentException("maxSkewMillis must be positive");
        }
        this.wall = wall;
        this.nanos = monotonicNanos;
        this.maxSkewMillis = maxSkewMillis;
    }

    public LeaderClock(Clock wall) {
        this(wall, System::nanoTime, DEFAULT_MAX_SKEW_MILLIS);
    }

    public long maxSkewMillis() {
        return maxSkewMillis;
    }

    /**
     * A reading of the reference clock taken between two readings of this machine's wall clock: the reference's time
     * is taken to be at the midpoint of the round trip. Readings over slow round trips are ignored.
     *
     * @return whether the reading was used
     */
    public boolean observeReference(long referenceMillis, long sentAtNanos, long receivedAtNanos) {
        long roundTripNanos = receivedAtNanos - sentAtNanos;
        if (roundTripNanos < 0 || roundTripNanos > MAX_ROUND_TRIP_MILLIS * 1_000_000) {
            return false;
        }
        reference = new Reference(referenceMillis, sentAtNanos + roundTripNanos / 2);
        return true;
    }

    /** The reference's time now, projected on the monotonic clock, or {@code Long.MIN_VALUE} if none was read. */
    private long projected(long nowNanos) {
        Reference r = reference;
        return r == null ? Long.MIN_VALUE : r.millis + (nowNanos - r.atNanos) / 1_000_000;
    }

    /** This machine's wall clock minus the reference's time (0 before any reference). */
    public long offsetMillis() {
        long p = projected(nanos.getAsLong());
        return p == Long.MIN_VALUE ? 0 : wall.nowMillis() - p;
    }

    /** Whether this machine's wall clock is further than the bound from the reference. */
    public boolean skewed() {
        return Math.abs(offsetMillis()) > maxSkewMillis;
    }

    /** Now, for reads on this replica: the wall clock, clamped to the reference when there is one. */
    public long now() {
        long n = nanos.getAsLong();
        long w = wall.nowMillis();
        long p = projected(n);
        return p == Long.MIN_VALUE ? w : Math.max(p - maxSkewMillis, Math.min(w, p + maxSkewMillis));
    }

    /**
     * The time for the next entry a leader stamps.
     *
     * @param lastStampMillis the leader time of the last entry this replica applied, or {@code Long.MIN_VALUE}
     * @param lastStampNanos  this process's monotonic clock when it applied it
     */
    public long stamp(long lastStampMillis, long lastStampNanos) {
        long n = nanos.getAsLong();
        if (reference != null || lastStampMillis == Long.MIN_VALUE) {
            return now();
        }
        long bound = lastStampMillis + Math.max(0, (n - lastStampNanos) / 1_000_000) + maxSkewMillis;
        return Math.min(wall.nowMillis(), bound);
    }

    /** This process's monotonic clock (what {@link #stamp}'s {@code lastStampNanos} is read from). */
    public long monotonicNanos() {
        return nanos.getAsLong();
    }
}
