package io.sluice.frontend.auth;

import io.sluice.common.Clock;
import io.sluice.common.SqsError;
import io.sluice.common.SqsException;
import io.sluice.common.SqsFailure;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Verifies AWS Signature Version 4 on incoming SQS requests (spec section 9), in either the
 * {@code Authorization} header form or the presigned query form. Thread-safe; never throws on request content:
 * every problem with a request becomes an {@link AuthResult.Rejected}.
 */
public final class SigV4Verifier {
    /** The credential scope's service name. */
    public static final String SERVICE = "sqs";
    /** Largest accepted difference between our clock and {@code X-Amz-Date}. */
    public static final Duration MAX_CLOCK_SKEW = Duration.ofMinutes(15);

    private static final String UNSIGNED_PAYLOAD = "UNSIGNED-PAYLOAD";
    private static final String CONTENT_SHA256 = "x-amz-content-sha256";
    private static final String EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

    private final CredentialStore credentials;
    private final Clock clock;
    private final Optional<String> requiredRegion;
    private final boolean allowUnsignedPayload;

    /** A verifier that accepts any region named in the credential scope. */
    public SigV4Verifier(CredentialStore credentials, Clock clock) {
        this(credentials, clock, Optional.empty());
    }

    /** A verifier that, when {@code requiredRegion} is present, rejects scopes naming another region. */
    public SigV4Verifier(CredentialStore credentials, Clock clock, Optional<String> requiredRegion) {
        this(credentials, clock, requiredRegion, false);
    }

    /**
     * @param allowUnsignedPayload whether a header-signed request may declare {@code UNSIGNED-PAYLOAD} (its body then
     *                             is not covered by the signature); refused unless configured
     */
    public SigV4Verifier(CredentialStore credentials, Clock clock, Optional<String> requiredRegion,
                         boolean allowUnsignedPayload) {
        this.credentials = Objects.requireNonNull(credentials, "credentials");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.requiredRegion = Objects.requireNonNull(requiredRegion, "requiredRegion");
        this.allowUnsignedPayload = allowUnsignedPayload;
    }

    /**
     * Authenticates {@code request}. Failures: {@code MissingAuthenticationToken} without any SigV4 data,
     * {@code IncompleteSignature} for malformed SigV4 data, {@code InvalidClientTokenId} for an unknown
     * access key, {@code SignatureDoesNotMatch} for a wrong scope, a stale or future date, a payload hash
     * mismatch or a wrong signature, and for what a signature would not cover: a presigned request with a body (its
     * parameters come from the signed query only), an {@code X-Amz-Target} header left out of the signed headers, a
     * header-signed {@code UNSIGNED-PAYLOAD} unless allowed.
     */
    public AuthResult verify(SignedRequest request) {
        Objects.requireNonNull(request, "request");
        try {
            return AuthResult.authenticated(authenticate(request));
        } catch (SqsException e) {
            return AuthResult.rejected(e.failure());
        }
    }

    private String authenticate(SignedRequest request) {
        QueryString query = QueryString.parse(request.rawQuery());
        SigV4Params params = parse(request, query);
        checkScope(params);
        checkTime(params);
        checkCoverage(request, params);
        Credentials found = credentials.find(params.accessKeyId())
                .orElseThrow(() -> new SqsException(SqsError.INVALID_CLIENT_TOKEN_ID.failure()));
        List<String> payloadHashes = payloadHashes(request, params.presigned());

        String scope = found.accessKeyId() + "/" + params.scopeDate() + "/" + params.region();
        DerivedKey cached = signingKeys.get(scope);
        boolean fromCache = cached != null && cached.secret().equals(found.secretAccessKey());
        byte[] signingKey = fromCache ? cached.key()
                : SigV4Crypto.signingKey(found.secretAccessKey(), params.scopeDate(), params.region(), SERVICE);
        String canonicalQuery = query.canonical(params.presigned() ? SigV4Params.X_AMZ_SIGNATURE : null);
        byte[] provided = params.signature().getBytes(StandardCharsets.US_ASCII);
        boolean matched = false;
        for (String payloadHash : payloadHashes) {
            String canonicalRequest = SigV4Canonical.canonicalRequest(request, canonicalQuery,
                    params.signedHeaders(), payloadHash);
            String expected = SigV4Crypto.signature(signingKey,
                    SigV4Canonical.stringToSign(params.amzDate(), params.scope(), canonicalRequest));
            matched |= MessageDigest.isEqual(expected.getBytes(StandardCharsets.US_ASCII), provided);
        }
        if (!matched) {
            throw new SqsException(SqsError.SIGNATURE_DOES_NOT_MATCH.failure());
        }
        if (!fromCache) { // only a scope a request was signed for: a request that fails adds nothing
            if (signingKeys.size() >= MAX_SIGNING_KEYS) {
                signingKeys.clear(); // days, regions and keys in use are few; forget them all rather than track age
            }
            signingKeys.put(scope, new DerivedKey(found.secretAccessKey(), signingKey));
        }
        return found.accessKeyId();
    }

    private static final int MAX_SIGNING_KEYS = 1024;
    /**
     * Signing keys (four HMACs each) by {@code accessKeyId/date/region}, kept once a request signed with one verified,
     * as AWS' own signers keep them, and derived again whenever the access key's secret is not the one a kept key
     * came from.
     */
    private final Map<String, DerivedKey> signingKeys = new ConcurrentHashMap<>();

    /** A signing key and the secret it was derived from; never printed. */
    private record DerivedKey(String secret, byte[] key) {
        @Override
        public String toString() {
            return "DerivedKey[redacted]";
        }
    }

    private static SigV4Params parse(SignedRequest request, QueryString query) {
        List<String> authorization = request.header("authorization");
        boolean presigned = query.contains(SigV4Params.X_AMZ_ALGORITHM)
                || query.contains(SigV4Params.X_AMZ_CREDENTIAL) || query.contains(SigV4Params.X_AMZ_SIGNATURE);
        if (!authorization.isEmpty() && presigned) {
            throw new SqsException(SqsError.INCOMPLETE_SIGNATURE, "Only one auth mechanism allowed; only the "
                    + "X-Amz-Algorithm query parameter or the Authorization header should be specified.");
        }
        if (authorization.size() > 1) {
            throw new SqsException(SqsError.INCOMPLETE_SIGNATURE, "Only one Authorization header is allowed.");
        }
        if (authorization.size() == 1) {
            return SigV4Params.fromAuthorizationHeader(authorization.get(0), request.header("x-amz-date"));
        }
        if (presigned) {
            return SigV4Params.fromQuery(query);
        }
        throw new SqsException(SqsError.MISSING_AUTHENTICATION_TOKEN.failure());
    }

    /** What decides the request must be signed: the action header, and the body unless it is a presigned URL's. */
    private void checkCoverage(SignedRequest request, SigV4Params params) {
        if (params.presigned() && !request.bodySha256().equals(EMPTY_SHA256)) {
            throw mismatch("A presigned request has no body: its parameters come from the signed query only.");
        }
        if (!request.header("x-amz-target").isEmpty() && params.signedHeaders().stream()
                .noneMatch(h -> h.equalsIgnoreCase("x-amz-target"))) {
            throw mismatch("The X-Amz-Target header must be signed.");
        }
        if (!params.presigned() && !allowUnsignedPayload && request.header(CONTENT_SHA256).stream()
                .anyMatch(v -> v.strip().equals(UNSIGNED_PAYLOAD))) {
            throw mismatch("UNSIGNED-PAYLOAD is not accepted: sign the payload.");
        }
    }

    private void checkScope(SigV4Params params) {
        if (!params.terminator().equals(SigV4Crypto.TERMINATOR)) {
            throw mismatch("Credential should be scoped with a valid terminator: '" + SigV4Crypto.TERMINATOR
                    + "', not " + SigV4Params.quote(params.terminator()) + ".");
        }
        if (!params.service().equals(SERVICE)) {
            throw mismatch("Credential should be scoped to correct service: '" + SERVICE + "'.");
        }
        if (requiredRegion.isPresent() && !requiredRegion.get().equals(params.region())) {
            throw mismatch("Credential should be scoped to a valid region, not " + SigV4Params.quote(params.region())
                    + ".");
        }
        String headerDate = params.amzDate().substring(0, 8);
        if (!params.scopeDate().equals(headerDate)) {
            throw mismatch("Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: "
                    + SigV4Params.quote(params.scopeDate()) + " != '" + headerDate + "', from '" + params.amzDate()
                    + "'.");
        }
    }

    /**
     * Accepts request times within {@link #MAX_CLOCK_SKEW} of now; a presigned request with {@code X-Amz-Expires}
     * stays valid until its date plus that many seconds instead.
     */
    private void checkTime(SigV4Params params) {
        long now = clock.nowMillis();
        long signedAt = params.requestTime().toEpochMilli();
        long skew = MAX_CLOCK_SKEW.toMillis();
        if (signedAt > now + skew) {
            throw mismatch("Signature not yet current: " + params.amzDate() + " is still later than "
                    + format(now + skew) + " (" + format(now) + " + 15 min.)");
        }
        if (params.expiresSeconds() != null) {
            long window = params.expiresSeconds() * 1000;
            if (now - signedAt > window) {
                throw mismatch("Signature expired: " + params.amzDate() + " is now earlier than "
                        + format(now - window) + " (" + format(now) + " - " + params.expiresSeconds() + " sec.)");
            }
        } else if (now - signedAt > skew) {
            throw mismatch("Signature expired: " + params.amzDate() + " is now earlier than " + format(now - skew)
                    + " (" + format(now) + " - 15 min.)");
        }
    }

    /**
     * The payload hashes the signer may have used: the {@code x-amz-content-sha256} value when sent (it must be
     * the body's hash or {@code UNSIGNED-PAYLOAD}); otherwise the body's hash, or for a presigned request also
     * {@code UNSIGNED-PAYLOAD}.
     */
    private static List<String> payloadHashes(SignedRequest request, boolean presigned) {
        List<String> declared = request.header(CONTENT_SHA256);
        if (declared.isEmpty()) {
            return presigned ? List.of(request.bodySha256(), UNSIGNED_PAYLOAD) : List.of(request.bodySha256());
        }
        String value = declared.size() == 1 ? declared.get(0).strip() : "";
        if (value.equals(UNSIGNED_PAYLOAD) || value.equalsIgnoreCase(request.bodySha256())) {
            return List.of(value);
        }
        throw mismatch("The provided 'x-amz-content-sha256' header does not match what was computed.");
    }

    private static String format(long epochMillis) {
        return SigV4Params.formatAmzDate(Instant.ofEpochMilli(epochMillis));
    }

    private static SqsException mismatch(String message) {
        return new SqsException(new SqsFailure(SqsError.SIGNATURE_DOES_NOT_MATCH, message));
    }
}
