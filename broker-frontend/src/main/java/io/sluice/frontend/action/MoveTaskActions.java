package io.sluice.frontend.action;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sluice.common.SqsError;
import io.sluice.common.SqsException;
import io.sluice.frontend.service.MoveTasks;
import java.util.concurrent.CompletableFuture;

/** StartMessageMoveTask, ListMessageMoveTasks, CancelMessageMoveTask. */
public final class MoveTaskActions {
    private MoveTaskActions() {
    }

    public record StartMessageMoveTask(MoveTasks tasks) implements SqsAction {
        @Override
        public String name() {
            return "StartMessageMoveTask";
        }

        @Override
        public CompletableFuture<ObjectNode> execute(ActionContext ctx, Params params) {
            String source = params.requiredString("SourceArn");
            String destination = params.string("DestinationArn");
            if ((destination == null || destination.isEmpty()) && !ctx.allowed(name(), null)) {
                // back to their sources: each message goes to the queue recorded on it when it was dead-lettered,
                // which may be any queue that ever dead-lettered here (its redrive policy since removed), not only the
                // queues that do now; so the key needs the action account-wide (a limited key names the destination)
                throw new SqsException(SqsError.ACCESS_DENIED,
                        "Access to the resource is denied.");
            }
            return tasks.start(source, destination == null || destination.isEmpty() ? null : destination,
                            params.integer("MaxNumberOfMessagesPerSecond"))
                    .thenApply(t -> Responses.object().put("TaskHandle", t.handle()));
        }
    }

    public record ListMessageMoveTasks(MoveTasks tasks) implements SqsAction {
        @Override
        public String name() {
            return "ListMessageMoveTasks";
        }

        @Override
        public CompletableFuture<ObjectNode> execute(ActionContext ctx, Params params) {
            String source = params.requiredString("SourceArn");
            Integer max = params.integer("MaxResults");
            if (max != null && (max < 1 || max > 10)) {
                throw Params.invalidValue("MaxResults", max.toString(), "Must be between 1 and 10");
            }
            return tasks.list(source, max == null ? 1 : max).thenApply(list -> {
                ArrayNode results = Responses.array();
                list.forEach(t -> results.add(tasks.render(t)));
                ObjectNode out = Responses.object();
                out.set("Results", results);
                return out;
            });
        }
    }

    public record CancelMessageMoveTask(MoveTasks tasks) implements SqsAction {
        @Override
        public String name() {
            return "CancelMessageMoveTask";
        }

        @Override
        public CompletableFuture<ObjectNode> execute(ActionContext ctx, Params params) {
            return tasks.cancel(params.requiredString("TaskHandle"))
                    .thenApply(moved -> Responses.object().put("ApproximateNumberOfMessagesMoved", moved));
        }
    }
}
