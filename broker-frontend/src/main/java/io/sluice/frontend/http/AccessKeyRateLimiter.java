package io.sluice.frontend.http;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Per-access-key request rate limits of one frontend (token buckets): a key over its rate gets the retryable
 * {@code RequestThrottled} instead of work, so one tenant's flood cannot take the CPU and the shards from the
 * others. Limits are per frontend: with N frontends behind a balancer a key gets up to N times the rate.
 */
public final class AccessKeyRateLimiter {
    /** No limits at all. */
    public static final AccessKeyRateLimiter UNLIMITED = new AccessKeyRateLimiter(0, 0, Map.of(), System::nanoTime);

    private final double defaultRate;
    private final double burstSeconds;
    private final Map<String, Double> rates;
    private final LongSupplier nanoTime;
    private final Map<String, Bucket> buckets = new ConcurrentHashMap<>();

    /**
     * @param defaultRate   requests per second of every key not in {@code rates}; 0 = unlimited
     * @param burstSeconds  bucket depth in seconds of rate (at least one request)
     * @param rates         per-key rates overriding the default; 0 = unlimited for that key
     */
    public AccessKeyRateLimiter(double defaultRate, double burstSeconds, Map<String, Double> rates,
                                LongSupplier nanoTime) {
        if (defaultRate < 0 || burstSeconds < 0 || rates.values().stream().anyMatch(r -> r < 0)) {
            throw new IllegalArgumentException("rate limits must not be negative");
        }
        this.defaultRate = defaultRate;
        this.burstSeconds = burstSeconds;
        this.rates = Map.copyOf(rates);
        this.nanoTime = nanoTime;
    }

    /**
     * Parses {@code key=rate,key=rate} (requests per second); blank means none.
     *
     * @throws IllegalArgumentException on a malformed entry
     */
    public static Map<String, Double> parseRates(String spec) {
        Map<String, Double> out = new LinkedHashMap<>();
        if (spec == null || spec.isBlank()) {
            return out;
        }
        for (String entry : spec.split(",")) {
            String[] kv = entry.trim().split("=", 2);
            if (kv.length != 2 || kv[0].isBlank()) {
                throw new IllegalArgumentException("expected key=requestsPerSecond, got '" + entry.trim() + "'");
            }
            double rate = Double.parseDouble(kv[1].trim());
            if (!Double.isFinite(rate) || rate < 0) {
                throw new IllegalArgumentException("a rate is a finite number of requests per second >= 0, got '"
                        + kv[1].trim() + "'");
            }
            out.put(kv[0].trim(), rate);
        }
        return out;
    }

    /** Takes one request's token for the key; false when the key is over its rate. */
    public boolean tryAcquire(String accessKey) {
        double rate = rates.getOrDefault(accessKey, defaultRate);
        if (rate <= 0) {
            return true;
        }
        return buckets.computeIfAbsent(accessKey, k -> new Bucket(rate, Math.max(1, rate * burstSeconds),
                nanoTime.getAsLong())).tryTake(nanoTime.getAsLong());
    }

    private static final class Bucket {
        private final double perNano;
        private final double capacity;
        private double tokens;
        private long lastNanos;

        Bucket(double rate, double capacity, long now) {
            this.perNano = rate / 1e9;
            this.capacity = capacity;
            this.tokens = capacity;
            this.lastNanos = now;
        }

        synchronized boolean tryTake(long now) {
            tokens = Math.min(capacity, tokens + Math.max(0, now - lastNanos) * perNano);
            lastNanos = now;
            if (tokens >= 1) {
                tokens -= 1;
                return true;
            }
            return false;
        }
    }
}
