package io.sluice.backend.raft;

import io.sluice.backend.shard.ShardChannel;
import io.sluice.common.raft.RaftTransport;
import io.sluice.common.raft.RatisSettings;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionId;
import io.sluice.partition.PartitionOutcome;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;

/**
 * A replicated shard as its {@link ShardChannel}: commands through a {@link ShardClient} (group commit into Raft
 * entries), reads as Raft read requests to the leader, a leader in this process reached without an RPC
 * ({@link LocalLeaders}). Bound to the group's members: a changed membership takes a new channel.
 */
final class RaftShardChannel implements ShardChannel {
    /** The longest a read waits at the leader (a parked {@code AWAIT}). */
    static final long AWAIT_MILLIS = 10_000;

    private final RaftGroup group;
    private final RaftTransport transport;
    private final LocalLeaders local;
    private final Executor replies;
    private final ShardClient writer;
    private RaftClient reader;
    private RaftClient prober;
    private boolean closed;

    /**
     * @param entriesInFlight entries kept outstanding at the shard ({@link ShardedPartitionService#entriesInFlight})
     * @param replies         where replies continue (never on a Ratis thread: see {@link ShardClient})
     */
    RaftShardChannel(RaftGroup group, RaftTransport transport, LocalLeaders local, int entriesInFlight,
                     Executor replies) {
        this.group = group;
        this.transport = transport;
        this.local = local;
        this.replies = replies;
        this.writer = new ShardClient(group, 512, RatisSettings.MAX_ENTRY_PAYLOAD_BYTES, entriesInFlight, replies,
                transport, local);
    }

    @Override
    public CompletableFuture<PartitionOutcome> submit(PartitionId partition, PartitionCommand command) {
        return writer.submit(partition, command);
    }

    @Override
    public CompletableFuture<byte[]> read(byte[] query) {
        return send(query, reader());
    }

    /** An attempt lasts at most 2 s, a probe 4 s in all. */
    @Override
    public CompletableFuture<byte[]> probe(byte[] query) {
        return send(query, prober());
    }

    private CompletableFuture<byte[]> send(byte[] query, RaftClient client) {
        if (client == null) {
            return CompletableFuture.failedFuture(new IllegalStateException("shard channel closed"));
        }
        Message read = Message.valueOf(ByteString.copyFrom(query));
        // unordered: reads need no sequence, and the ordered path bounds outstanding requests with a blocking semaphore
        return LocalLeaders.send(local, group.getGroupId(), read, true,
                () -> client.async().sendReadOnlyUnordered(read), replies).thenApplyAsync(reply -> {
                    if (!reply.isSuccess()) {
                        throw new IllegalStateException("shard read failed: " + reply.getException());
                    }
                    return reply.getMessage().getContent().toByteArray();
                }, replies);
    }

    /** The long reads' client (made at the first read), or null once closed. */
    private synchronized RaftClient reader() {
        if (reader == null && !closed) {
            reader = transport.client(group, AWAIT_MILLIS + 5_000)
                    .setRetryPolicy(RatisSettings.retryWithin(AWAIT_MILLIS + RatisSettings.DEFAULT_RETRY_WINDOW_MS))
                    .build();
        }
        return closed ? null : reader;
    }

    /** The probes' client (made at the first probe), or null once closed. */
    private synchronized RaftClient prober() {
        if (prober == null && !closed) {
            prober = transport.client(group, 2_000).setRetryPolicy(RatisSettings.retryWithin(4_000)).build();
        }
        return closed ? null : prober;
    }

    @Override
    public boolean ledHere() {
        return local.leads(group.getGroupId());
    }

    @Override
    public long[] stats() {
        return writer.stats();
    }

    @Override
    public synchronized void close() {
        closed = true;
        closeQuietly(writer);
        closeQuietly(reader);
        closeQuietly(prober);
    }

    private static void closeQuietly(AutoCloseable c) {
        if (c != null) {
            try {
                c.close();
            } catch (Exception e) {
                // dropping it anyway
            }
        }
    }
}
