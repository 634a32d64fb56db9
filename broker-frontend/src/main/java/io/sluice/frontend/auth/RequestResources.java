package io.sluice.frontend.auth;

import io.sluice.common.SqsError;
import io.sluice.common.SqsException;
import io.sluice.common.validation.QueueArn;
import io.sluice.common.validation.RedriveAllowPolicy;
import io.sluice.common.validation.RedrivePolicy;
import io.sluice.frontend.action.Params;
import io.sluice.frontend.service.MoveTasks;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import java.util.regex.Pattern;

/**
 * The queues a request really touches, resolved once: authorization checks these, and the action acts on the same
 * {@link #queue} (through {@code ActionContext.queueName()}), so what is checked is what is done.
 *
 * <ul>
 *   <li>{@link #queue}: the request's own queue. {@code CreateQueue} and {@code GetQueueUrl} name it by
 *       {@code QueueName}; every other queue action by {@code QueueUrl} (only its path, {@code /<account>/<name>},
 *       counts; a query or fragment makes it invalid) or, without one, by the request path (a client posting to the
 *       queue URL). Two of these that name different queues are an error, never a silent choice. Null for
 *       account-wide actions ({@link #ACCOUNT_WIDE}).</li>
 *   <li>{@link #referenced}: every other queue the request names by ARN: {@code SourceArn}, {@code DestinationArn},
 *       a {@code RedrivePolicy}'s {@code deadLetterTargetArn} and a {@code RedriveAllowPolicy}'s
 *       {@code sourceQueueArns} (parsed by the same code that validates them).</li>
 * </ul>
 */
public record RequestResources(String queue, List<String> referenced) {
    /** Actions on the account, not on one queue: authorized as account-wide (a rule whose queue pattern is *). */
    public static final Set<String> ACCOUNT_WIDE = Set.of("ListQueues", "StartMessageMoveTask", "ListMessageMoveTasks",
            "CancelMessageMoveTask");
    /** Actions that name their queue by QueueName. */
    public static final Set<String> BY_NAME = Set.of("CreateQueue", "GetQueueUrl");
    /** Actions that read SourceArn and DestinationArn (elsewhere those parameters are ignored, and so not checked). */
    static final Set<String> BY_ARN = Set.of("StartMessageMoveTask", "ListMessageMoveTasks");
    /** Actions that read queue attributes (RedrivePolicy, RedriveAllowPolicy). */
    static final Set<String> WITH_ATTRIBUTES = Set.of("CreateQueue", "SetQueueAttributes");

    /**
     * @param path             the request path (a queue URL path when the client posts to the queue URL)
     * @param queueDoesNotExist the protocol's QueueDoesNotExist error, for a QueueUrl that names no queue
     */
    public static RequestResources of(String action, Params params, String path,
                                      Supplier<SqsException> queueDoesNotExist) {
        String pathQueue = path == null || path.length() <= 1 ? null : queueNameFromPath(path);
        String named = params.string("QueueName");
        String queue;
        if (ACCOUNT_WIDE.contains(action)) {
            queue = null;
        } else if (BY_NAME.contains(action)) {
            queue = named;
            String url = params.string("QueueUrl");
            String urlQueue = url == null || url.isEmpty() ? null : queueNameOfUrl(url);
            disagree(queue, urlQueue, "QueueName", "QueueUrl");
            disagree(queue, pathQueue, "QueueName", "the request path");
        } else {
            String url = params.string("QueueUrl");
            if (url != null && !url.isEmpty()) {
                queue = queueNameOfUrl(url);
                if (queue == null) {
                    throw queueDoesNotExist.get();
                }
                disagree(queue, pathQueue, "QueueUrl", "the request path");
            } else if (path != null && path.length() > 1) {
                queue = pathQueue;
                if (queue == null) {
                    throw queueDoesNotExist.get();
                }
            } else {
                throw new SqsException(SqsError.MISSING_PARAMETER, "The request must contain the parameter QueueUrl.");
            }
            disagree(queue, named, "QueueUrl", "QueueName");
        }
        return new RequestResources(queue, referencedQueues(action, params));
    }

    /**
     * Every queue name the action reads from {@code params} as an ARN (see the class doc); unparseable values name
     * none. Only parameters the action reads count: anything else a client adds must not decide the check.
     */
    static List<String> referencedQueues(String action, Params params) {
        List<String> arns = new ArrayList<>();
        if (BY_ARN.contains(action)) {
            for (String name : List.of("SourceArn", "DestinationArn")) {
                String arn = params.string(name);
                if (arn != null && !arn.isEmpty()) {
                    arns.add(arn);
                }
            }
        }
        if (action.equals("CancelMessageMoveTask")) {
            // the task must have the handle's source (MoveTasks.cancel checks), so the key is checked on its real source
            MoveTasks.Handle.parse(params.string("TaskHandle"))
                    .ifPresent(h -> arns.add(h.sourceArn()));
        }
        if (WITH_ATTRIBUTES.contains(action) && params.has("Attributes")) {
            Map<String, String> attributes = params.stringMap("Attributes");
            String redrive = attributes.get("RedrivePolicy");
            if (redrive != null && !redrive.isEmpty()) {
                var parsed = RedrivePolicy.parse(redrive);
                if (parsed.isOk()) {
                    arns.add(parsed.value().deadLetterTargetArn());
                }
            }
            String allow = attributes.get("RedriveAllowPolicy");
            if (allow != null && !allow.isEmpty()) {
                var parsed = RedriveAllowPolicy.parse(allow);
                if (parsed.isOk()) {
                    arns.addAll(parsed.value().sourceQueueArns());
                }
            }
        }
        List<String> names = new ArrayList<>();
        for (String arn : arns) {
            // an ARN that does not parse names no queue here: the action refuses it as invalid
            QueueArn.parse(arn).ifPresent(a -> names.add(a.queueName()));
        }
        return List.copyOf(names);
    }

    /**
     * The queue a QueueUrl names: its path must be {@code /<account>/<name>} (a trailing slash allowed); scheme,
     * host and port are ignored; a query or fragment, or anything else, names no queue (null).
     */
    public static String queueNameOfUrl(String url) {
        String trimmed = url.trim();
        if (trimmed.startsWith("/")) {
            return trimmed.contains("?") || trimmed.contains("#") ? null : queueNameFromPath(trimmed);
        }
        try {
            URI uri = new URI(trimmed);
            if (uri.getRawQuery() != null || uri.getRawFragment() != null || uri.getRawPath() == null) {
                return null;
            }
            return queueNameFromPath(uri.getRawPath());
        } catch (URISyntaxException e) {
            return null;
        }
    }

    private static final Pattern ACCOUNT_ID = Pattern.compile("[0-9]{12}");

    /**
     * {@code /<account>/<name>[/]} → name, where the account is 12 digits (as in every queue URL); anything else → null
     * (e.g. a proxy's own path prefix, which must not be mistaken for a queue).
     */
    public static String queueNameFromPath(String path) {
        String p = path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
        String[] parts = p.split("/", -1);
        if (parts.length != 3 || !parts[0].isEmpty() || !ACCOUNT_ID.matcher(parts[1]).matches() || parts[2].isEmpty()) {
            return null;
        }
        return parts[2];
    }

    private static void disagree(String a, String b, String aName, String bName) {
        if (a != null && b != null && !a.equals(b)) {
            throw new SqsException(SqsError.INVALID_PARAMETER_VALUE,
                    aName + " and " + bName + " name different queues.");
        }
    }
}
