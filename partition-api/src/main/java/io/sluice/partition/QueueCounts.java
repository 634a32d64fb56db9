package io.sluice.partition;

/**
 * The figures behind {@code ApproximateNumberOfMessages*} and the queue metrics.
 *
 * @param oldestRetentionBaseMillis enqueue time of the oldest live message (-1 if none): its age is the
 *                                  "age of oldest message" signal
 */
public record QueueCounts(int visible, int inflight, int delayed, int deadLetterPending,
                          long oldestRetentionBaseMillis) {
}
