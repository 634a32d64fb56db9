package io.sluice.frontend.action;

import io.sluice.frontend.service.LongPolls;
import io.sluice.frontend.service.MoveTasks;
import io.sluice.frontend.service.SqsServices;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/** The one dispatch table: action name to action, built once at start-up. */
public final class ActionTable {
    /** Actions SQS has that Sluice answers with {@code UnsupportedOperation} (see docs/api.md). */
    public static final Set<String> UNSUPPORTED = Set.of("AddPermission", "RemovePermission");

    private final Map<String, SqsAction> actions = new TreeMap<>();

    public ActionTable(SqsServices services, LongPolls longPolls, MoveTasks moveTasks) {
        List<SqsAction> all = List.of(
                new QueueLifecycleActions.CreateQueue(services),
                new QueueLifecycleActions.GetQueueUrl(services),
                new QueueLifecycleActions.DeleteQueue(services),
                new QueueListingActions.ListQueues(services),
                new QueueListingActions.ListDeadLetterSourceQueues(services),
                new QueueAttributeActions.GetQueueAttributes(services),
                new QueueAttributeActions.SetQueueAttributes(services),
                new QueueAttributeActions.PurgeQueue(services),
                new QueueAttributeActions.TagQueue(services),
                new QueueAttributeActions.UntagQueue(services),
                new QueueAttributeActions.ListQueueTags(services),
                new SendActions.SendMessage(services),
                new SendActions.SendMessageBatch(services),
                new ReceiveMessage(services, longPolls),
                new HandleActions.DeleteMessage(services),
                new HandleActions.DeleteMessageBatch(services),
                new HandleActions.ChangeMessageVisibility(services),
                new HandleActions.ChangeMessageVisibilityBatch(services),
                new MoveTaskActions.StartMessageMoveTask(moveTasks),
                new MoveTaskActions.ListMessageMoveTasks(moveTasks),
                new MoveTaskActions.CancelMessageMoveTask(moveTasks));
        for (SqsAction a : all) {
            if (actions.put(a.name(), a) != null) {
                throw new IllegalStateException("two actions named " + a.name());
            }
        }
    }

    /** The action, or null when the name is unknown. */
    public SqsAction get(String name) {
        return actions.get(name);
    }

    public Set<String> names() {
        return actions.keySet();
    }
}
