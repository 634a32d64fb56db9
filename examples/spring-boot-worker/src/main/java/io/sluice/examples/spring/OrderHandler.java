package io.sluice.examples.spring;

import io.sluice.worker.DownstreamException;
import io.sluice.worker.MessageContext;
import io.sluice.worker.spring.SluiceListener;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

/** Handles the orders: one in ten asks to be retried in 5 s; a malformed one goes to the dead-letter queue. */
@Component
public class OrderHandler {
    private static final Logger LOG = LoggerFactory.getLogger(OrderHandler.class);

    @SluiceListener(queue = "${app.queue}", visibilityTimeoutSeconds = 30)
    public void handle(MessageContext order) throws DownstreamException {
        if (!order.body().startsWith("order ")) {
            order.deadLetterNow("not an order: " + order.body()); // needs a RedrivePolicy on the queue
            return;
        }
        if (order.receiveCount() == 1 && order.body().endsWith("7")) {
            LOG.info("{}: the warehouse is busy, again in 5 s", order.body());
            order.retryAfter(Duration.ofSeconds(5));
            return;
        }
        LOG.info("{} handled (receive {}, sent {})", order.body(), order.receiveCount(),
                order.sentTimestamp().orElse(null));
    }
}
