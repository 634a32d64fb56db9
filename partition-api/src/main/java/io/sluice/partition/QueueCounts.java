package io.sluice.partition;

/**
 * The figures behind {@code ApproximateNumberOfMessages*} and the queue metrics.
 *
 * @param deadLetterPending         dead-letter hand-offs not yet copied to the dead-letter queue
 * @param oldestRetentionBaseMillis enqueue time of the oldest live message (-1 if none): its age is the
 *                                  "age of oldest message" signal
 * @param oldestHandOffMillis       when the oldest pending dead-letter hand-off was made (-1 if none): a hand-off
 *                                  that stays pending (its dead-letter queue unreachable) shows as a growing age
 * @param arrivalSkewP99Millis      FIFO: the 99th percentile of arrival time minus {@code Sluice.ProducerTime} over
 *                                  the last 5-10 minutes (-1 if no message carried one)
 * @param sentTotal                 messages ever sent to the partition (-1 if not known: an older backend); with
 *                                  {@code receivedTotal}, what the console's rates are computed from
 * @param receivedTotal             deliveries ever made from the partition (-1 if not known)
 */
public record QueueCounts(int visible, int inflight, int delayed, int deadLetterPending,
                          long oldestRetentionBaseMillis, long oldestHandOffMillis, long arrivalSkewP99Millis,
                          long sentTotal, long receivedTotal) {

    /** Without the totals (not known to the caller). */
    public QueueCounts(int visible, int inflight, int delayed, int deadLetterPending, long oldestRetentionBaseMillis,
                       long oldestHandOffMillis, long arrivalSkewP99Millis) {
        this(visible, inflight, delayed, deadLetterPending, oldestRetentionBaseMillis, oldestHandOffMillis,
                arrivalSkewP99Millis, -1, -1);
    }

    /** Without the arrival skew (none observed, or not known to the caller). */
    public QueueCounts(int visible, int inflight, int delayed, int deadLetterPending, long oldestRetentionBaseMillis,
                       long oldestHandOffMillis) {
        this(visible, inflight, delayed, deadLetterPending, oldestRetentionBaseMillis, oldestHandOffMillis, -1);
    }

    /** Without pending hand-offs' age (none pending, or not known to the caller). */
    public QueueCounts(int visible, int inflight, int delayed, int deadLetterPending, long oldestRetentionBaseMillis) {
        this(visible, inflight, delayed, deadLetterPending, oldestRetentionBaseMillis, -1);
    }
}
