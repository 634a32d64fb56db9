package io.sluice.frontend.http;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.timeout.IdleStateEvent;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Before any HTTP decoding in each connection's pipeline: enforces {@link ConnectionLimits}.
 *
 * <ul>
 *   <li>the connection caps: a connection beyond {@code maxConnections}, or beyond {@code maxConnectionsPerAddress}
 *       from its client's address, is closed as it opens;</li>
 *   <li>the request read timeout: from the connection's opening, and then from the first byte of each request,
 *       until the handler has the request whole ({@link #requestComplete}); a client that sends nothing or trickles
 *       headers or a body is cut off;</li>
 *   <li>the idle timeout: on an all-idle event from the {@code IdleStateHandler} before it, the connection is closed
 *       unless a request is in flight (a parked long poll is not idle);</li>
 *   <li>pipelining: {@link #requestStarted}/{@link #requestAnswered} count requests received but not answered; past
 *       {@code maxPipelined} the connection stops reading until answers go out.</li>
 * </ul>
 * Every method runs on the connection's event loop.
 */
public final class ConnectionGuard extends ChannelDuplexHandler {
    /** A server's open connections: in all and by client address (shared by its connections' guards). */
    public static final class Counts {
        final AtomicInteger open = new AtomicInteger();
        private final ConcurrentHashMap<InetAddress, AtomicInteger> byAddress = new ConcurrentHashMap<>();

        /** Open connections now (those closed at once for being past a cap included until closed). */
        public int open() {
            return open.get();
        }

        /** Counts one more from {@code address}; returns how many are open from it now. */
        int opened(InetAddress address) {
            return byAddress.computeIfAbsent(address, a -> new AtomicInteger()).incrementAndGet();
        }

        void closed(InetAddress address) {
            byAddress.computeIfPresent(address, (a, n) -> n.decrementAndGet() <= 0 ? null : n);
        }
    }

    private final ConnectionLimits limits;
    private final Counts counts;
    private boolean counted;
    private InetAddress address;
    private ScheduledFuture<?> readDeadline;
    private int pending;

    public ConnectionGuard(ConnectionLimits limits, Counts counts) {
        this.limits = limits;
        this.counts = counts;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        counted = true;
        int fromAddress = 0;
        if (ctx.channel().remoteAddress() instanceof InetSocketAddress remote && remote.getAddress() != null) {
            address = remote.getAddress();
            fromAddress = counts.opened(address);
        }
        if (counts.open.incrementAndGet() > limits.maxConnections() || fromAddress > limits.maxConnectionsPerAddress()) {
            ctx.close();
            return;
        }
        startDeadline(ctx); // a connection that sends nothing is not kept for the idle timeout either
        super.channelActive(ctx);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        if (counted) {
            counted = false;
            counts.open.decrementAndGet();
            if (address != null) {
                counts.closed(address);
            }
        }
        cancelDeadline();
        super.channelInactive(ctx);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
        if (msg instanceof ByteBuf buf && buf.isReadable() && readDeadline == null) {
            startDeadline(ctx); // the first bytes of a request: it must be complete before the deadline
        }
        super.channelRead(ctx, msg);
    }

    private void startDeadline(ChannelHandlerContext ctx) {
        readDeadline = ctx.executor().schedule((Runnable) ctx::close, limits.requestReadTimeoutMillis(),
                TimeUnit.MILLISECONDS);
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof IdleStateEvent) {
            if (pending == 0 && readDeadline == null) {
                ctx.close();
            }
            return;
        }
        super.userEventTriggered(ctx, evt);
    }

    /** A request arrived whole: its read deadline is over. */
    public void requestComplete() {
        cancelDeadline();
    }

    /** A request was handed on for processing. */
    void requestStarted(ChannelHandlerContext ctx) {
        if (++pending >= limits.maxPipelined()) {
            ctx.channel().config().setAutoRead(false);
        }
    }

    /** A request's answer was written (or the request failed). */
    void requestAnswered(ChannelHandlerContext ctx) {
        if (pending-- == limits.maxPipelined() && ctx.channel().isActive()) {
            ctx.channel().config().setAutoRead(true);
        }
    }

    private void cancelDeadline() {
        if (readDeadline != null) {
            readDeadline.cancel(false);
            readDeadline = null;
        }
    }
}
