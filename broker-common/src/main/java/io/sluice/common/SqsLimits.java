package io.sluice.common;

/** Every SQS limit in one place (spec section 10). Units are in the names. */
public final class SqsLimits {
    private SqsLimits() {
    }

    public static final int MAX_BATCH_ENTRIES = 10;
    public static final int MAX_BATCH_TOTAL_BYTES = 1_048_576;
    public static final int MAX_MESSAGE_SIZE_BYTES = 1_048_576;
    public static final int MIN_MESSAGE_SIZE_LIMIT_BYTES = 1_024;
    public static final int MAX_MESSAGE_ATTRIBUTES = 10;
    public static final int MAX_ATTRIBUTE_NAME_LENGTH = 256;
    public static final int MAX_ATTRIBUTE_TYPE_LENGTH = 256;

    public static final int MAX_DELAY_SECONDS = 900;
    /** Sluice extension: the longest FIFO reorder window ({@code SluiceReorderWindowMillis}). */
    public static final int MAX_REORDER_WINDOW_MILLIS = 60_000;
    public static final int MAX_VISIBILITY_TIMEOUT_SECONDS = 43_200;
    /** A message may stay in flight at most this long, counted from the receive that leased it. */
    public static final long MAX_INFLIGHT_MILLIS = MAX_VISIBILITY_TIMEOUT_SECONDS * 1000L;
    public static final int MAX_WAIT_TIME_SECONDS = 20;
    public static final int MAX_RECEIVE_MESSAGES = 10;

    public static final int MIN_RETENTION_SECONDS = 60;
    public static final int MAX_RETENTION_SECONDS = 1_209_600;
    public static final int DEFAULT_RETENTION_SECONDS = 345_600;
    public static final int DEFAULT_VISIBILITY_TIMEOUT_SECONDS = 30;

    public static final int MIN_KMS_DATA_KEY_REUSE_PERIOD_SECONDS = 60;
    public static final int MAX_KMS_DATA_KEY_REUSE_PERIOD_SECONDS = 86_400;
    public static final int DEFAULT_KMS_DATA_KEY_REUSE_PERIOD_SECONDS = 300;
    /** Queue {@code Policy} documents are stored, not enforced; only their size is limited. */
    public static final int MAX_POLICY_BYTES = 8_192;
    /** {@code RedriveAllowPolicy.sourceQueueArns} with {@code redrivePermission=byQueue}. */
    public static final int MAX_REDRIVE_ALLOW_SOURCE_ARNS = 10;

    /** Message attributes of type Number: significant digits and magnitude bounds (spec 5.5). */
    public static final int MAX_NUMBER_ATTRIBUTE_PRECISION = 38;
    public static final int MIN_NUMBER_ATTRIBUTE_EXPONENT = -128;
    public static final int MAX_NUMBER_ATTRIBUTE_EXPONENT = 126;

    public static final int MAX_TAGS_PER_QUEUE = 50;
    public static final int MAX_TAG_KEY_LENGTH = 128;
    public static final int MAX_TAG_VALUE_LENGTH = 256;

    public static final int MIN_MAX_RECEIVE_COUNT = 1;
    public static final int MAX_MAX_RECEIVE_COUNT = 1000;

    /** FIFO deduplication window. */
    public static final long DEDUPLICATION_WINDOW_MILLIS = 5 * 60 * 1000L;
    /** How long a FIFO ReceiveRequestAttemptId is remembered. */
    public static final long RECEIVE_ATTEMPT_WINDOW_MILLIS = 5 * 60 * 1000L;
    public static final int MAX_FIFO_ID_LENGTH = 128;

    public static final int DEFAULT_MAX_INFLIGHT_STANDARD = 120_000;
    public static final int DEFAULT_MAX_INFLIGHT_FIFO = 120_000;

    public static final long PURGE_INTERVAL_MILLIS = 60_000L;
    public static final long RECREATE_AFTER_DELETE_MILLIS = 60_000L;

    public static final int MAX_QUEUE_NAME_LENGTH = 80;
    /** FIFO queue names end in {@code .fifo}, which counts toward {@link #MAX_QUEUE_NAME_LENGTH}. */
    public static final String FIFO_QUEUE_SUFFIX = ".fifo";
    public static final int MAX_BATCH_ENTRY_ID_LENGTH = 80;
    public static final int MAX_LIST_QUEUES_RESULTS = 1000;

    /** XML 1.0 character set, the characters SQS allows in bodies and string attribute values. */
    public static boolean isAllowedCodePoint(int cp) {
        return cp == 0x9 || cp == 0xA || cp == 0xD
                || (cp >= 0x20 && cp <= 0xD7FF)
                || (cp >= 0xE000 && cp <= 0xFFFD)
                || (cp >= 0x10000 && cp <= 0x10FFFF);
    }

    /** True when every code point is allowed; an unpaired surrogate is not. */
    public static boolean hasOnlyAllowedCharacters(CharSequence text) {
        for (int i = 0; i < text.length(); ) {
            char c = text.charAt(i);
            if (c >= 0x20 && c < 0xD800) { // the common case: allowed, and no surrogate to pair
                i++;
                continue;
            }
            int cp;
            if (Character.isHighSurrogate(c)) {
                if (i + 1 >= text.length() || !Character.isLowSurrogate(text.charAt(i + 1))) {
                    return false;
                }
                cp = Character.toCodePoint(c, text.charAt(i + 1));
                i += 2;
            } else if (Character.isLowSurrogate(c)) {
                return false;
            } else {
                cp = c;
                i++;
            }
            if (!isAllowedCodePoint(cp)) {
                return false;
            }
        }
        return true;
    }

    /** FIFO group, deduplication and receive-attempt ids: 1-128 ASCII letters, digits and punctuation. */
    public static boolean isValidFifoId(String id) {
        if (id == null || id.isEmpty() || id.length() > MAX_FIFO_ID_LENGTH) {
            return false;
        }
        for (int i = 0; i < id.length(); i++) {
            char c = id.charAt(i);
            if (c < 0x21 || c > 0x7E) {
                return false;
            }
        }
        return true;
    }
}
