package io.sluice.worker.spring;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Metrics;
import io.sluice.worker.SluiceWorker;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsAsyncClient;
import software.amazon.awssdk.services.sqs.SqsAsyncClientBuilder;

/**
 * Runs the application's {@link SluiceListener} methods: an {@code SqsAsyncClient} from {@code sluice.worker.*} unless
 * the application defines one, the {@link SluiceListenerRegistry} (metrics on the application's
 * {@code MeterRegistry} when there is one), and with Spring Boot's health module a {@code sluiceWorker} health
 * indicator.
 */
@AutoConfiguration
@ConditionalOnClass(SluiceWorker.class)
@EnableConfigurationProperties(SluiceWorkerProperties.class)
public class SluiceWorkerAutoConfiguration {
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    public SqsAsyncClient sluiceSqsAsyncClient(SluiceWorkerProperties properties) {
        SqsAsyncClientBuilder b = SqsAsyncClient.builder().region(Region.of(properties.getRegion()));
        if (properties.getEndpoint() != null) {
            b.endpointOverride(properties.getEndpoint());
        }
        if (properties.getAccessKey() != null && !properties.getAccessKey().isEmpty()) {
            b.credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(
                    properties.getAccessKey(), properties.getSecretKey())));
        } else {
            b.credentialsProvider(DefaultCredentialsProvider.builder().build());
        }
        return b.build();
    }

    @Bean
    @ConditionalOnMissingBean
    public SluiceListenerRegistry sluiceListenerRegistry(ApplicationContext context, SqsAsyncClient sqs,
                                                         SluiceWorkerProperties properties,
                                                         ObjectProvider<MeterRegistry> meters) {
        return new SluiceListenerRegistry(context, sqs, properties, meters.getIfAvailable(() -> Metrics.globalRegistry));
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.boot.health.contributor.HealthIndicator")
    static class Health {
        @Bean
        @ConditionalOnMissingBean(name = "sluiceWorkerHealthIndicator")
        SluiceWorkerHealthIndicator sluiceWorkerHealthIndicator(SluiceListenerRegistry registry) {
            return new SluiceWorkerHealthIndicator(registry);
        }
    }
}
