package io.sluice.partition;

/** Why a message was handed off to the dead-letter queue. Codes are stored: add, never renumber. */
public enum DeadLetterReason {
    MAX_RECEIVES_EXCEEDED(1),
    RETENTION_EXPIRED(2),
    SOURCE_QUEUE_DELETED(3);

    private final int code;

    DeadLetterReason(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }

    public static DeadLetterReason ofCode(int code) {
        for (DeadLetterReason r : values()) {
            if (r.code == code) {
                return r;
            }
        }
        throw new IllegalArgumentException("unknown dead-letter reason code " + code);
    }
}
