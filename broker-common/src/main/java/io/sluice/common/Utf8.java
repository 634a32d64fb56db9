package io.sluice.common;

/** UTF-8 helpers that avoid allocating an encoded copy just to measure it. */
public final class Utf8 {
    private Utf8() {
    }

    /** Encoded length in bytes; an unpaired surrogate counts as the 1-byte '?' Java's encoder writes. */
    public static int length(CharSequence s) {
        int bytes = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                bytes += 1;
            } else if (c < 0x800) {
                bytes += 2;
            } else if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                bytes += 4;
                i++;
            } else if (Character.isSurrogate(c)) {
                bytes += 1;
            } else {
                bytes += 3;
            }
        }
        return bytes;
    }
}
