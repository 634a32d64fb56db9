package io.sluice.frontend.http;

import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.DateFormatter;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.sluice.common.SqsError;
import java.util.ArrayList;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Hands each complete request to the {@link SqsRequestProcessor} and writes its answer when it is ready. Nothing
 * here blocks: the processor runs actions on worker threads and long polls are futures, so the event loop only
 * copies bytes.
 */
final class SqsHttpHandler extends SimpleChannelInboundHandler<FullHttpRequest> {
    private static final Logger LOG = LoggerFactory.getLogger(SqsHttpHandler.class);
    private final SqsRequestProcessor processor;
    private final InFlight inFlight;
    private final ConnectionGuard guard;
    /**
     * The previous request's response on this connection. HTTP/1.1 answers pipelined requests in order, so a
     * request is processed only once the one before it has been answered. Touched only on the event loop.
     */
    private CompletableFuture<Void> previous = CompletableFuture.completedFuture(null);

    SqsHttpHandler(SqsRequestProcessor processor, InFlight inFlight, ConnectionGuard guard) {
        this.processor = processor;
        this.inFlight = inFlight;
        this.guard = guard;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
        guard.requestComplete();
        boolean keepAlive = HttpUtil.isKeepAlive(request);
        Map<String, List<String>> headers = new LinkedHashMap<>();
        request.headers().forEach(h -> headers.computeIfAbsent(h.getKey().toLowerCase(Locale.ROOT), k -> new ArrayList<>())
                .add(h.getValue()));
        SqsRequestProcessor.Incoming in = new SqsRequestProcessor.Incoming(request.method().name(), request.uri(),
                headers, ByteBufUtil.getBytes(request.content()), String.valueOf(ctx.channel().remoteAddress()),
                () -> ctx.channel().isActive());
        if (request.decoderResult().isFailure()) {
            write(ctx, processor.reject(in, SqsError.MALFORMED_REQUEST.withMessage("The HTTP request is malformed.")),
                    false);
            return;
        }
        inFlight.begin();
        guard.requestStarted(ctx);
        previous = previous.thenCompose(v -> processor.process(in)).handle((out, error) -> {
            SqsRequestProcessor.Outgoing answer = out;
            if (answer == null) { // a bug past the processor's own error handling: say so, and answer 500 all the same
                LOG.error("a request from {} failed without an answer", in.remoteAddress(), error);
                answer = internalError(in);
            }
            // in flight, for the shutdown that waits for requests and for the guard's idle timeout alike, until the
            // answer is on the wire: counted answered before its write, a long poll whose wait ended as the idle
            // timer fired was closed unanswered (the idle check saw nothing pending and nothing written)
            ChannelFuture sent = answer != null ? write(ctx, answer, keepAlive) : ctx.close();
            if (sent == null) {
                try {
                    ctx.executor().execute(() -> guard.requestAnswered(ctx)); // the guard lives on the event loop
                } catch (RejectedExecutionException shuttingDown) {
                    // the event loop is gone with its connections: nothing left to count
                }
                inFlight.end();
            } else {
                sent.addListener(f -> { // on the event loop
                    guard.requestAnswered(ctx);
                    inFlight.end();
                });
            }
            return null;
        });
    }

    /** InternalError for a request whose processing failed outright, or null if even that cannot be rendered. */
    private SqsRequestProcessor.Outgoing internalError(SqsRequestProcessor.Incoming in) {
        try {
            return processor.reject(in, SqsError.INTERNAL_FAILURE.failure());
        } catch (RuntimeException e) {
            LOG.error("could not render an InternalError answer; closing the connection", e);
            return null;
        }
    }

    /** Writes the answer; the future of its write, or null when the connection is already gone. */
    static ChannelFuture write(ChannelHandlerContext ctx, SqsRequestProcessor.Outgoing out,
                                                boolean keepAlive) {
        if (!ctx.channel().isActive()) {
            return null;
        }
        FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
                HttpResponseStatus.valueOf(out.status()), Unpooled.wrappedBuffer(out.body()));
        response.headers().set(HttpHeaderNames.CONTENT_TYPE, out.contentType());
        response.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, out.body().length);
        response.headers().set(HttpHeaderNames.DATE, DateFormatter.format(new Date()));
        out.headers().forEach((k, v) -> response.headers().set(k, v));
        if (keepAlive) {
            response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
            return ctx.writeAndFlush(response);
        }
        response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        return ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        LOG.debug("closing the connection from {}: {}", ctx.channel().remoteAddress(), cause.toString());
        ctx.close();
    }
}
