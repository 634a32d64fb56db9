package io.sluice.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.opentelemetry.api.GlobalOpenTelemetry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.MessageAttributeValue;
import software.amazon.awssdk.services.sqs.model.MessageSystemAttributeName;

/** The producer's trace as read from a message, and the global OpenTelemetry left for the application to set. */
class OpenTelemetryTracingTest {
    @Test
    void theParentComesFromTraceparentElseTheXRayHeader() {
        Message w3c = Message.builder().messageId("1").messageAttributes(Map.of("traceparent", MessageAttributeValue
                .builder().dataType("String").stringValue("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
                .build())).build();
        SpanContext a = Span.fromContext(OpenTelemetryTracing.producerContext(w3c)).getSpanContext();
        assertEquals("4bf92f3577b34da6a3ce929d0e0e4736", a.getTraceId());
        assertEquals("00f067aa0ba902b7", a.getSpanId());
        assertTrue(a.isSampled() && a.isRemote());

        Message xray = Message.builder().messageId("2").attributes(Map.of(MessageSystemAttributeName.AWS_TRACE_HEADER,
                "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=0")).build();
        SpanContext b = Span.fromContext(OpenTelemetryTracing.producerContext(xray)).getSpanContext();
        assertEquals("5759e988bd862e3fe1be46a994272793", b.getTraceId());
        assertEquals("53995c3f42cd8ad8", b.getSpanId());
        assertFalse(b.isSampled());

        Message reordered = Message.builder().messageId("3").attributes(Map.of(MessageSystemAttributeName
                .AWS_TRACE_HEADER, "Parent=53995c3f42cd8ad8;Root=1-5759e988-bd862e3fe1be46a994272793")).build();
        assertEquals("53995c3f42cd8ad8", Span.fromContext(OpenTelemetryTracing.producerContext(reordered))
                .getSpanContext().getSpanId(), "fields in any order");
        for (String bad : List.of("Root=1-5759e988;Parent=53995c3f42cd8ad8", "Root=1-5759e988-bd862e3fe1be46a994272793",
                "nonsense", "Root=1-00000000-000000000000000000000000;Parent=0000000000000000")) {
            assertNull(OpenTelemetryTracing.producerContext(Message.builder().messageId("4").attributes(Map.of(
                    MessageSystemAttributeName.AWS_TRACE_HEADER, bad)).build()), bad);
        }
        assertNull(OpenTelemetryTracing.producerContext(Message.builder().messageId("5").build()), "no trace");
    }

    @Test
    void theWorkerNeverSetsTheGlobalInstance() {
        HandlerTracing tracing = HandlerTracing.detect(null);
        tracing.start("q", List.of(Message.builder().messageId("1").build())).end();
        assertFalse(GlobalOpenTelemetry.isSet(), "the application's GlobalOpenTelemetry.set() must still work");
    }
}
