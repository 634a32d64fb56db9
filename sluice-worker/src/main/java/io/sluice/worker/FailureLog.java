package io.sluice.worker;

import org.slf4j.Logger;

/**
 * Handler failures at WARN, at most one line per interval per worker: the first failure of an interval is logged with
 * its stack trace and the count of those not logged since the previous line, so a flood of failures is visible
 * without flooding the log.
 */
final class FailureLog {
    private final Logger log;
    private final String queue;
    private final long intervalNanos;
    private long lastLogged;
    private boolean any;
    private int notLogged;

    FailureLog(Logger log, String queue, long intervalMillis) {
        this.log = log;
        this.queue = queue;
        this.intervalNanos = intervalMillis * 1_000_000L;
    }

    synchronized void failed(String messageId, int receiveCount, int visibleAgainSeconds, Throwable cause) {
        long now = System.nanoTime();
        if (any && now - lastLogged < intervalNanos) {
            notLogged++;
            return;
        }
        log.warn("queue {}: handler failed on message {} (receive {}), visible again in {} s{}", queue, messageId,
                receiveCount, visibleAgainSeconds, notLogged == 0 ? ""
                        : "; " + notLogged + " more failures since the last such line", cause);
        any = true;
        lastLogged = now;
        notLogged = 0;
    }
}
