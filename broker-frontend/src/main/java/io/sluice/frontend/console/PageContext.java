package io.sluice.frontend.console;

import io.sluice.frontend.service.SqsServices;
import java.util.concurrent.Executor;
import java.util.function.Function;

/**
 * What the queue pages are built with.
 *
 * @param api      the API as a session calls it
 * @param services the catalog (queue ids for the charts and rates) and peek
 * @param history  the queues' sampled counts
 * @param nav      the navigation bar for a session
 * @param work     where pages are built (never a backend's reply thread: building may wait for the catalog)
 * @param refreshSeconds how often a page's live regions reload in place
 */
record PageContext(ConsoleApi api, SqsServices services, QueueHistory history,
                   Function<ConsoleSessions.Session, String> nav, Executor work, int refreshSeconds) {
}
