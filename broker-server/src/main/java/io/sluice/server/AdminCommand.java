package io.sluice.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine;

/**
 * {@code sluice admin status|queues --admin-url http://HOST:ADMINPORT [--json] [--token T|--token-file F]}: the
 * cluster as an operator reads it (outside {@code sluice dev} with the read token or the admin token).
 * A contract: {@code status} prints one line per metadata member and per partition, each naming its leader with
 * the word "leader".
 */
@Command(name = "admin", mixinStandardHelpOptions = true, description = "Inspect a running cluster.",
        subcommands = {AdminCommand.Status.class, AdminCommand.Queues.class, AdminCommand.PutKey.class,
            AdminCommand.Rebalance.class})
final class AdminCommand implements Runnable {
    @Override
    public void run() {
        new CommandLine(this).usage(System.out);
    }

    /** The admin token of the write commands: {@code --token}, else {@code --token-file}, else SLUICE_ADMIN_TOKEN. */
    static final class Token {
        @Option(names = "--token", description = "The admin token (sluice.admin.token). Default: --token-file, else"
                + " the environment variable SLUICE_ADMIN_TOKEN.")
        String token;

        @Option(names = "--token-file", description = "A file holding the admin token (sluice dev: DATA_DIR/admin-token).")
        Path tokenFile;

        String value() throws IOException {
            return given(token, tokenFile, "SLUICE_ADMIN_TOKEN");
        }
    }

    /**
     * The token of the read commands ({@code status}, {@code queues}): {@code --token}, else {@code --token-file},
     * else SLUICE_ADMIN_READ_TOKEN, else SLUICE_ADMIN_TOKEN (either token reads).
     */
    static final class ReadToken {
        @Option(names = "--token", description = "The read token (sluice.admin.read-token) or the admin token. Default:"
                + " --token-file, else SLUICE_ADMIN_READ_TOKEN, else SLUICE_ADMIN_TOKEN. sluice dev needs none.")
        String token;

        @Option(names = "--token-file", description = "A file holding the read token or the admin token.")
        Path tokenFile;

        String value() throws IOException {
            String read = given(token, tokenFile, "SLUICE_ADMIN_READ_TOKEN");
            return read.isEmpty() ? System.getenv().getOrDefault("SLUICE_ADMIN_TOKEN", "") : read;
        }
    }

    private static String given(String token, Path tokenFile, String environment)
            throws IOException {
        if (token != null && !token.isEmpty()) {
            return token;
        }
        if (tokenFile != null) {
            return Files.readString(tokenFile).trim();
        }
        return System.getenv().getOrDefault(environment, "");
    }

    /** POSTs a JSON body to an admin write endpoint with the token; prints the answer; 0 on 200. */
    static int post(String adminUrl, String path, String body, Token token) throws Exception {
        String base = adminUrl.endsWith("/") ? adminUrl.substring(0, adminUrl.length() - 1) : adminUrl;
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body));
        String value = token.value();
        if (!value.isEmpty()) {
            request.header("Authorization", "Bearer " + value);
        }
        HttpResponse<String> r = HttpClient.newHttpClient().send(request.build(), HttpResponse.BodyHandlers.ofString());
        System.out.println(r.body());
        return r.statusCode() == 200 ? 0 : 1;
    }

    abstract static class Base implements Callable<Integer> {
        @Option(names = "--admin-url", required = true, description = "Admin endpoint of any node, e.g."
                + " http://127.0.0.1:9325")
        String adminUrl;

        @Option(names = "--json", description = "Print the raw JSON.")
        boolean json;

        @CommandLine.Mixin
        ReadToken token = new ReadToken();

        @Override
        public Integer call() throws Exception {
            String base = adminUrl.endsWith("/") ? adminUrl.substring(0, adminUrl.length() - 1) : adminUrl;
            HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + "/admin/status"))
                    .timeout(Duration.ofSeconds(10));
            String value = token.value();
            if (!value.isEmpty()) {
                request.header("Authorization", "Bearer " + value);
            }
            HttpResponse<String> r = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build()
                    .send(request.build(), HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) {
                System.err.println("admin endpoint answered " + r.statusCode() + ": " + r.body());
                return 1;
            }
            if (json) {
                System.out.println(r.body());
            } else {
                print(new ObjectMapper().readTree(r.body()), System.out);
            }
            return 0;
        }

        abstract void print(JsonNode status, PrintStream out);
    }

    @Command(name = "status", description = "Metadata members, backends, shards, and every partition with its leader.")
    static final class Status extends Base {
        @Override
        void print(JsonNode s, PrintStream out) {
            for (JsonNode m : s.path("metadata")) {
                out.printf("metadata  %-10s %-22s %s%n", m.path("id").asText(), m.path("address").asText(),
                        m.path("role").asText());
            }
            boolean known = s.path("livenessKnown").asBoolean(true);
            for (JsonNode b : s.path("backends")) {
                out.printf("backend   %-10s %-22s %s shards=%d partitions=%d%n", b.path("id").asText(),
                        b.path("address").asText(), !known ? "liveness-unknown(ask the metadata leader)"
                                : b.path("alive").asBoolean() ? "alive" : "DEAD",
                        b.path("shards").asInt(), b.path("replicas").asInt());
            }
            boolean reports = s.path("shardReportsKnown").asBoolean();
            for (JsonNode sh : s.path("shards")) {
                out.printf("shard     %-10s %s replicas=%s partitions=%d%n", sh.path("shardId").asText(), !reports
                        ? "leader-unknown(ask the metadata leader)" : sh.path("leader").isNull() ? "NO-LEADER-REPORTED"
                        : "leader=" + sh.path("leader").asText() + " in-sync=" + sh.path("inSync").asInt() + "/"
                        + sh.path("members").size() + " lag=" + sh.path("followerLag")
                        + (sh.path("membershipPending").asBoolean() ? " MEMBERSHIP-PENDING" : ""),
                        sh.path("replicas"), sh.path("partitions").asInt());
            }
            for (JsonNode q : s.path("queues")) {
                for (JsonNode p : q.path("partitions")) {
                    out.printf("partition %s/%d leader=%s replicas=%s epoch=%d%s%n", q.path("name").asText(),
                            p.path("index").asInt(), p.path("leader").asText(), p.path("replicas"),
                            p.path("epoch").asLong(), p.path("underReplicated").asBoolean() ? " UNDER-REPLICATED" : "");
                }
            }
            out.printf("under-replicated partitions: %d%n", s.path("underReplicatedPartitions").asInt());
        }
    }

    @Command(name = "put-key", description = "Store an access key (and what it may do) in the replicated catalog.")
    static final class PutKey implements Callable<Integer> {
        @Option(names = "--admin-url", required = true, description = "Admin endpoint of any node.")
        String adminUrl;

        @Option(names = "--access-key", required = true)
        String accessKey;

        @Option(names = "--secret-key", required = true)
        String secretKey;

        @Option(names = "--allow", description = "actionGlob:queueGlob, repeatable (a key without rules may do"
                + " nothing).")
        List<String> allow = new ArrayList<>();

        @Option(names = "--admin", description = "An admin key: the rule *:* (every action on every queue).")
        boolean admin;

        @CommandLine.Mixin
        Token token = new Token();

        @Override
        public Integer call() throws Exception {
            ObjectMapper json = new ObjectMapper();
            var body = json.createObjectNode().put("accessKey", accessKey).put("secretKey", secretKey);
            var rules = body.putArray("allow");
            if (admin) {
                rules.addArray().add("*").add("*");
            }
            for (String a : allow) {
                int colon = a.indexOf(':');
                if (colon <= 0 || colon == a.length() - 1) {
                    System.err.println("--allow needs actionGlob:queueGlob, got " + a);
                    return 2;
                }
                rules.addArray().add(a.substring(0, colon)).add(a.substring(colon + 1));
            }
            return post(adminUrl, "/admin/access-keys", json.writeValueAsString(body), token);
        }
    }

    @Command(name = "rebalance", description = "Move shard replicas from the most to the least loaded backends (after"
            + " adding backends). Each move is a Raft membership change; run it again until it moves nothing.")
    static final class Rebalance implements Callable<Integer> {
        @Option(names = "--admin-url", required = true, description = "Admin endpoint of a metadata member or frontend.")
        String adminUrl;

        @Option(names = "--max-moves", defaultValue = "1", description = "Replicas to move now (default ${DEFAULT-VALUE}).")
        int maxMoves;

        @CommandLine.Mixin
        Token token = new Token();

        @Override
        public Integer call() throws Exception {
            return post(adminUrl, "/admin/rebalance", "{\"maxMoves\":" + maxMoves + "}", token);
        }
    }

    @Command(name = "queues", description = "Queues with their partitions and replicas.")
    static final class Queues extends Base {
        @Override
        void print(JsonNode s, PrintStream out) {
            for (JsonNode q : s.path("queues")) {
                out.printf("%s (id %d%s)%n", q.path("name").asText(), q.path("queueId").asLong(),
                        q.path("fifo").asBoolean() ? ", fifo" : "");
                for (JsonNode p : q.path("partitions")) {
                    out.printf("  partition %d: replicas %s, leader %s%n", p.path("index").asInt(), p.path("replicas"),
                            p.path("leader").asText());
                }
            }
        }
    }
}
