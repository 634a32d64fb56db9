package io.sluice.frontend.auth;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.HexFormat;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/** The hash and HMAC primitives of AWS Signature Version 4. Outputs are lower-case hex. */
final class SigV4Crypto {
    static final String ALGORITHM = "AWS4-HMAC-SHA256";
    static final String TERMINATOR = "aws4_request";

    private static final HexFormat HEX = HexFormat.of();

    private SigV4Crypto() {
    }

    /** One SHA-256 and one HMAC-SHA256 engine per thread (event loops live long): no provider lookup per use. */
    private static final ThreadLocal<MessageDigest> SHA256 = ThreadLocal.withInitial(() -> {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("SHA-256 is a required JDK algorithm", e);
        }
    });
    private static final ThreadLocal<Mac> HMAC_SHA256 = ThreadLocal.withInitial(() -> {
        try {
            return Mac.getInstance("HmacSHA256");
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is a required JDK algorithm", e);
        }
    });

    static String sha256Hex(byte[] data) {
        return HEX.formatHex(SHA256.get().digest(data)); // digest() resets the engine
    }

    static String sha256Hex(String utf8) {
        return sha256Hex(utf8.getBytes(StandardCharsets.UTF_8));
    }

    /** kSigning = HMAC(HMAC(HMAC(HMAC("AWS4" + secret, date), region), service), "aws4_request"). */
    static byte[] signingKey(String secretKey, String scopeDate, String region, String service) {
        byte[] kDate = hmac(("AWS4" + secretKey).getBytes(StandardCharsets.UTF_8), scopeDate);
        byte[] kRegion = hmac(kDate, region);
        byte[] kService = hmac(kRegion, service);
        return hmac(kService, TERMINATOR);
    }

    /** Hex HMAC-SHA256 of the string to sign under the signing key: the signature. */
    static String signature(byte[] signingKey, String stringToSign) {
        return HEX.formatHex(hmac(signingKey, stringToSign));
    }

    static String hex(byte[] bytes) {
        return HEX.formatHex(bytes);
    }

    private static byte[] hmac(byte[] key, String data) {
        Mac mac = HMAC_SHA256.get();
        try {
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("an HMAC-SHA256 key of " + key.length + " bytes was refused", e);
        }
        return mac.doFinal(data.getBytes(StandardCharsets.UTF_8)); // doFinal() resets the engine
    }
}
