package io.sluice.worker.spring;

import io.sluice.worker.SluiceWorker;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * {@code sluiceWorker} health: UP while the listeners run, with each queue's breaker state and messages held; DOWN
 * once they are stopped. An open breaker is reported in the details but keeps the status UP: the downstream is down,
 * not this application, and restarting it would not help.
 */
public class SluiceWorkerHealthIndicator implements HealthIndicator {
    private final SluiceListenerRegistry registry;

    public SluiceWorkerHealthIndicator(SluiceListenerRegistry registry) {
        this.registry = registry;
    }

    @Override
    public Health health() {
        Map<String, Object> queues = new LinkedHashMap<>();
        registry.workers().forEach((url, w) -> queues.put(url, details(w)));
        Health.Builder b = registry.isRunning() ? Health.up() : Health.down();
        return b.withDetail("queues", queues).build();
    }

    private static Map<String, Object> details(SluiceWorker w) {
        return Map.of("breaker", w.circuitBreaker().getState().name(), "inFlight", w.inFlight());
    }
}
