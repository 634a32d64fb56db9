package io.sluice.frontend.http;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpServerExpectContinueHandler;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.timeout.IdleStateHandler;
import io.sluice.common.SqsError;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The SQS endpoint: a short Netty pipeline, {@code [SslHandler ->] IdleStateHandler -> ConnectionGuard -> HttpServerCodec ->
 * HttpObjectAggregator(limit) -> HttpServerExpectContinueHandler -> SqsHttpHandler}. A request whose declared or
 * actual size exceeds the limit is refused with an SQS error before it is buffered whole; header and line limits
 * bound what a client can make the server hold; {@link ConnectionLimits} bound how long and how many (connection cap,
 * request read timeout, idle timeout, pipelined requests).
 */
public final class SqsHttpServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(SqsHttpServer.class);
    static final int MAX_INITIAL_LINE = 16 * 1024;
    static final int MAX_HEADER_BYTES = 32 * 1024;

    private final SqsRequestProcessor processor;
    private final int maxRequestBytes;
    private final ConnectionLimits limits;
    private final SslContext tls;
    private final InFlight inFlight = new InFlight();
    private final ConnectionGuard.Counts openConnections = new ConnectionGuard.Counts();
    private EventLoopGroup boss;
    private EventLoopGroup workers;
    private Channel channel;

    public SqsHttpServer(SqsRequestProcessor processor, int maxRequestBytes) {
        this(processor, maxRequestBytes, ConnectionLimits.DEFAULTS, null);
    }

    /** @param tls HTTPS (the handshake is the pipeline's first step), or null for plain HTTP */
    public SqsHttpServer(SqsRequestProcessor processor, int maxRequestBytes, ConnectionLimits limits, SslContext tls) {
        this.processor = processor;
        this.maxRequestBytes = maxRequestBytes;
        this.limits = limits;
        this.tls = tls;
    }

    public InetSocketAddress start(String host, int port) throws InterruptedException {
        boss = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        workers = new MultiThreadIoEventLoopGroup(0, NioIoHandler.newFactory());
        ServerBootstrap bootstrap = new ServerBootstrap()
                .group(boss, workers)
                .channel(NioServerSocketChannel.class)
                .option(ChannelOption.SO_BACKLOG, 1024)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ConnectionGuard guard = new ConnectionGuard(limits, openConnections);
                        if (tls != null) {
                            ch.pipeline().addLast(tls.newHandler(ch.alloc()));
                        }
                        ch.pipeline()
                                // idle events flow toward the tail: the guard that acts on them comes after
                                .addLast(new IdleStateHandler(0, 0, limits.idleTimeoutMillis(), TimeUnit.MILLISECONDS))
                                .addLast(guard)
                                .addLast(new HttpServerCodec(MAX_INITIAL_LINE, MAX_HEADER_BYTES, 64 * 1024))
                                .addLast(new SizeLimitedAggregator(maxRequestBytes, processor))
                                .addLast(new HttpServerExpectContinueHandler())
                                .addLast(new SqsHttpHandler(processor, inFlight, guard));
                    }
                });
        channel = bootstrap.bind(host, port).sync().channel();
        return (InetSocketAddress) channel.localAddress();
    }

    private boolean stopped;

    /** Connections open on the SQS port now (those closed at once for being past the cap included until closed). */
    public int openConnections() {
        return openConnections.open();
    }

    /**
     * Stops accepting, lets in-flight requests finish (up to {@code graceMillis}), then closes connections. Once: a
     * second call does nothing.
     */
    public synchronized void stop(long graceMillis) {
        if (stopped) {
            return;
        }
        stopped = true;
        if (channel != null) {
            channel.close().syncUninterruptibly();
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(graceMillis);
        while (inFlight.count() > 0 && System.nanoTime() < deadline) {
            try {
                Thread.sleep(10); // shutdown thread only: waiting for in-flight requests, never an event loop
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        if (inFlight.count() > 0) {
            LOG.warn("{} requests still in flight at shutdown", inFlight.count());
        }
        if (workers != null) {
            workers.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
            boss.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }

    @Override
    public void close() {
        stop(5_000);
    }

    /** Answers an oversized request with an SQS error (in the request's protocol) instead of a bare 413. */
    private static final class SizeLimitedAggregator extends HttpObjectAggregator {
        private final SqsRequestProcessor processor;

        SizeLimitedAggregator(int maxContentLength, SqsRequestProcessor processor) {
            super(maxContentLength);
            this.processor = processor;
        }

        @Override
        protected void handleOversizedMessage(ChannelHandlerContext ctx, HttpMessage oversized) {
            Map<String, List<String>> headers = new LinkedHashMap<>();
            oversized.headers().forEach(h -> headers.computeIfAbsent(h.getKey().toLowerCase(Locale.ROOT),
                    k -> new ArrayList<>()).add(h.getValue()));
            SqsRequestProcessor.Incoming in = new SqsRequestProcessor.Incoming("POST", "/", headers, new byte[0],
                    String.valueOf(ctx.channel().remoteAddress()), () -> false);
            SqsHttpHandler.write(ctx, processor.reject(in, SqsError.REQUEST_ENTITY_TOO_LARGE.withMessage(
                    "The request is larger than the server accepts.")), false);
            ctx.channel().config().setAutoRead(true);
        }
    }
}
