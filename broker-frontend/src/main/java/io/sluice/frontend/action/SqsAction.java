package io.sluice.frontend.action;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.concurrent.CompletableFuture;

/**
 * One SQS action. Reads its request from {@link Params} (the same tree for both protocols) and answers a tree of
 * output members that either codec renders. Failures are {@link io.sluice.common.SqsException}s, thrown or as the
 * future's exception. Runs on a worker thread, never on a Netty event loop; it may block on the catalog but must
 * not wait on a partition future (compose instead).
 */
public interface SqsAction {
    String name();

    CompletableFuture<ObjectNode> execute(ActionContext ctx, Params params);
}
