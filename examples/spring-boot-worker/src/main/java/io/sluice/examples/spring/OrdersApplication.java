package io.sluice.examples.spring;

import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.ApplicationRunner;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import software.amazon.awssdk.services.sqs.SqsAsyncClient;
import software.amazon.awssdk.services.sqs.model.MessageAttributeValue;

/**
 * A Spring Boot application consuming a queue with {@code @SluiceListener} ({@link OrderHandler}). On start it sends
 * {@code app.send-on-start} orders to the queue, each with a W3C {@code traceparent} attribute as a traced producer
 * would, then handles them until stopped (Ctrl-C stops the listener gracefully). Against {@code sluice dev}:
 *
 * <pre>
 * mvn -B -q -DskipTests install &amp;&amp; java -jar broker-server/target/sluice.jar dev &amp;
 * cd examples/spring-boot-worker &amp;&amp; mvn spring-boot:run
 * </pre>
 */
@SpringBootApplication
public class OrdersApplication {
    public static void main(String[] args) {
        SpringApplication.run(OrdersApplication.class, args);
    }

    @Bean
    ApplicationRunner sendOrders(SqsAsyncClient sqs, @Value("${app.queue}") String queue,
                                 @Value("${app.send-on-start}") int count) {
        return args -> {
            String url = sqs.getQueueUrl(r -> r.queueName(queue)).get().queueUrl();
            for (int i = 0; i < count; i++) {
                int n = i;
                sqs.sendMessage(r -> r.queueUrl(url).messageBody("order " + n)
                        .messageAttributes(Map.of("traceparent", traceparent()))).get();
            }
        };
    }

    /** What an OpenTelemetry producer writes: version 00, a trace id, a parent span id, sampled. */
    static MessageAttributeValue traceparent() {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        return MessageAttributeValue.builder().dataType("String").stringValue(String.format("00-%016x%016x-%016x-01",
                r.nextLong() | 1, r.nextLong(), r.nextLong() | 1)).build();
    }
}
