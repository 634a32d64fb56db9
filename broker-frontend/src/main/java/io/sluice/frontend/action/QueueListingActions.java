package io.sluice.frontend.action;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sluice.catalog.QueueMetadata;
import io.sluice.common.SqsError;
import io.sluice.common.SqsException;
import io.sluice.common.validation.QueueAttributes;
import io.sluice.frontend.service.SqsServices;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/** ListQueues and ListDeadLetterSourceQueues: sorted by name, with an opaque token naming the last one returned. */
public final class QueueListingActions {
    private QueueListingActions() {
    }

    public static final class ListQueues implements SqsAction {
        private final SqsServices services;

        public ListQueues(SqsServices services) {
            this.services = services;
        }

        @Override
        public String name() {
            return "ListQueues";
        }

        @Override
        public CompletableFuture<ObjectNode> execute(ActionContext ctx, Params params) {
            String prefix = params.string("QueueNamePrefix");
            List<QueueMetadata> queues = services.catalog().list(prefix == null ? "" : prefix).stream()
                    .filter(q -> ctx.allowed(name(), q.name())).toList(); // only what this key may list
            return Responses.done(page(ctx, params, queues, "QueueUrls"));
        }

        ObjectNode page(ActionContext ctx, Params params, List<QueueMetadata> queues, String member) {
            return QueueListingActions.page(services, ctx, params, queues, member);
        }
    }

    public static final class ListDeadLetterSourceQueues implements SqsAction {
        private final SqsServices services;

        public ListDeadLetterSourceQueues(SqsServices services) {
            this.services = services;
        }

        @Override
        public String name() {
            return "ListDeadLetterSourceQueues";
        }

        @Override
        public CompletableFuture<ObjectNode> execute(ActionContext ctx, Params params) {
            QueueMetadata target = services.resolveQueue(ctx, params);
            String arn = services.arn(target.name());
            List<QueueMetadata> sources = services.catalog().list("").stream().filter(q -> {
                QueueAttributes a = services.attributes(q);
                return a.redrivePolicy() != null && arn.equals(a.redrivePolicy().deadLetterTargetArn())
                        && ctx.allowed(name(), q.name()); // sources this key may not see stay unnamed
            }).toList();
            ObjectNode out = page(services, ctx, params, sources, "queueUrls");
            if (!out.has("queueUrls")) {
                out.set("queueUrls", Responses.array()); // a required member of this output
            }
            return Responses.done(out);
        }
    }

    static ObjectNode page(SqsServices services, ActionContext ctx, Params params, List<QueueMetadata> queues,
                           String member) {
        Integer maxResults = params.integer("MaxResults");
        int max = QueueLifecycleActions.RedriveRules.maxListResults(maxResults);
        String token = params.string("NextToken");
        String after = token == null || token.isEmpty() ? null : decodeToken(token);
        ArrayNode urls = Responses.array();
        String last = null;
        boolean more = false;
        for (QueueMetadata q : queues) {
            if (after != null && q.name().compareTo(after) <= 0) {
                continue;
            }
            if (urls.size() == max) {
                more = true;
                break;
            }
            urls.add(services.queueUrl(ctx, q.name()));
            last = q.name();
        }
        ObjectNode out = Responses.object();
        if (!urls.isEmpty()) {
            out.set(member, urls);
        }
        if (more && maxResults != null) {
            out.put("NextToken", Base64.getUrlEncoder().withoutPadding()
                    .encodeToString(last.getBytes(StandardCharsets.UTF_8)));
        }
        return out;
    }

    private static String decodeToken(String token) {
        try {
            return new String(Base64.getUrlDecoder().decode(token), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw new SqsException(SqsError.INVALID_PARAMETER_VALUE, "Invalid NextToken value.");
        }
    }
}
