package io.sluice.worker.spring;

import io.micrometer.core.instrument.MeterRegistry;
import io.sluice.worker.Backoff;
import io.sluice.worker.MessageContext;
import io.sluice.worker.SluiceWorker;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.aop.support.AopUtils;
import org.springframework.context.ApplicationContext;
import org.springframework.context.SmartLifecycle;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ClassUtils;
import software.amazon.awssdk.services.sqs.SqsAsyncClient;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.QueueDoesNotExistException;

/**
 * Finds the {@link SluiceListener} methods of the application's beans and runs a {@link SluiceWorker} for each while
 * the context runs: started last (after every other bean is ready), stopped first and gracefully (no more receives,
 * running handlers finish within {@code sluice.worker.shutdown-grace}, the rest is given back) before the beans the
 * handlers use are destroyed. While listeners run, a non-daemon thread keeps the JVM up (the workers' own threads are
 * daemons), so an application without a web server does not exit once started.
 */
public class SluiceListenerRegistry implements SmartLifecycle {
    private static final Logger LOG = LoggerFactory.getLogger(SluiceListenerRegistry.class);

    private final ApplicationContext context;
    private final SqsAsyncClient sqs;
    private final SluiceWorkerProperties properties;
    private final MeterRegistry meters;
    private final Map<String, SluiceWorker> workers = new LinkedHashMap<>();
    private volatile boolean running;
    private CountDownLatch stopped;

    public SluiceListenerRegistry(ApplicationContext context, SqsAsyncClient sqs, SluiceWorkerProperties properties,
                                  MeterRegistry meters) {
        this.context = context;
        this.sqs = sqs;
        this.properties = properties;
        this.meters = meters;
    }

    /** The running workers by queue URL. */
    public synchronized Map<String, SluiceWorker> workers() {
        return Map.copyOf(workers);
    }

    @Override
    public synchronized void start() {
        if (running) {
            return;
        }
        for (String name : context.getBeanDefinitionNames()) {
            Class<?> type = context.getType(name, false);
            if (type == null) {
                continue;
            }
            Map<Method, SluiceListener> methods = MethodIntrospector.selectMethods(ClassUtils.getUserClass(type),
                    (MethodIntrospector.MetadataLookup<SluiceListener>) m ->
                            AnnotatedElementUtils.findMergedAnnotation(m, SluiceListener.class));
            if (methods.isEmpty()) {
                continue;
            }
            Object bean = context.getBean(name);
            methods.forEach((method, listener) -> {
                SluiceWorker worker = worker(bean, AopUtils.selectInvocableMethod(method, bean.getClass()), listener);
                workers.put(worker.queueUrl(), worker.start());
            });
        }
        running = true;
        if (!workers.isEmpty()) {
            CountDownLatch latch = new CountDownLatch(1);
            stopped = latch;
            Thread keepAlive = new Thread(() -> {
                try {
                    latch.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, "sluice-worker-keepalive");
            keepAlive.setDaemon(false);
            keepAlive.start();
        }
    }

    private SluiceWorker worker(Object bean, Method method, SluiceListener listener) {
        if (method.getParameterCount() != 1) {
            throw new IllegalStateException("@SluiceListener " + method + " must take one parameter: String, Message,"
                    + " MessageContext or List<MessageContext>");
        }
        String url = queueUrl(context.getEnvironment().resolveRequiredPlaceholders(listener.queue()));
        Class<?> parameter = method.getParameterTypes()[0];
        method.setAccessible(true);
        SluiceWorker.Builder b;
        if (parameter == String.class) {
            b = SluiceWorker.builder(sqs, url, (Message m) -> invoke(bean, method, m.body()));
        } else if (parameter == Message.class) {
            b = SluiceWorker.builder(sqs, url, (Message m) -> invoke(bean, method, m));
        } else if (parameter == MessageContext.class) {
            b = SluiceWorker.contextBuilder(sqs, url, c -> invoke(bean, method, c));
        } else if (List.class.isAssignableFrom(parameter) && elementType(method) == MessageContext.class) {
            b = SluiceWorker.batchBuilder(sqs, url, batch -> invoke(bean, method, batch));
        } else {
            throw new IllegalStateException("@SluiceListener " + method + ": a parameter of type " + parameter.getName()
                    + " is not one of String, Message, MessageContext, List<MessageContext>");
        }
        SluiceWorkerProperties.Backoff backoff = properties.getBackoff();
        b.concurrency(listener.concurrency() > 0 ? listener.concurrency() : properties.getConcurrency())
                .visibilityTimeout(listener.visibilityTimeoutSeconds() > 0
                        ? Duration.ofSeconds(listener.visibilityTimeoutSeconds()) : properties.getVisibilityTimeout())
                .waitTime(listener.waitTimeSeconds() >= 0 ? Duration.ofSeconds(listener.waitTimeSeconds())
                        : properties.getWaitTime())
                .backoff(new Backoff(listener.backoffInitialSeconds() >= 0
                        ? Duration.ofSeconds(listener.backoffInitialSeconds()) : backoff.getInitial(),
                        listener.backoffMultiplier() > 0 ? listener.backoffMultiplier() : backoff.getMultiplier(),
                        listener.backoffMaxSeconds() >= 0 ? Duration.ofSeconds(listener.backoffMaxSeconds())
                                : backoff.getMax()))
                .shutdownGrace(properties.getShutdownGrace())
                .meterRegistry(meters);
        LOG.info("@SluiceListener {}.{} on {}", bean.getClass().getSimpleName(), method.getName(), url);
        return b.build();
    }

    private static Type elementType(Method method) {
        Type t = method.getGenericParameterTypes()[0];
        return t instanceof ParameterizedType p ? p.getActualTypeArguments()[0] : null;
    }

    private static void invoke(Object bean, Method method, Object argument) throws Exception {
        try {
            method.invoke(bean, argument);
        } catch (InvocationTargetException e) {
            Throwable cause = e.getCause();
            if (cause instanceof Exception ex) {
                throw ex;
            }
            if (cause instanceof Error err) {
                throw err;
            }
            throw e;
        }
    }

    /** A URL as is; a name through GetQueueUrl (creating the queue if so configured). */
    private String queueUrl(String queue) {
        if (queue.startsWith("http://") || queue.startsWith("https://")) {
            return queue;
        }
        try {
            try {
                return sqs.getQueueUrl(r -> r.queueName(queue)).get().queueUrl();
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof QueueDoesNotExistException) || !properties.isCreateMissingQueues()) {
                    throw e;
                }
                Map<String, String> attributes = queue.endsWith(".fifo")
                        ? Map.of("FifoQueue", "true", "ContentBasedDeduplication", "true") : Map.of();
                LOG.info("creating queue {} (sluice.worker.create-missing-queues)", queue);
                return sqs.createQueue(r -> r.queueName(queue).attributesWithStrings(attributes)).get().queueUrl();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted looking up queue " + queue, e);
        } catch (ExecutionException e) {
            throw new IllegalStateException("queue " + queue + ": " + e.getCause(), e.getCause());
        }
    }

    @Override
    public void stop() {
        List<SluiceWorker> closing;
        synchronized (this) {
            closing = new ArrayList<>(workers.values());
            workers.clear();
            running = false;
        }
        try {
            CompletableFuture.allOf(closing.stream().map(w -> CompletableFuture.runAsync(w::close))
                    .toArray(CompletableFuture[]::new)).join();
        } finally {
            if (stopped != null) {
                stopped.countDown();
            }
        }
    }

    @Override
    public boolean isRunning() {
        return running;
    }
}
