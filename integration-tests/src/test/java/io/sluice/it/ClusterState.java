package io.sluice.it;

import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.awaitility.core.ConditionTimeoutException;

/**
 * What a cluster was doing, for the message of a wait that timed out: each process's {@code /admin/status} (roles,
 * hosted shards and who leads them, metadata members) and, from its {@code /metrics}, the shard gauges (leader,
 * replicas, in sync, membership pending, follower lag, applied index). A ceiling that trips then says why, not only
 * that it tripped.
 */
final class ClusterState {
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private static final String[] GAUGES = {"sluice_shard_leader", "sluice_shard_leader_known", "sluice_shard_replicas",
        "sluice_shard_replicas_in_sync", "sluice_shard_membership_pending", "sluice_shard_follower_lag_entries",
        "sluice_shard_applied_index", "sluice_metadata_leader"};

    private ClusterState() {
    }

    /** The state of the processes on loopback whose admin ports are given (name → port). */
    static String describe(Map<String, Integer> adminPorts) {
        Map<String, URI> admins = new LinkedHashMap<>();
        adminPorts.forEach((name, port) -> admins.put(name, URI.create("http://127.0.0.1:" + port)));
        return describeAt(admins);
    }

    /** The state of the processes whose admin endpoints are given (name → base URI); one not answering says so. */
    static String describeAt(Map<String, URI> admins) {
        StringBuilder out = new StringBuilder();
        admins.forEach((name, admin) -> {
            out.append("\n  ").append(name).append(" (admin ").append(admin.getAuthority()).append("): ");
            String status = get(admin, "/admin/status");
            out.append(status == null ? "not answering" : status.strip());
            String metrics = get(admin, "/metrics");
            if (metrics != null) {
                for (String line : metrics.split("\n")) {
                    for (String gauge : GAUGES) {
                        if (line.startsWith(gauge + "{") || line.startsWith(gauge + " ")) {
                            out.append("\n    ").append(line);
                        }
                    }
                }
            }
        });
        return out.toString();
    }

    /** The admin ports of backends {@code backend-1..n}, metadata members and frontends of a cluster.sh cluster. */
    static Map<String, Integer> clusterScriptPorts(int base) {
        Map<String, Integer> ports = new LinkedHashMap<>();
        for (int n = 1; n <= 3; n++) {
            ports.put("metadata-" + n, base + 110 + n);
        }
        for (int n = 1; n <= 3; n++) {
            ports.put("backend-" + n, base + 210 + n);
        }
        for (int n = 1; n <= 2; n++) {
            ports.put("frontend-" + n, base + 310 + n);
        }
        return ports;
    }

    /**
     * Waits until {@code probe}'s value satisfies {@code done}, at most {@code ceiling} (generous: a ceiling is for a
     * hung cluster, not a slow one); when it trips, fails with {@code what} and the cluster's state.
     */
    static <T> T await(String what, Duration ceiling, Callable<T> probe, Predicate<? super T> done,
                       Supplier<String> state) {
        try {
            return org.awaitility.Awaitility.await(what).atMost(ceiling).pollInterval(Duration.ofMillis(250))
                    .ignoreExceptions().until(probe, done::test);
        } catch (ConditionTimeoutException e) {
            throw new AssertionError(what + ": not within " + ceiling.toSeconds() + " s; the cluster then:"
                    + state.get(), e);
        }
    }

    /** {@link #await(String, Duration, Callable, Predicate, Supplier)} for a boolean condition. */
    static void awaitTrue(String what, Duration ceiling, Callable<Boolean> condition, Supplier<String> state) {
        await(what, ceiling, condition, Boolean.TRUE::equals, state);
    }

    private static String get(URI admin, String path) {
        try {
            HttpResponse<String> r = HTTP.send(ProcessFixtures.adminRequest(admin.resolve(path))
                    .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
            return r.statusCode() == 200 ? r.body() : "HTTP " + r.statusCode();
        } catch (IOException | InterruptedException e) {
            return null;
        }
    }
}
