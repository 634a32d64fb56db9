package io.sluice.backend.shard;

import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionId;
import io.sluice.partition.PartitionOutcome;
import java.util.concurrent.CompletableFuture;

/**
 * How a process reaches one shard's leader, whatever log lies under it: a Raft group ({@code RaftShardChannel}: group
 * commit into Raft entries, read requests to the leader) or a one-replica shard's local log in this process
 * ({@link LocalLog}). Above it, {@code ShardedPartitionService} is the same for both.
 */
public interface ShardChannel extends AutoCloseable {
    /**
     * A command for one of the shard's partitions, grouped with concurrent ones into one entry; completes once the
     * entry is durable (committed, or forced to the local disk) and applied, with the outcome (a receive's with its
     * bodies). A failure leaves the outcome unknown: the command may have been applied.
     */
    CompletableFuture<PartitionOutcome> submit(PartitionId partition, PartitionCommand command);

    /** A read query ({@link ShardQueries}) answered by the shard's leader; an {@code AWAIT} parks there. */
    CompletableFuture<byte[]> read(byte[] query);

    /** As {@link #read}, in a short time or not at all: whether the leader answers now (readiness). */
    CompletableFuture<byte[]> probe(byte[] query);

    /** Whether the shard's leader is in this process now (a command to it crosses no network). */
    default boolean ledHere() {
        return false;
    }

    /** Entries written so far and the commands they carried: their ratio is the batching factor. */
    long[] stats();

    @Override
    void close();
}
