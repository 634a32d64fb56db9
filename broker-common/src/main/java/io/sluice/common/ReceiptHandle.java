package io.sluice.common;

import java.nio.ByteBuffer;
import java.util.Base64;
import java.util.Optional;
import java.util.zip.CRC32C;

/**
 * An opaque receipt handle. It names the queue incarnation ({@code queueId}, so a handle of a deleted and
 * re-created queue is foreign), the partition, the message's sequence in that partition, and the receive it
 * belongs to ({@code receiveCount}), so a handle from an earlier receive of the same message is recognised as
 * stale.
 *
 * <p>Wire form: URL-safe base64 (no padding) of {@code version(1) queueId(8) partition(4) seq(8)
 * receiveCount(4) crc32c(4)}. The checksum makes a mangled handle {@code ReceiptHandleIsInvalid} rather
 * than a reference to some other message.
 */
public record ReceiptHandle(long queueId, int partition, long seq, int receiveCount) {
    private static final byte VERSION = 1;
    private static final int PAYLOAD_BYTES = 1 + 8 + 4 + 8 + 4;
    private static final int TOTAL_BYTES = PAYLOAD_BYTES + 4;
    /** Characters of {@link #encode()}: every handle has this length. */
    public static final int ENCODED_LENGTH = (TOTAL_BYTES * 8 + 5) / 6;

    public String encode() {
        ByteBuffer buf = ByteBuffer.allocate(TOTAL_BYTES);
        buf.put(VERSION).putLong(queueId).putInt(partition).putLong(seq).putInt(receiveCount);
        CRC32C crc = new CRC32C();
        crc.update(buf.array(), 0, PAYLOAD_BYTES);
        buf.putInt((int) crc.getValue());
        return Base64.getUrlEncoder().withoutPadding().encodeToString(buf.array());
    }

    /** Parses a handle; empty for anything malformed, never an exception. */
    public static Optional<ReceiptHandle> decode(String text) {
        if (text == null || text.length() != ENCODED_LENGTH) {
            return Optional.empty();
        }
        byte[] bytes;
        try {
            bytes = Base64.getUrlDecoder().decode(text);
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
        if (bytes.length != TOTAL_BYTES || bytes[0] != VERSION) {
            return Optional.empty();
        }
        ByteBuffer buf = ByteBuffer.wrap(bytes);
        CRC32C crc = new CRC32C();
        crc.update(bytes, 0, PAYLOAD_BYTES);
        if (buf.getInt(PAYLOAD_BYTES) != (int) crc.getValue()) {
            return Optional.empty();
        }
        buf.position(1);
        return Optional.of(new ReceiptHandle(buf.getLong(), buf.getInt(), buf.getLong(), buf.getInt()));
    }
}
