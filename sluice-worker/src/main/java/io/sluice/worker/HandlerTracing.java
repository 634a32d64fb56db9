package io.sluice.worker;

import java.util.List;
import software.amazon.awssdk.services.sqs.model.Message;

/**
 * The span of each handler run, when OpenTelemetry's API is on the class path (an optional dependency): a CONSUMER span
 * "QUEUE process" whose parent is the trace the producer left on the message (a {@code traceparent} message
 * attribute, W3C Trace Context, else the {@code AWSTraceHeader} system attribute, X-Ray's form), current while the
 * handler runs, so the handler's own spans join the producer's trace. Without OpenTelemetry: nothing.
 */
interface HandlerTracing {
    /** One handler run's span. */
    interface Run {
        void failed(Throwable cause);

        void end();
    }

    Run NO_RUN = new Run() {
        @Override
        public void failed(Throwable cause) {
        }

        @Override
        public void end() {
        }
    };

    HandlerTracing NONE = (queue, messages) -> NO_RUN;

    /**
     * Starts the span of a run over {@code messages} (one, or a batch) and makes it current on this thread. Never
     * throws: tracing that fails leaves the run untraced.
     */
    Run start(String queue, List<Message> messages);

    /** OpenTelemetry's tracing when its API is present ({@code openTelemetry}: an instance, or null for the global). */
    static HandlerTracing detect(Object openTelemetry) {
        try {
            Class.forName("io.opentelemetry.api.GlobalOpenTelemetry", false, HandlerTracing.class.getClassLoader());
        } catch (ClassNotFoundException | LinkageError absent) {
            return NONE;
        }
        HandlerTracing otel = OpenTelemetryTracing.create(openTelemetry);
        return (queue, messages) -> {
            try {
                return otel.start(queue, messages);
            } catch (RuntimeException | LinkageError e) { // an OpenTelemetry of another version, a broken SDK
                return NO_RUN;
            }
        };
    }
}
