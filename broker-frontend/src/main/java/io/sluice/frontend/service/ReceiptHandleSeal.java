package io.sluice.frontend.service;

import io.sluice.common.ReceiptHandle;
import io.sluice.common.SqsError;
import io.sluice.common.SqsException;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.Base64;
import java.util.Optional;
import java.util.function.Supplier;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Receipt handles as clients see them: the handle's own encoding followed by a MAC (HMAC-SHA256, first 16 bytes,
 * URL-safe base64) under the cluster's receipt secret, which the metadata leader sets once and every frontend reads
 * from the catalog. A handle a client made up or altered (another message's sequence, another receive count, a
 * valid checksum and all) fails the MAC and is {@code ReceiptHandleIsInvalid}; the backends never see it.
 */
public final class ReceiptHandleSeal {
    private static final int MAC_BYTES = 16;
    private static final int MAC_CHARS = (MAC_BYTES * 8 + 5) / 6;
    private static final int HANDLE_CHARS = ReceiptHandle.ENCODED_LENGTH;

    private final Supplier<String> secret;
    /** One Mac per thread, rebuilt when the secret differs from the one it was made with. */
    private final ThreadLocal<Keyed> macs = new ThreadLocal<>();

    private record Keyed(String secret, Mac mac) {
    }

    /** @param secret the cluster's receipt secret (base64), null while the cluster has none yet */
    public ReceiptHandleSeal(Supplier<String> secret) {
        this.secret = secret;
    }

    /** The text handed to the client. */
    public String seal(ReceiptHandle handle) {
        String encoded = handle.encode();
        return encoded + tag(currentSecret(), encoded);
    }

    /** The handle {@code text} names if this cluster issued it; empty for anything else, never an exception. */
    public Optional<ReceiptHandle> open(String text) {
        if (text == null || text.length() != HANDLE_CHARS + MAC_CHARS) {
            return Optional.empty();
        }
        String encoded = text.substring(0, HANDLE_CHARS);
        String key = secret.get();
        if (key == null || !MessageDigest.isEqual(tag(key, encoded).getBytes(StandardCharsets.US_ASCII),
                text.substring(HANDLE_CHARS).getBytes(StandardCharsets.US_ASCII))) {
            return Optional.empty();
        }
        return ReceiptHandle.decode(encoded);
    }

    private String currentSecret() {
        String key = secret.get();
        if (key == null) { // only in a cluster's first moments: frontends wait for it before they serve
            throw new SqsException(SqsError.SERVICE_UNAVAILABLE.withMessage("The cluster has no receipt secret yet."));
        }
        return key;
    }

    private String tag(String key, String encoded) {
        Keyed keyed = macs.get();
        if (keyed == null || !keyed.secret().equals(key)) {
            try {
                Mac mac = Mac.getInstance("HmacSHA256");
                mac.init(new SecretKeySpec(Base64.getDecoder().decode(key), "HmacSHA256"));
                keyed = new Keyed(key, mac);
            } catch (GeneralSecurityException | IllegalArgumentException e) {
                throw new IllegalStateException("unusable receipt secret", e);
            }
            macs.set(keyed);
        }
        byte[] full = keyed.mac().doFinal(encoded.getBytes(StandardCharsets.US_ASCII));
        return Base64.getUrlEncoder().withoutPadding().encodeToString(Arrays.copyOf(full, MAC_BYTES));
    }
}
