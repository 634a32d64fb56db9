package io.sluice.frontend.auth;

import io.sluice.common.ManualClock;
import io.sluice.common.SqsLimits;
import io.sluice.common.Utf8;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import software.amazon.awssdk.http.SdkHttpFullRequest;
import software.amazon.awssdk.http.SdkHttpMethod;

/**
 * What a frontend spends per request before it reaches a partition, for the load generator's request: a JSON
 * SendMessageBatch of 10 entries of 1 KiB, signed by the AWS SDK's own SigV4 signer. {@code verify} is the whole
 * signature check of one request (parse, scope and time, canonical request, signing key, HMAC) with the body's hash
 * already taken; {@code hashAndVerify} adds the SHA-256 of the body; {@code validateBodies} is the per-entry body
 * check (allowed characters, UTF-8 size) for the 10 bodies. Run: {@code scripts/bench-frontend.sh}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class RequestPathBenchmark {
    private static final String KEY = "AKIAIOSFODNN7EXAMPLE";
    private static final String SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
    private static final Instant SIGNING_TIME = Instant.parse("2025-03-04T05:06:07Z");

    private SignedRequest signed;
    private byte[] body;
    private List<String> bodies;
    private SigV4Verifier verifier;

    @Setup
    public void setUp() {
        StringBuilder json = new StringBuilder("{\"QueueUrl\":\"http://127.0.0.1:9324/000000000000/load\",")
                .append("\"Entries\":[");
        bodies = new java.util.ArrayList<>();
        for (int i = 0; i < 10; i++) {
            String b = i + ":" + System.nanoTime() + ":" + "x".repeat(1024 - 40);
            bodies.add(b);
            json.append(i == 0 ? "" : ",").append("{\"Id\":\"e").append(i).append("\",\"MessageBody\":\"").append(b)
                    .append("\"}");
        }
        body = json.append("]}").toString().getBytes(StandardCharsets.UTF_8);
        SdkHttpFullRequest request = SdkHttpFullRequest.builder().method(SdkHttpMethod.POST)
                .uri(URI.create("http://127.0.0.1:9324/"))
                .putHeader("Content-Type", "application/x-amz-json-1.0")
                .putHeader("X-Amz-Target", "AmazonSQS.SendMessageBatch")
                .putHeader("x-amzn-query-mode", "true")
                .putHeader("amz-sdk-invocation-id", "0c3f6a2e-7f3e-4d8b-a1b2-1234567890ab")
                .putHeader("amz-sdk-request", "attempt=1; max=4")
                .putHeader("User-Agent", "aws-sdk-java/2.31.0 md/io#async md/http#NettyNio ua/2.1 os/Linux")
                .build();
        signed = SdkSigning.sign(request, body, KEY, SECRET, "us-east-1", SIGNING_TIME, SdkSigning.Mode.HEADER);
        verifier = new SigV4Verifier(new InMemoryCredentialStore(Map.of(KEY, SECRET)),
                new ManualClock(SIGNING_TIME.toEpochMilli()), Optional.empty(), false);
        if (!verifier.verify(signed).isAuthenticated()) {
            throw new IllegalStateException("the benchmark's request does not verify");
        }
    }

    @Benchmark
    public AuthResult verify() {
        return verifier.verify(signed);
    }

    @Benchmark
    public AuthResult hashAndVerify() {
        return verifier.verify(SignedRequest.of(signed.method(), signed.rawPath(), signed.rawQuery(), signed.headers(),
                body));
    }

    @Benchmark
    public long validateBodies() {
        long size = 0;
        for (String b : bodies) {
            if (SqsLimits.hasOnlyAllowedCharacters(b)) {
                size += Utf8.length(b);
            }
        }
        return size;
    }
}
