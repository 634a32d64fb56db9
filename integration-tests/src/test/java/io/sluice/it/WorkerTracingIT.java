package io.sluice.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import io.sluice.worker.SluiceWorker;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.sqs.SqsAsyncClient;
import software.amazon.awssdk.services.sqs.model.MessageAttributeValue;
import software.amazon.awssdk.services.sqs.model.MessageSystemAttributeNameForSends;
import software.amazon.awssdk.services.sqs.model.MessageSystemAttributeValue;

/**
 * Issue 43 item 7: with OpenTelemetry on the class path, each handler run is a CONSUMER span whose parent is the
 * producer's trace, from a {@code traceparent} message attribute (W3C) or the {@code AWSTraceHeader} system attribute
 * (X-Ray), current while the handler runs; a message with neither starts a trace of its own; a failure marks the span.
 */
class WorkerTracingIT extends SharedServer {
    private static final String TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
    private static final String PARENT = "00f067aa0ba902b7";
    private static final String XRAY_TRACE = "5759e988bd862e3fe1be46a994272793";
    private static final String XRAY_PARENT = "53995c3f42cd8ad8";

    @Test
    void theHandlerRunsInTheProducersTrace() throws Exception {
        List<SpanData> exported = new CopyOnWriteArrayList<>();
        SdkTracerProvider tracing = SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(
                new SpanExporter() {
                    @Override
                    public CompletableResultCode export(Collection<SpanData> spans) {
                        exported.addAll(spans);
                        return CompletableResultCode.ofSuccess();
                    }

                    @Override
                    public CompletableResultCode flush() {
                        return CompletableResultCode.ofSuccess();
                    }

                    @Override
                    public CompletableResultCode shutdown() {
                        return CompletableResultCode.ofSuccess();
                    }
                })).build();
        OpenTelemetrySdk otel = OpenTelemetrySdk.builder().setTracerProvider(tracing).build();
        String url = createQueue("traced");
        sqs.sendMessage(b -> b.queueUrl(url).messageBody("w3c").messageAttributes(Map.of("traceparent",
                MessageAttributeValue.builder().dataType("String").stringValue("00-" + TRACE + "-" + PARENT + "-01")
                        .build())));
        sqs.sendMessage(b -> b.queueUrl(url).messageBody("xray").messageSystemAttributes(Map.of(
                MessageSystemAttributeNameForSends.AWS_TRACE_HEADER, MessageSystemAttributeValue.builder()
                        .dataType("String").stringValue("Root=1-" + XRAY_TRACE.substring(0, 8) + "-"
                                + XRAY_TRACE.substring(8) + ";Parent=" + XRAY_PARENT + ";Sampled=1").build())));
        sqs.sendMessage(b -> b.queueUrl(url).messageBody("untraced"));
        sqs.sendMessage(b -> b.queueUrl(url).messageBody("fails"));
        Map<String, SpanContext> current = new ConcurrentHashMap<>();
        try (SqsAsyncClient client = WorkerIT.asyncClient(server.endpoint(), null);
             SluiceWorker worker = SluiceWorker.builder(client, url, m -> {
                 current.putIfAbsent(m.body(), Span.current().getSpanContext());
                 if (m.body().equals("fails")) {
                     throw new IllegalStateException("traced failure");
                 }
             }).waitTime(Duration.ofSeconds(1)).openTelemetry(otel).build().start()) {
            await().atMost(Duration.ofSeconds(60)).until(() -> current.size() == 4 && exported.size() >= 4);
        }
        assertEquals(TRACE, current.get("w3c").getTraceId(), "the W3C producer's trace");
        assertEquals(XRAY_TRACE, current.get("xray").getTraceId(), "the X-Ray producer's trace");
        assertTrue(current.get("untraced").isValid(), "a span of its own");
        assertNotEquals(TRACE, current.get("untraced").getTraceId());
        SpanData w3c = span(exported, current.get("w3c"));
        assertEquals(PARENT, w3c.getParentSpanId(), "a child of the producer's span");
        assertEquals(SpanKind.CONSUMER, w3c.getKind());
        assertEquals(url.substring(url.lastIndexOf('/') + 1) + " process", w3c.getName());
        assertEquals("aws_sqs", w3c.getAttributes().asMap().entrySet().stream()
                .filter(e -> e.getKey().getKey().equals("messaging.system")).findFirst().orElseThrow().getValue());
        assertEquals(XRAY_PARENT, span(exported, current.get("xray")).getParentSpanId());
        assertFalse(span(exported, current.get("untraced")).getParentSpanContext().isValid(), "a root span");
        SpanData failed = span(exported, current.get("fails"));
        assertEquals(StatusCode.ERROR, failed.getStatus().getStatusCode());
        assertTrue(failed.getEvents().stream().anyMatch(e -> e.getName().equals("exception")), "the exception recorded");
        tracing.close();
    }

    private static SpanData span(List<SpanData> exported, SpanContext context) {
        return exported.stream().filter(s -> s.getSpanId().equals(context.getSpanId())).findFirst()
                .orElseThrow(() -> new AssertionError("no span " + context + " in " + exported));
    }
}
