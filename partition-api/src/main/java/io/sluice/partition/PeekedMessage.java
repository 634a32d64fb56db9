package io.sluice.partition;

/**
 * A message as a peek sees it (the console's "next messages"): its stored copy and how often it was received, read
 * without leasing it or counting a receive.
 *
 * @param seq          the message's sequence number in its partition
 * @param receiveCount receives so far (this peek is not one)
 */
public record PeekedMessage(long seq, int receiveCount, StoredMessage message) {
}
