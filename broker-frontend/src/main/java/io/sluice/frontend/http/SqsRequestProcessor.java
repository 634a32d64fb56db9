package io.sluice.frontend.http;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.sluice.common.SqsError;
import io.sluice.common.SqsException;
import io.sluice.common.SqsFailure;
import io.sluice.common.SqsLimits;
import io.sluice.frontend.action.ActionContext;
import io.sluice.frontend.action.ActionTable;
import io.sluice.frontend.action.Params;
import io.sluice.frontend.action.SqsAction;
import io.sluice.frontend.auth.AuthFailures;
import io.sluice.frontend.auth.AuthResult;
import io.sluice.frontend.auth.AuthorizationPolicy;
import io.sluice.frontend.auth.Authorizer;
import io.sluice.frontend.auth.RequestResources;
import io.sluice.frontend.auth.SigV4Verifier;
import io.sluice.frontend.auth.SignedRequest;
import io.sluice.frontend.service.ConsumerActivity;
import io.sluice.frontend.protocol.JsonCodec;
import io.sluice.frontend.protocol.Protocol;
import io.sluice.frontend.protocol.QueryDecoder;
import io.sluice.frontend.protocol.QueryParameters;
import io.sluice.frontend.protocol.XmlEncoder;
import java.io.IOException;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One SQS request from bytes to bytes, independent of the HTTP server: detect the protocol, authenticate,
 * decode, authorize, dispatch, render the result or the error in the request's protocol. Runs the action on the
 * worker executor (actions may block on the catalog); never blocks the caller.
 */
public final class SqsRequestProcessor {
    private static final Logger LOG = LoggerFactory.getLogger(SqsRequestProcessor.class);
    private static final Logger ACCESS = LoggerFactory.getLogger("io.sluice.access");
    static final String JSON_TYPE = "application/x-amz-json-1.0";
    static final String XML_TYPE = "text/xml";

    /** The HTTP request as received. Header names lower-case. */
    public record Incoming(String method, String uri, Map<String, List<String>> headers, byte[] body,
                           String remoteAddress, BooleanSupplier connected) {
        String header(String name) {
            List<String> v = headers.get(name);
            return v == null || v.isEmpty() ? null : v.get(0);
        }
    }

    /** The HTTP response to send. */
    public record Outgoing(int status, String contentType, byte[] body, Map<String, String> headers) {
    }

    private final ActionTable actions;
    private final SigV4Verifier verifier;
    private final Authorizer policy;
    private final Executor workers;
    private final MeterRegistry metrics;
    private final AccessKeyRateLimiter limiter;
    private final Predicate<String> knownQueue;
    private final ConsumerActivity consumers = new ConsumerActivity(System::currentTimeMillis);
    private final long deadlineMillis;
    /** Failed signatures by client address and key: guessing a secret is slowed down, per address. */
    private final AuthFailures authFailures =
            new AuthFailures(System::nanoTime);

    /**
     * @param verifier null disables authentication (every request is from the anonymous key, which may do
     *                 everything: {@code --no-auth}, never the default)
     */
    public SqsRequestProcessor(ActionTable actions, SigV4Verifier verifier, Authorizer policy, Executor workers,
                               MeterRegistry metrics) {
        this(actions, verifier, policy, workers, metrics, AccessKeyRateLimiter.UNLIMITED, name -> false);
    }

    /**
     * @param limiter    per-access-key request rates
     * @param knownQueue whether a name is a queue of the catalog now (in memory, never a fetch): only those get
     *                   queue-labelled counters, so bad input cannot create label values
     */
    public SqsRequestProcessor(ActionTable actions, SigV4Verifier verifier, Authorizer policy, Executor workers,
                               MeterRegistry metrics, AccessKeyRateLimiter limiter,
                               Predicate<String> knownQueue) {
        this(actions, verifier, policy, workers, metrics, limiter, knownQueue, DEFAULT_DEADLINE_MILLIS);
    }

    /** How long a request may take by default before it is answered {@code ServiceUnavailable} (503). */
    public static final long DEFAULT_DEADLINE_MILLIS = 5_000;

    /**
     * @param deadlineMillis how long an action may take (a long poll: plus its wait) before the client is answered
     *                       {@code ServiceUnavailable} (503, which every SDK retries) instead of being held: a frontend
     *                       cut off from a shard's leader or the metadata group fails fast rather than hanging
     */
    public SqsRequestProcessor(ActionTable actions, SigV4Verifier verifier, Authorizer policy, Executor workers,
                               MeterRegistry metrics, AccessKeyRateLimiter limiter,
                               Predicate<String> knownQueue, long deadlineMillis) {
        this.deadlineMillis = deadlineMillis;
        this.actions = actions;
        this.verifier = verifier;
        this.policy = verifier == null ? AuthorizationPolicy.allowAll() : policy;
        this.workers = workers;
        this.metrics = metrics;
        this.limiter = limiter;
        this.knownQueue = knownQueue;
    }

    /** Who receives from and deletes in each queue through this frontend (the console's consumers view). */
    public ConsumerActivity consumers() {
        return consumers;
    }

    /**
     * Requests and throttled requests per access key since this frontend started (its {@code sqs.usage.requests} and
     * {@code sqs.usage.throttled} counters): key -> {requests, throttled}.
     */
    public Map<String, long[]> usageByKey() {
        Map<String, long[]> usage = new TreeMap<>();
        String[] names = {"sqs.usage.requests", "sqs.usage.throttled"};
        for (int i = 0; i < names.length; i++) {
            int column = i;
            metrics.find(names[i]).counters().forEach(c -> {
                String key = c.getId().getTag("access_key");
                if (key != null) {
                    usage.computeIfAbsent(key, k -> new long[2])[column] += (long) c.count();
                }
            });
        }
        return usage;
    }

    public CompletableFuture<Outgoing> process(Incoming in) {
        String requestId = UUID.randomUUID().toString();
        long startNanos = System.nanoTime();
        Protocol protocol = detect(in);
        String[] action = {null};
        String[] accessKey = {null};
        String[] queue = {null, null}; // the queue named, and "rate" once the key's rate refused the request
        CompletableFuture<ObjectNode> result;
        try {
            result = dispatch(in, protocol, requestId, action, accessKey, queue);
        } catch (SqsException e) {
            result = CompletableFuture.failedFuture(e);
        } catch (RuntimeException e) {
            result = CompletableFuture.failedFuture(e);
        }
        return result.handle((tree, error) -> {
            Outgoing out = error == null ? success(protocol, action[0], tree, requestId)
                    : failure(protocol, failureOf(error, requestId), requestId);
            record(in, action[0], accessKey[0], out, requestId, startNanos);
            recordQueue(action[0], queue[0], queue[1] != null, tree, error);
            return out;
        });
    }

    /**
     * Drops the per-queue series of queues no longer in the catalog (deleted, possibly through another frontend), so
     * queue churn does not grow the scrape for good. Called periodically.
     */
    public void forgetDeletedQueues() {
        try {
            for (String name : List.of("sluice.queue.empty_receives", "sluice.queue.throttled")) {
                for (var meter : metrics.find(name).meters()) {
                    String queue = meter.getId().getTag("queue");
                    if (queue != null && !knownQueue.test(queue)) {
                        metrics.remove(meter);
                    }
                }
            }
        } catch (RuntimeException e) { // a periodic task: an exception would cancel it for good
            LOG.warn("could not drop the series of deleted queues", e);
        }
    }

    /**
     * Per-queue request counters: receives that returned nothing, and sends refused by the queue's backlog limit
     * or the key's rate (the queue's messages themselves are counted by its primary).
     */
    private void recordQueue(String action, String queue, boolean rateLimited, ObjectNode tree, Throwable error) {
        if (queue == null || !knownQueue.test(queue)) {
            return;
        }
        if (error == null) {
            if ("ReceiveMessage".equals(action) && (tree == null || !tree.has("Messages")
                    || tree.get("Messages").isEmpty())) {
                metrics.counter("sluice.queue.empty_receives", "queue", queue).increment();
            } else if (tree != null && tree.has("Failed")) { // a batch: entries refused by the backlog limit
                int refused = 0;
                for (var entry : tree.get("Failed")) {
                    refused += SqsError.REQUEST_THROTTLED.queryCode().equals(entry.path("Code").asText()) ? 1 : 0;
                }
                if (refused > 0) {
                    metrics.counter("sluice.queue.throttled", "queue", queue, "reason", "backlog").increment(refused);
                }
            }
            return;
        }
        Throwable e = error;
        while (e instanceof CompletionException && e.getCause() != null) {
            e = e.getCause();
        }
        if (e instanceof SqsException s && s.failure().error() == SqsError.REQUEST_THROTTLED) {
            metrics.counter("sluice.queue.throttled", "queue", queue, "reason", rateLimited ? "rate" : "backlog")
                    .increment();
        }
    }

    private CompletableFuture<ObjectNode> dispatch(Incoming in, Protocol protocol, String requestId, String[] action,
                                                   String[] accessKey, String[] queue) {
        URI uri = parseUri(in.uri());
        String rawQuery = uri.getRawQuery();
        String principal;
        try {
            principal = authenticate(in, uri.getRawPath(), rawQuery);
        } catch (TarpittedRejection slowed) {
            // the answer to a guess after many wrong ones waits (never an event loop: a timer completes it)
            CompletableFuture<ObjectNode> later = new CompletableFuture<>();
            CompletableFuture.delayedExecutor(AuthFailures.DELAY_MILLIS,
                    TimeUnit.MILLISECONDS).execute(() -> later.completeExceptionally(
                    new SqsException(slowed.failure())));
            return later;
        }
        accessKey[0] = principal;
        // action[0] (the metric label and access-log field) is set only to a name of the action table, never to
        // raw client input: that would let clients create label values without bound
        String name;
        Map<String, String> queryParams = null;
        if (protocol == Protocol.JSON) {
            String target = in.header("x-amz-target");
            if (target == null || !target.startsWith("AmazonSQS.") || target.length() == "AmazonSQS.".length()) {
                throw new SqsException(SqsError.UNKNOWN_OPERATION, "Missing or unrecognised X-Amz-Target header.");
            }
            name = target.substring("AmazonSQS.".length());
        } else {
            queryParams = QueryParameters.decode(rawQuery, in.body(), in.header("content-type"));
            name = queryParams.get("Action");
            if (name == null || name.isEmpty()) {
                throw new SqsException(SqsError.MISSING_ACTION, "The request must contain the parameter Action.");
            }
        }
        SqsAction handler = actions.get(name);
        if (handler != null) {
            action[0] = handler.name();
        }
        ObjectNode tree = protocol == Protocol.JSON ? JsonCodec.parse(in.body()) : QueryDecoder.decode(name, queryParams);
        if (handler == null) {
            if (ActionTable.UNSUPPORTED.contains(name)) {
                throw new SqsException(SqsError.UNSUPPORTED_OPERATION, name + " is not supported by Sluice.");
            }
            throw protocol == Protocol.JSON
                    ? new SqsException(SqsError.UNKNOWN_OPERATION, "The action " + abbreviate(name) + " is not valid for this endpoint.")
                    : new SqsException(SqsError.INVALID_ACTION, "The action " + abbreviate(name) + " is not valid for this endpoint.");
        }
        return run(principal, policy, handler, new Params(tree), protocol, requestId, uri.getRawPath(),
                in.header("host"), TraceHeader.accepted(in.header("x-amzn-trace-id"), verifier != null,
                        () -> signedHeaders(in, rawQuery)), in.connected(), queue, addressOf(in.remoteAddress()));
    }

    /**
     * An action for a caller this process authenticated itself (the console's signed-in key): the same authorization
     * (every queue the request touches, resolved here), rate limit and action code as a request over HTTP; the
     * answer is the action's output tree (JSON member names).
     *
     * @param asAdmin the admin token's session: every action on every queue is allowed
     */
    public CompletableFuture<ObjectNode> invoke(String principal, boolean asAdmin, String actionName,
                                                ObjectNode request, String host) {
        SqsAction handler = actions.get(actionName);
        if (handler == null) {
            return CompletableFuture.failedFuture(new IllegalArgumentException("no action " + actionName));
        }
        try {
            return run(principal, asAdmin ? (key, action, queue) -> true : policy, handler, new Params(request),
                    Protocol.JSON, UUID.randomUUID().toString(), "/", host, null, () -> true, new String[2], "console");
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private CompletableFuture<ObjectNode> run(String principal, Authorizer authorizer, SqsAction handler,
                                              Params params, Protocol protocol, String requestId, String path,
                                              String host, String traceHeader,
                                              BooleanSupplier connected, String[] queue, String address) {
        RequestResources resources = RequestResources.of(handler.name(), params, path,
                () -> ActionContext.queueDoesNotExist(protocol));
        queue[0] = resources.queue();
        authorize(authorizer, principal, handler.name(), resources);
        if (!limiter.tryAcquire(principal)) {
            metrics.counter("sqs.usage.throttled", "access_key", principal).increment();
            queue[1] = "rate";
            throw new SqsException(SqsError.REQUEST_THROTTLED, "Rate exceeded for access key " + principal + ".");
        }
        ActionContext ctx = new ActionContext(requestId, protocol, principal, host, path, traceHeader, connected,
                resources.queue(), (act, queueName) -> authorizer.isAllowed(principal, act, queueName));
        long deadline = deadlineMillis + waitMillis(handler.name(), params);
        return CompletableFuture.supplyAsync(() -> handler.execute(ctx, params), workers).thenCompose(f -> f)
                .orTimeout(deadline, TimeUnit.MILLISECONDS)
                .thenApply(out -> consumed(handler.name(), resources.queue(), principal, address, out));
    }

    /** Counts a receive or delete for the consumers view; the answer passes through. */
    private ObjectNode consumed(String action, String queue, String principal, String address, ObjectNode out) {
        switch (action) {
            case "ReceiveMessage" -> consumers.received(queue, principal, address, out.path("Messages").size());
            case "DeleteMessage" -> consumers.deleted(queue, principal, address, 1);
            case "DeleteMessageBatch" -> consumers.deleted(queue, principal, address, out.path("Successful").size());
            default -> {
            }
        }
        return out;
    }

    /**
     * How long the action may wait on purpose: a receive its WaitTimeSeconds (the most a queue's default can be when
     * it gives none), anything else nothing.
     */
    private static long waitMillis(String action, Params params) {
        if (!"ReceiveMessage".equals(action)) {
            return 0;
        }
        Integer wait;
        try {
            wait = params.integer("WaitTimeSeconds");
        } catch (RuntimeException e) {
            wait = null; // the action refuses it with the right error
        }
        int seconds = wait == null || wait < 0 || wait > SqsLimits.MAX_WAIT_TIME_SECONDS ? SqsLimits.MAX_WAIT_TIME_SECONDS
                : wait;
        return TimeUnit.SECONDS.toMillis(seconds);
    }

    private String authenticate(Incoming in, String rawPath, String rawQuery) {
        if (verifier == null) {
            return "anonymous";
        }
        String address = addressOf(in.remoteAddress());
        String keyId = AuthFailures.accessKeyOf(in.header("authorization"),
                name -> queryParameter(rawQuery, name));
        SignedRequest signed = SignedRequest.of(in.method(), rawPath, rawQuery, in.headers(), in.body());
        AuthResult result = verifier.verify(signed);
        if (result instanceof AuthResult.Rejected rejected) {
            SqsError error = rejected.failure().error();
            if (error == SqsError.SIGNATURE_DOES_NOT_MATCH || error == SqsError.INVALID_CLIENT_TOKEN_ID) {
                boolean slowed = authFailures.slowed(address, keyId);
                authFailures.failed(address, keyId); // a guess at a secret, or at a key id
                if (slowed) {
                    throw new TarpittedRejection(rejected.failure());
                }
            }
            throw new SqsException(rejected.failure());
        }
        return ((AuthResult.Authenticated) result).accessKeyId();
    }

    /** A wrong signature from an address past its failures: answered after {@code AuthFailures.DELAY_MILLIS}. */
    private static final class TarpittedRejection extends RuntimeException {
        private final SqsFailure failure;

        TarpittedRejection(SqsFailure failure) {
            super(null, null, false, false);
            this.failure = failure;
        }

        SqsFailure failure() {
            return failure;
        }
    }

    /** The signed header names of an authenticated request (its Authorization header's, or a presigned query's). */
    private static List<String> signedHeaders(Incoming in, String rawQuery) {
        String authorization = in.header("authorization");
        String names = null;
        if (authorization != null) {
            int at = authorization.indexOf("SignedHeaders=");
            if (at >= 0) {
                int end = authorization.indexOf(',', at);
                names = authorization.substring(at + "SignedHeaders=".length(), end < 0 ? authorization.length() : end);
            }
        } else {
            names = queryParameter(rawQuery, "X-Amz-SignedHeaders");
        }
        return names == null ? List.of() : List.of(names.trim().toLowerCase(Locale.ROOT).split(";"));
    }

    /** The host part of a connection's remote address ({@code /127.0.0.1:5000} gives {@code 127.0.0.1}). */
    private static String addressOf(String remote) {
        String a = remote == null ? "" : remote.startsWith("/") ? remote.substring(1) : remote;
        int colon = a.lastIndexOf(':');
        return colon > 0 ? a.substring(0, colon) : a;
    }

    /** A raw query's first value of {@code name}, percent-decoded, or null. */
    private static String queryParameter(String rawQuery, String name) {
        if (rawQuery == null) {
            return null;
        }
        for (String piece : rawQuery.split("&")) {
            if (piece.startsWith(name + "=")) {
                try {
                    return URLDecoder.decode(piece.substring(name.length() + 1),
                            StandardCharsets.UTF_8);
                } catch (IllegalArgumentException malformed) {
                    return null;
                }
            }
        }
        return null;
    }

    static Protocol detect(Incoming in) {
        String target = in.header("x-amz-target");
        String contentType = in.header("content-type");
        if ((target != null && target.startsWith("AmazonSQS."))
                || (contentType != null && contentType.toLowerCase(Locale.ROOT).startsWith(JSON_TYPE))) {
            return Protocol.JSON;
        }
        return Protocol.QUERY;
    }

    private static URI parseUri(String raw) {
        try {
            return new URI(raw);
        } catch (Exception e) {
            throw new SqsException(SqsError.INVALID_ADDRESS, "The request URI is not valid.");
        }
    }

    /**
     * The key must be allowed the action on every queue the request touches: its own queue and every queue it names
     * by ARN. A request that touches none is account-wide (only a {@code *} queue rule allows it), except ListQueues,
     * which every key may call and which lists only the queues the key may list.
     */
    private static void authorize(Authorizer policy, String principal, String action, RequestResources resources) {
        List<String> touched = new ArrayList<>(resources.referenced());
        if (resources.queue() != null) {
            touched.add(resources.queue());
        }
        boolean allowed = touched.isEmpty()
                ? action.equals("ListQueues") || policy.isAllowed(principal, action, null)
                : touched.stream().allMatch(q -> policy.isAllowed(principal, action, q));
        if (!allowed) {
            throw new SqsException(SqsError.ACCESS_DENIED, "Access to the resource is denied.");
        }
    }

    private SqsFailure failureOf(Throwable error, String requestId) {
        Throwable e = error;
        while ((e instanceof CompletionException || e instanceof ExecutionException)
                && e.getCause() != null) {
            e = e.getCause();
        }
        if (e instanceof SqsException s) {
            return s.failure();
        }
        if (e instanceof TimeoutException) {
            // per request, so DEBUG: under a partition every request takes this path (the access log and /ready say so)
            LOG.debug("request {} did not complete within its deadline: answered ServiceUnavailable", requestId);
            return SqsError.SERVICE_UNAVAILABLE.withMessage("The request did not complete in time: the cluster may be"
                    + " failing over. Retry it.");
        }
        if (unavailable(e)) { // the shard or the metadata group could not be reached (Raft: an IOException)
            LOG.debug("request {}: the cluster could not be reached: {}", requestId, e.toString());
            return SqsError.SERVICE_UNAVAILABLE.withMessage("The cluster could not be reached. Retry the request.");
        }
        LOG.error("request {} failed", requestId, e);
        return SqsError.INTERNAL_FAILURE.failure();
    }

    /** Whether a failure says the cluster could not be reached (Ratis reports those as IOExceptions). */
    private static boolean unavailable(Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause()) {
            if (t instanceof IOException || t instanceof TimeoutException) {
                return true;
            }
        }
        return false;
    }

    private Outgoing success(Protocol protocol, String action, ObjectNode tree, String requestId) {
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("x-amzn-RequestId", requestId);
        if (protocol == Protocol.JSON) {
            return new Outgoing(200, JSON_TYPE, JsonCodec.success(tree), headers);
        }
        return new Outgoing(200, XML_TYPE, XmlEncoder.success(action, tree, requestId), headers);
    }

    Outgoing failure(Protocol protocol, SqsFailure failure, String requestId) {
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("x-amzn-RequestId", requestId);
        if (protocol == Protocol.JSON) {
            headers.put("x-amzn-query-error", JsonCodec.queryErrorHeader(failure));
            return new Outgoing(failure.error().httpStatus(), JSON_TYPE, JsonCodec.error(failure), headers);
        }
        return new Outgoing(failure.error().httpStatus(), XML_TYPE, XmlEncoder.error(failure, requestId), headers);
    }

    /** An error for a request that never reached {@link #process} (too large, undecodable HTTP). */
    public Outgoing reject(Incoming in, SqsFailure failure) {
        String requestId = UUID.randomUUID().toString();
        Outgoing out = failure(detect(in), failure, requestId);
        record(in, null, null, out, requestId, System.nanoTime());
        return out;
    }

    private void record(Incoming in, String action, String accessKey, Outgoing out, String requestId, long startNanos) {
        long nanos = System.nanoTime() - startNanos;
        String outcome = out.status() == 200 ? "ok" : Integer.toString(out.status());
        Timer.builder("sqs.requests").description("SQS requests by action and outcome")
                .tag("action", action == null ? "unknown" : action).tag("outcome", outcome)
                .publishPercentileHistogram().register(metrics).record(nanos, TimeUnit.NANOSECONDS);
        if (accessKey != null) {
            metrics.counter("sqs.usage.requests", "access_key", accessKey).increment();
            metrics.counter("sqs.usage.bytes", "access_key", accessKey, "direction", "in").increment(in.body().length);
            metrics.counter("sqs.usage.bytes", "access_key", accessKey, "direction", "out").increment(out.body().length);
        }
        if (ACCESS.isInfoEnabled()) {
            ACCESS.info("{} {} {} {} key={} {}us id={}", in.remoteAddress(), action == null ? "-" : action, out.status(),
                    in.body().length, accessKey == null ? "-" : accessKey, nanos / 1000, requestId);
        }
    }

    private static String abbreviate(String s) {
        String printable = s.replaceAll("[^\\x20-\\x7E]", "?");
        return printable.length() > 64 ? printable.substring(0, 64) + "..." : printable;
    }
}
