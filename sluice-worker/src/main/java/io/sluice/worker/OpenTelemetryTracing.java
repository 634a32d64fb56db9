package io.sluice.worker;

import io.opentelemetry.api.GlobalOpenTelemetry;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.TraceFlags;
import io.opentelemetry.api.trace.TraceState;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.MessageAttributeValue;
import software.amazon.awssdk.services.sqs.model.MessageSystemAttributeName;

/** {@link HandlerTracing} with OpenTelemetry (loaded only when its API is on the class path). */
final class OpenTelemetryTracing implements HandlerTracing {
    private static final TextMapGetter<Map<String, MessageAttributeValue>> ATTRIBUTES = new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(Map<String, MessageAttributeValue> carrier) {
            return carrier.keySet();
        }

        @Override
        public String get(Map<String, MessageAttributeValue> carrier, String key) {
            MessageAttributeValue v = carrier == null ? null : carrier.get(key);
            return v == null ? null : v.stringValue();
        }
    };

    private static final String SCOPE = "io.sluice.worker";
    /** The tracer: the given OpenTelemetry's, or the global one's once the application has set it. */
    private volatile Tracer tracer;

    private OpenTelemetryTracing(Tracer tracer) {
        this.tracer = tracer;
    }

    static HandlerTracing create(Object openTelemetry) {
        return new OpenTelemetryTracing(openTelemetry instanceof OpenTelemetry o ? o.getTracer(SCOPE) : null);
    }

    /**
     * The global tracer without fixing the global instance: GlobalOpenTelemetry.get() would set a no-op one when the
     * application has not set its own yet, and the application's set() would then fail.
     */
    private Tracer tracer() {
        Tracer t = tracer;
        if (t != null) {
            return t;
        }
        try {
            if (!GlobalOpenTelemetry.isSet()) {
                return GlobalOpenTelemetry.getOrNoop().getTracer(SCOPE); // no-op for now, asked again next time
            }
        } catch (NoSuchMethodError olderApi) { // before isSet/getOrNoop: get() is all there is
            // fall through
        }
        t = GlobalOpenTelemetry.get().getTracer(SCOPE);
        tracer = t;
        return t;
    }

    @Override
    public Run start(String queue, List<Message> messages) {
        SpanBuilder builder = tracer().spanBuilder(queue + " process").setSpanKind(SpanKind.CONSUMER)
                .setAttribute("messaging.system", "aws_sqs").setAttribute("messaging.destination.name", queue)
                .setAttribute("messaging.operation.type", "process");
        Context parent = null;
        for (Message m : messages) {
            Context context = producerContext(m);
            if (context == null) {
                continue;
            }
            if (parent == null) {
                parent = context;
            } else {
                builder.addLink(Span.fromContext(context).getSpanContext());
            }
        }
        builder.setParent(parent != null ? parent : Context.root());
        if (messages.size() == 1) {
            builder.setAttribute("messaging.message.id", messages.get(0).messageId());
        } else {
            builder.setAttribute("messaging.batch.message_count", (long) messages.size());
        }
        Span span = builder.startSpan();
        Scope scope = span.makeCurrent();
        return new Run() {
            @Override
            public void failed(Throwable cause) {
                span.recordException(cause);
                span.setStatus(StatusCode.ERROR);
            }

            @Override
            public void end() {
                scope.close();
                span.end();
            }
        };
    }

    /** The producer's trace: the {@code traceparent} attribute, else the X-Ray header; null if neither is valid. */
    static Context producerContext(Message m) {
        if (m.hasMessageAttributes() && m.messageAttributes().containsKey("traceparent")) {
            Context c = W3CTraceContextPropagator.getInstance().extract(Context.root(), m.messageAttributes(),
                    ATTRIBUTES);
            if (Span.fromContext(c).getSpanContext().isValid()) {
                return c;
            }
        }
        String xray = m.attributes().get(MessageSystemAttributeName.AWS_TRACE_HEADER);
        if (xray != null) { // Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1
            Map<String, String> fields = new HashMap<>();
            for (String part : xray.split(";")) {
                int eq = part.indexOf('=');
                if (eq > 0) {
                    fields.put(part.substring(0, eq).trim(), part.substring(eq + 1).trim());
                }
            }
            String root = fields.getOrDefault("Root", "");
            String parentId = fields.getOrDefault("Parent", "");
            if (root.matches("1-[0-9a-f]{8}-[0-9a-f]{24}") && parentId.matches("[0-9a-f]{16}")) {
                SpanContext sc = SpanContext.createFromRemoteParent(root.substring(2, 10) + root.substring(11),
                        parentId, "1".equals(fields.get("Sampled")) ? TraceFlags.getSampled() : TraceFlags.getDefault(),
                        TraceState.getDefault());
                if (sc.isValid()) {
                    return Context.root().with(Span.wrap(sc));
                }
            }
        }
        return null;
    }
}
