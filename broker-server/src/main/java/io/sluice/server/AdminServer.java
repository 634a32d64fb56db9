package io.sluice.server;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.timeout.IdleStateHandler;
import io.sluice.frontend.console.Console;
import io.sluice.frontend.http.ConnectionGuard;
import io.sluice.frontend.http.ConnectionLimits;
import io.sluice.metadata.raft.MetadataUnavailableException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The admin endpoint: {@code GET /health} (liveness: 200 while serving, 503 otherwise), {@code GET /ready}
 * (readiness: 200 once the role can do its work, e.g. a backend that joined every shard assigned to it),
 * {@code GET /metrics} (Prometheus) and {@code GET /admin/status} (cluster status as JSON, what
 * {@code sluice admin status} prints). The status runs on the admin event loop: it reads in-memory images only;
 * a scrape reads shard state under its locks, so it runs on a thread of its own.
 *
 * <p>State-changing endpoints ({@code POST}) need the admin token ({@link AdminAccess}: 401 without it, 403 when no
 * token is configured) and a JSON body ({@code Content-Type: application/json}, else 415), so a browser cannot post
 * to them across sites. {@code /metrics} and {@code /admin/status} need the read token or the admin token unless
 * {@code sluice.admin.read-auth} is off ({@code sluice dev}'s default): 401 without it, 403 when neither is
 * configured; {@code /health} and {@code /ready} never do.
 *
 * <p>The port is a door like the SQS port, bounded before anything is authenticated ({@link #LIMITS}): a request must
 * arrive whole within 10 s, an idle connection closes after 60 s, at most 256 connections in all and 32 from one
 * address; a request that does not parse (two Content-Lengths, Content-Length with Transfer-Encoding, a header past
 * 8 KiB) is answered 400 (431 for the header) and its connection closed; a {@code Host} that is neither an IP address,
 * localhost nor a configured name ({@code sluice.admin.allowed-hosts}) is refused (403), against DNS rebinding.
 */
final class AdminServer implements AutoCloseable {
    /** What connections to the admin port may hold (see the class comment). */
    private static final ObjectMapper JSON = new ObjectMapper();
    static final ConnectionLimits LIMITS =
            new ConnectionLimits(10_000, 60_000, 256, 4, 32);
    private final ConnectionGuard.Counts connections =
            new ConnectionGuard.Counts();
    private final PrometheusMeterRegistry registry;
    private final BooleanSupplier healthy;
    private final BooleanSupplier ready;
    /** Why this process is not ready (null when it is), said in the body of a 503 from {@code /ready}. */
    private volatile Supplier<String> whyNotReady = () -> null;
    private final ExecutorService scrapes = Executors
            .newSingleThreadExecutor(DevServer.daemon("sluice-metrics-scrape"));
    /** Catalog writes of POST handlers: they block on the metadata group, never on the event loop or a shared pool. */
    private final ExecutorService writes = Executors
            .newSingleThreadExecutor(DevServer.daemon("sluice-admin-writes"));
    /** The scrape under way: concurrent scrapes share it rather than queue up. */
    private final AtomicReference<CompletableFuture<String>> scrape =
            new AtomicReference<>();
    private final Supplier<String> status;
    private final Map<String, Function<byte[], String>> posts;
    private final AdminAccess access;
    private EventLoopGroup group;
    private Channel channel;
    /** The web console ({@code /console}), on a role with a frontend; null elsewhere. */
    private volatile Console console;
    private volatile boolean tls;
    private final ExecutorService consoleWork = Executors
            .newFixedThreadPool(2, DevServer.daemon("sluice-console"));

    /**
     * @param status renders {@code GET /admin/status} (JSON)
     * @param posts  handlers of {@code POST} paths (e.g. {@code /admin/access-keys}, {@code /admin/rebalance}) taking
     *               the body and answering JSON; they may block (they run off the event loop) and throw
     *               IllegalArgumentException on bad input
     * @param access who may post, and whether metrics need the token
     */
    AdminServer(PrometheusMeterRegistry registry, BooleanSupplier healthy, BooleanSupplier ready,
                Supplier<String> status,
                Map<String, Function<byte[], String>> posts, AdminAccess access) {
        this.access = access;
        this.registry = registry;
        this.healthy = healthy;
        this.ready = ready;
        this.status = status;
        this.posts = posts;
    }

    /** Serves the web console under {@code /console} (before {@link #start}). */
    AdminServer withConsole(Console console) {
        this.console = console;
        return this;
    }

    AdminServer withReadinessReason(Supplier<String> whyNotReady) {
        this.whyNotReady = whyNotReady;
        return this;
    }

    /** @param tls HTTPS, or null for plain HTTP */
    InetSocketAddress start(String host, int port, SslContext tls) throws InterruptedException {
        this.tls = tls != null;
        group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        channel = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        var guard = new ConnectionGuard(LIMITS, connections);
                        if (tls != null) {
                            ch.pipeline().addLast(tls.newHandler(ch.alloc()));
                        }
                        ch.pipeline()
                                .addLast(new IdleStateHandler(0, 0, LIMITS.idleTimeoutMillis(),
                                        TimeUnit.MILLISECONDS))
                                .addLast(guard)
                                .addLast(new HttpServerCodec(4096, 8192, 8192))
                                .addLast(new HttpObjectAggregator(64 * 1024))
                                .addLast(new Handler(guard));
                    }
                }).bind(host, port).sync().channel();
        return (InetSocketAddress) channel.localAddress();
    }

    private CompletableFuture<String> currentScrape() {
        while (true) {
            var running = scrape.get();
            if (running != null && !running.isDone()) {
                return running;
            }
            var next = new CompletableFuture<String>();
            if (scrape.compareAndSet(running, next)) {
                try {
                    scrapes.execute(() -> {
                        try {
                            next.complete(registry.scrape());
                        } catch (Throwable e) { // never leave the shared scrape pending: every later one waits on it
                            next.completeExceptionally(e);
                        }
                    });
                } catch (RejectedExecutionException e) {
                    next.completeExceptionally(e); // closing
                }
                return next;
            }
        }
    }

    private final class Handler extends SimpleChannelInboundHandler<FullHttpRequest> {
        private final ConnectionGuard guard;

        Handler(ConnectionGuard guard) {
            this.guard = guard;
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
            guard.requestComplete();
            FullHttpResponse malformed = refuseMalformed(request);
            if (malformed != null) {
                malformed.headers().set(HttpHeaderNames.CONNECTION, "close");
                ctx.writeAndFlush(malformed).addListener(ChannelFutureListener.CLOSE);
                return;
            }
            String[] pathAndQuery = request.uri().split("\\?", 2);
            String path = pathAndQuery[0];
            if (console != null && (path.equals("/console") || path.startsWith("/console/"))) {
                serveConsole(ctx, request, path, pathAndQuery.length > 1 ? pathAndQuery[1] : null);
                return;
            }
            String authorization = request.headers().get(HttpHeaderNames.AUTHORIZATION);
            if (request.method().name().equals("POST") && posts.containsKey(path)) {
                FullHttpResponse refused = refusePost(request, authorization);
                if (refused != null) {
                    refused.headers().set(HttpHeaderNames.CONNECTION, "close");
                    ctx.writeAndFlush(refused).addListener(ChannelFutureListener.CLOSE);
                    return;
                }
                byte[] body = ByteBufUtil.getBytes(request.content());
                boolean keepAlive = HttpUtil.isKeepAlive(request);
                var handler = posts.get(path);
                // The write goes through the metadata group: off the event loop.
                CompletableFuture<String> work;
                try {
                    work = CompletableFuture.supplyAsync(() -> handler.apply(body), writes);
                } catch (RejectedExecutionException closing) {
                    work = CompletableFuture.failedFuture(
                            new IllegalStateException("shutting down"));
                }
                work.handle((ok, e) -> {
                    FullHttpResponse r = e == null ? text(HttpResponseStatus.OK, ok, "application/json")
                            : refused(e instanceof CompletionException && e.getCause() != null ? e.getCause() : e);
                    HttpUtil.setKeepAlive(r, keepAlive);
                    ctx.writeAndFlush(r);
                    return null;
                });
                return;
            }
            if ((path.equals("/metrics") || path.equals("/admin/status")) && access.readsNeedToken()
                    && !access.permitsRead(authorization)) {
                FullHttpResponse r;
                if (access.readsEnabled()) {
                    r = text(HttpResponseStatus.UNAUTHORIZED, "a token is required (Authorization: Bearer <the read"
                            + " token or the admin token>)\n", "text/plain; charset=utf-8");
                    r.headers().set(HttpHeaderNames.WWW_AUTHENTICATE, "Bearer");
                } else {
                    r = text(HttpResponseStatus.FORBIDDEN, "reading this needs a token and none is configured: set"
                            + " sluice.admin.read-token (or sluice.admin.read-auth=false)\n", "text/plain; charset=utf-8");
                }
                r.headers().set(HttpHeaderNames.CONNECTION, "close");
                ctx.writeAndFlush(r).addListener(ChannelFutureListener.CLOSE);
                return;
            }
            if (path.equals("/metrics")) {
                boolean keepAlive = HttpUtil.isKeepAlive(request);
                currentScrape().copy().orTimeout(30, TimeUnit.SECONDS).handle((text, e) -> {
                    FullHttpResponse r = e == null
                            ? text(HttpResponseStatus.OK, text, "text/plain; version=0.0.4; charset=utf-8")
                            : text(HttpResponseStatus.INTERNAL_SERVER_ERROR, "scrape failed: " + e + "\n",
                            "text/plain; charset=utf-8");
                    HttpUtil.setKeepAlive(r, keepAlive);
                    var f = ctx.writeAndFlush(r);
                    if (!keepAlive) {
                        f.addListener(ChannelFutureListener.CLOSE);
                    }
                    return null;
                });
                return;
            }
            FullHttpResponse response;
            switch (path) {
                case "/health" -> {
                    boolean ok = healthy.getAsBoolean();
                    response = text(ok ? HttpResponseStatus.OK : HttpResponseStatus.SERVICE_UNAVAILABLE,
                            ok ? "OK\n" : "STARTING OR STOPPING\n", "text/plain; charset=utf-8");
                }
                case "/ready" -> {
                    boolean ok = healthy.getAsBoolean() && ready.getAsBoolean();
                    String why = ok ? null : whyNotReady.get();
                    response = text(ok ? HttpResponseStatus.OK : HttpResponseStatus.SERVICE_UNAVAILABLE,
                            ok ? "READY\n" : why == null ? "NOT READY\n" : "NOT READY: " + why + "\n",
                            "text/plain; charset=utf-8");
                }
                case "/admin/status" -> response = statusResponse();
                default -> response = text(HttpResponseStatus.NOT_FOUND, "not found\n", "text/plain; charset=utf-8");
            }
            boolean keepAlive = HttpUtil.isKeepAlive(request);
            HttpUtil.setKeepAlive(response, keepAlive);
            var f = ctx.writeAndFlush(response);
            if (!keepAlive) {
                f.addListener(ChannelFutureListener.CLOSE);
            }
        }

        private static String remoteAddress(ChannelHandlerContext ctx) {
            return ctx.channel().remoteAddress() instanceof InetSocketAddress a && a.getAddress() != null
                    ? a.getAddress().getHostAddress() : "unknown";
        }

        /** A console page, rendered off the event loop; the connection is kept alive as the browser asks. */
        private void serveConsole(ChannelHandlerContext ctx, FullHttpRequest request, String path, String query) {
            var in = new Console.Request(request.method().name(), path, query,
                    request.headers().get(HttpHeaderNames.COOKIE), request.headers().get(HttpHeaderNames.CONTENT_TYPE),
                    ByteBufUtil.getBytes(request.content()), tls, remoteAddress(ctx),
                    request.headers().get(HttpHeaderNames.HOST), request.headers().get(HttpHeaderNames.ORIGIN),
                    request.headers().get("Sec-Fetch-Site"));
            boolean keepAlive = HttpUtil.isKeepAlive(request);
            CompletableFuture<Console.Response> work;
            try {
                work = CompletableFuture.supplyAsync(() -> console.handle(in), consoleWork)
                        .thenCompose(f -> f);
            } catch (RejectedExecutionException closing) {
                work = CompletableFuture.failedFuture(closing);
            }
            work.orTimeout(30, TimeUnit.SECONDS).handle((out, e) -> {
                FullHttpResponse r;
                if (e == null && out == null) {
                    e = new IllegalStateException("no answer");
                }
                if (e != null) {
                    r = text(HttpResponseStatus.SERVICE_UNAVAILABLE, "the console could not answer\n",
                            "text/plain; charset=utf-8");
                } else {
                    r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.valueOf(out.status()),
                            Unpooled.wrappedBuffer(out.body()));
                    r.headers().set(HttpHeaderNames.CONTENT_TYPE, out.contentType())
                            .setInt(HttpHeaderNames.CONTENT_LENGTH, out.body().length);
                    out.headers().forEach(h -> r.headers().add(h.getKey(), h.getValue()));
                }
                HttpUtil.setKeepAlive(r, keepAlive);
                var f = ctx.writeAndFlush(r);
                if (!keepAlive) {
                    f.addListener(ChannelFutureListener.CLOSE);
                }
                return null;
            });
        }

        /**
         * A request that did not parse, or that a proxy in front could read differently (request smuggling), or that
         * names a host this endpoint is not (DNS rebinding): the answer to send, or null.
         */
        private FullHttpResponse refuseMalformed(FullHttpRequest request) {
            if (request.decoderResult().isFailure()) {
                boolean tooLong = request.decoderResult().cause() instanceof TooLongFrameException;
                return text(tooLong ? HttpResponseStatus.REQUEST_HEADER_FIELDS_TOO_LARGE : HttpResponseStatus.BAD_REQUEST,
                        "malformed request\n", "text/plain; charset=utf-8");
            }
            var headers = request.headers();
            if (headers.getAll(HttpHeaderNames.CONTENT_LENGTH).size() > 1
                    || headers.contains(HttpHeaderNames.CONTENT_LENGTH) && headers.contains(HttpHeaderNames.TRANSFER_ENCODING)
                    || headers.getAll(HttpHeaderNames.HOST).size() > 1) {
                return text(HttpResponseStatus.BAD_REQUEST, "malformed request\n", "text/plain; charset=utf-8");
            }
            if (!access.hostAllowed(headers.get(HttpHeaderNames.HOST))) {
                return text(HttpResponseStatus.FORBIDDEN, "unknown host (sluice.admin.allowed-hosts)\n",
                        "text/plain; charset=utf-8");
            }
            return null;
        }

        /** Why a POST may not run (a response to send), or null when it may. */
        private FullHttpResponse refusePost(FullHttpRequest request, String authorization) {
            if (!access.writesEnabled()) {
                return text(HttpResponseStatus.FORBIDDEN, "{\"error\":\"admin writes are disabled: set"
                        + " sluice.admin.token\"}", "application/json");
            }
            if (!access.permits(authorization)) {
                FullHttpResponse r = text(HttpResponseStatus.UNAUTHORIZED, "{\"error\":\"the admin token is"
                        + " required (Authorization: Bearer ...)\"}", "application/json");
                r.headers().set(HttpHeaderNames.WWW_AUTHENTICATE, "Bearer");
                return r;
            }
            String type = request.headers().get(HttpHeaderNames.CONTENT_TYPE);
            if (type == null || !type.toLowerCase(Locale.ROOT).startsWith("application/json")) {
                return text(HttpResponseStatus.UNSUPPORTED_MEDIA_TYPE, "{\"error\":\"the body must be"
                        + " application/json\"}", "application/json");
            }
            return null;
        }

        private FullHttpResponse statusResponse() {
            try {
                return text(HttpResponseStatus.OK, status.get(), "application/json");
            } catch (RuntimeException e) {
                return text(HttpResponseStatus.SERVICE_UNAVAILABLE,
                        JSON.createObjectNode().put("error", String.valueOf(e.getMessage())).toString(), "application/json");
            }
        }

        /**
         * A write that failed: 400 for a body the handler refused, 503 (retry) when the catalog could not take it now
         * (no metadata leader, overtaken every time, shutting down), 500 for anything else.
         */
        private FullHttpResponse refused(Throwable e) {
            HttpResponseStatus status = e instanceof IllegalArgumentException ? HttpResponseStatus.BAD_REQUEST
                    : e instanceof MetadataUnavailableException || e instanceof IllegalStateException
                    ? HttpResponseStatus.SERVICE_UNAVAILABLE : HttpResponseStatus.INTERNAL_SERVER_ERROR;
            String body = JSON.createObjectNode().put("error", String.valueOf(e.getMessage())).toString();
            return text(status, body, "application/json");
        }

        private FullHttpResponse text(HttpResponseStatus status, String body, String type) {
            byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
            FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, Unpooled.wrappedBuffer(bytes));
            r.headers().set(HttpHeaderNames.CONTENT_TYPE, type).setInt(HttpHeaderNames.CONTENT_LENGTH, bytes.length);
            return r;
        }
    }

    @Override
    public void close() {
        consoleWork.shutdownNow();
        scrapes.shutdownNow();
        writes.shutdownNow();
        if (channel != null) { // bounded: a stuck event loop must not hold a node's shutdown forever
            channel.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
        }
    }
}
