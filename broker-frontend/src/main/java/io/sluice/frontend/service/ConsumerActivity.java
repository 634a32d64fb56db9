package io.sluice.frontend.service;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Who consumes each queue, as this frontend sees it: per queue and per receiver (access key and client address), the
 * receive calls, messages received and messages deleted over the last {@link #WINDOW_SECONDS} seconds, in 10-second
 * buckets, and when it was last seen. The console's "Consumers" table (RabbitMQ's consumers view, for an HTTP
 * protocol with no connections to list). Bounded: at most {@link #MAX_QUEUES} queues and {@link #MAX_PER_QUEUE}
 * receivers per queue are tracked (further ones are not counted until others age out).
 */
public final class ConsumerActivity {
    public static final int WINDOW_SECONDS = 300;
    static final int BUCKET_SECONDS = 10;
    static final int BUCKETS = WINDOW_SECONDS / BUCKET_SECONDS;
    static final int MAX_QUEUES = 10_000;
    static final int MAX_PER_QUEUE = 100;

    /** A consumer as the API sees it: the key it signs with and the address it connects from. */
    public record Receiver(String accessKey, String address) {
    }

    /**
     * A receiver's activity over the window.
     *
     * @param seconds          how long it was watched within the window (the window, or less for a newcomer)
     * @param receiveCalls     ReceiveMessage calls
     * @param received         messages received
     * @param deleted          messages deleted (DeleteMessage and DeleteMessageBatch entries that succeeded)
     * @param lastSeenMillis   its last receive or delete
     */
    public record Seen(Receiver receiver, long seconds, long receiveCalls, long received, long deleted,
                       long lastSeenMillis) {
        /** Received and not deleted within the window: roughly what it holds in flight (never below 0). */
        public long heldApprox() {
            return Math.max(0, received - deleted);
        }
    }

    private static final class Activity {
        final long[] bucketOf = new long[BUCKETS];
        final long[] calls = new long[BUCKETS];
        final long[] received = new long[BUCKETS];
        final long[] deleted = new long[BUCKETS];
        long firstSeenMillis;
        long lastSeenMillis;

        Activity(long now) {
            firstSeenMillis = now;
        }

        synchronized void add(long now, long calls, long received, long deleted) {
            long bucket = now / 1000 / BUCKET_SECONDS;
            int i = (int) (bucket % BUCKETS);
            if (bucketOf[i] != bucket) {
                bucketOf[i] = bucket;
                this.calls[i] = 0;
                this.received[i] = 0;
                this.deleted[i] = 0;
            }
            this.calls[i] += calls;
            this.received[i] += received;
            this.deleted[i] += deleted;
            if (now - lastSeenMillis > WINDOW_SECONDS * 1000L) {
                firstSeenMillis = now; // back after a pause longer than the window: watched again from now
            }
            lastSeenMillis = now;
        }

        synchronized Seen sum(Receiver who, long now) {
            long current = now / 1000 / BUCKET_SECONDS;
            long c = 0;
            long r = 0;
            long d = 0;
            for (int i = 0; i < BUCKETS; i++) {
                if (current - bucketOf[i] < BUCKETS) {
                    c += calls[i];
                    r += received[i];
                    d += deleted[i];
                }
            }
            long seconds = Math.max(1, Math.min(WINDOW_SECONDS, (now - firstSeenMillis) / 1000 + 1));
            return new Seen(who, seconds, c, r, d, lastSeenMillis);
        }
    }

    private final Map<String, Map<Receiver, Activity>> byQueue = new ConcurrentHashMap<>();
    private final LongSupplier clockMillis;

    public ConsumerActivity(LongSupplier clockMillis) {
        this.clockMillis = clockMillis;
    }

    /** A receive call on {@code queue} that returned {@code messages} messages. */
    public void received(String queue, String accessKey, String address, int messages) {
        add(queue, accessKey, address, 1, messages, 0);
    }

    /** {@code messages} messages of {@code queue} deleted by one call. */
    public void deleted(String queue, String accessKey, String address, int messages) {
        add(queue, accessKey, address, 0, 0, messages);
    }

    private void add(String queue, String accessKey, String address, long calls, long received, long deleted) {
        if (queue == null) {
            return;
        }
        long now = clockMillis.getAsLong();
        Map<Receiver, Activity> receivers = byQueue.get(queue);
        if (receivers == null) {
            if (byQueue.size() >= MAX_QUEUES) {
                prune(now);
                if (byQueue.size() >= MAX_QUEUES) {
                    return;
                }
            }
            receivers = byQueue.computeIfAbsent(queue, q -> new ConcurrentHashMap<>());
        }
        Receiver who = new Receiver(accessKey, address);
        Activity activity = receivers.get(who);
        if (activity == null) {
            if (receivers.size() >= MAX_PER_QUEUE) {
                return;
            }
            activity = receivers.computeIfAbsent(who, w -> new Activity(now));
        }
        activity.add(now, calls, received, deleted);
    }

    /** The receivers of {@code queue} seen within the window, most messages received first. */
    public List<Seen> seen(String queue) {
        long now = clockMillis.getAsLong();
        Map<Receiver, Activity> receivers = byQueue.getOrDefault(queue, Map.of());
        List<Seen> out = new ArrayList<>();
        receivers.forEach((who, activity) -> {
            Seen s = activity.sum(who, now);
            if (now - s.lastSeenMillis() <= WINDOW_SECONDS * 1000L) {
                out.add(s);
            }
        });
        out.sort(Comparator.comparingLong(Seen::received).reversed().thenComparing(s -> s.receiver().accessKey())
                .thenComparing(s -> s.receiver().address()));
        return out;
    }

    /** Forgets receivers not seen within the window, and queues left with none. */
    public void prune(long now) {
        byQueue.values().forEach(receivers -> receivers.values().removeIf(a -> {
            synchronized (a) {
                return now - a.lastSeenMillis > WINDOW_SECONDS * 1000L;
            }
        }));
        byQueue.values().removeIf(Map::isEmpty);
    }
}
