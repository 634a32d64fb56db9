package io.sluice.common.raft;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.RaftConfigKeys;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.client.retry.RequestTypeDependentRetryPolicy;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.proto.RaftProtos.RaftClientRequestProto;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.retry.RetryPolicy;
import org.apache.ratis.rpc.SupportedRpcType;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.util.SizeInBytes;
import org.apache.ratis.util.TimeDuration;

/**
 * The Ratis settings Sluice relies on (metadata group and data shards alike), each with why (measured on these machines, see ratis-notes.md):
 * <ul>
 *   <li>gRPC transport: the stable one under load;</li>
 *   <li>election timeout between {@code electionTimeoutMillis} and twice it, heartbeats every half of it: Ratis'
 *       defaults (150-300 ms) caused spurious elections on a loaded 2-core box; 500-1000 ms (the default) gave none
 *       and ~1.4 s failover; 1000-2000 ms costs ~20 % less idle CPU (heartbeats are most of a Raft group's idle cost)
 *       and ~2 s failover (docs/performance.md);</li>
 *   <li>unsafe flush off (the default): the commit index advances only after fsync on a majority, so an
 *       acknowledged catalog change is on disk on at least two of three members;</li>
 *   <li>automatic snapshots every {@code snapshotEvery} entries: otherwise the log is never purged; the log is
 *       purged up to each snapshot even if a replica is down or behind (it then catches up from the snapshot), so a
 *       dead replica cannot make the log grow without bound;</li>
 *   <li>explicit storage folder, bind address and port: the defaults (/tmp, every interface, ephemeral port) are
 *       never right; a Raft port accepts commands from whoever reaches it, so it binds only the address it is
 *       given;</li>
 *   <li>log segments of 8 MB, at most 2 cached per group (defaults: 32 MB and 6, i.e. up to ~200 MB of heap per
 *       group): a backend hosts tens of groups in a bounded heap; a follower lagging past the cache is served from
 *       the segment files (or a snapshot);</li>
 *   <li>a leader's appends to a follower at least {@link #APPEND_SPACING_MS} apart (10 ms; Ratis' default 1 ms):
 *       entries that come sooner go together in the next append.</li>
 * </ul>
 */
public final class RatisSettings {
    private RatisSettings() {
    }

    /**
     * The election timeout Sluice's Raft groups use unless configured ({@code sluice.raft.election-timeout-ms}): a
     * follower calls an election after hearing nothing from its leader for between this and twice this long, and a
     * leader sends a heartbeat to each follower every half of it.
     */
    public static final int DEFAULT_ELECTION_TIMEOUT_MS = 500;

    /** @param host the address to bind (0.0.0.0 only when asked for: every interface) */
    public static RaftProperties server(Path storage, String host, int port, long snapshotEvery) {
        return server(storage, host, port, snapshotEvery, DEFAULT_ELECTION_TIMEOUT_MS);
    }

    /**
     * @param host                  the address to bind (0.0.0.0 only when asked for: every interface)
     * @param electionTimeoutMillis the shortest election timeout (the longest is twice it); every member of a group
     *                              should use the same
     */
    public static RaftProperties server(Path storage, String host, int port, long snapshotEvery,
                                        int electionTimeoutMillis) {
        RaftProperties p = new RaftProperties();
        RaftConfigKeys.Rpc.setType(p, SupportedRpcType.GRPC);
        GrpcConfigKeys.Server.setHost(p, host); // the admin and client services share this server and its host
        GrpcConfigKeys.Server.setPort(p, port);
        RaftServerConfigKeys.setStorageDir(p, List.of(storage.toFile()));
        RaftServerConfigKeys.Rpc.setTimeoutMin(p, TimeDuration.valueOf(electionTimeoutMillis, TimeUnit.MILLISECONDS));
        RaftServerConfigKeys.Rpc.setTimeoutMax(p,
                TimeDuration.valueOf(2L * electionTimeoutMillis, TimeUnit.MILLISECONDS));
        RaftServerConfigKeys.Log.setUnsafeFlushEnabled(p, false);
        RaftServerConfigKeys.Snapshot.setAutoTriggerEnabled(p, true);
        RaftServerConfigKeys.Snapshot.setAutoTriggerThreshold(p, snapshotEvery);
        RaftServerConfigKeys.Log.setPurgeUptoSnapshotIndex(p, true);
        RaftServerConfigKeys.Log.setSegmentSizeMax(p, SizeInBytes.valueOf("8MB"));
        RaftServerConfigKeys.Log.setSegmentCacheNumMax(p, 2);
        RaftServerConfigKeys.Log.setSegmentCacheSizeMax(p, SizeInBytes.valueOf("32MB"));
        RaftServerConfigKeys.Log.Appender.setBufferByteLimit(p, SizeInBytes.valueOf(MAX_LOG_ENTRY_BYTES));
        RaftServerConfigKeys.Log.setWriteBufferSize(p, SizeInBytes.valueOf(2L * MAX_LOG_ENTRY_BYTES));
        RaftServerConfigKeys.Log.Appender.setWaitTimeMin(p,
                TimeDuration.valueOf(Integer.getInteger(APPEND_SPACING_PROPERTY, APPEND_SPACING_MS),
                        TimeUnit.MILLISECONDS));
        return p;
    }

    /**
     * The shortest time between two appends a leader sends one follower (Ratis' {@code
     * raft.server.log.appender.wait-time.min}; Ratis' default is 1 ms). An entry that finds the last append to a
     * follower sent longer ago than this goes at once; one that comes sooner waits out the rest, and the entries that
     * arrive meanwhile go with it in one append. Each append costs the follower a gRPC message and its executor, a
     * forced log write and a reply whatever it carries, so a longer spacing cuts the replicated path's CPU under load:
     * 10 ms against 1 ms, 3-node combined cluster at 8 producers / 8 consumers, two interleaved series: 1.23x and 1.18x
     * the rate at 0.78x and 0.83x the CPU per message, ~7-8 ms more median latency at light load (docs/performance.md,
     * "Fewer, fuller appends"). The default since the 30-minute nemesis ran clean with it (docs/reliability.md,
     * Figures); {@link #APPEND_SPACING_PROPERTY} sets another.
     */
    public static final int APPEND_SPACING_MS = 10;

    /** A JVM system property that overrides {@link #APPEND_SPACING_MS} (benchmarks compare settings with it). */
    public static final String APPEND_SPACING_PROPERTY = "sluice.raft.append-spacing-ms";

    /**
     * The largest log entry a Ratis server accepts (its appender buffer limit; Ratis' default, set explicitly so the
     * client's cap below follows it). An entry over it is refused whole, with every command batched in it. The log's
     * write buffer must hold an entry plus 8 bytes: it is twice this. gRPC's message limit (64 MB) is far above.
     */
    public static final int MAX_LOG_ENTRY_BYTES = 4 * 1024 * 1024;

    /**
     * The most command bytes a client puts in one entry: the limit less room for what the leader adds (its 8-byte
     * time, the entry's protobuf framing and client ids). A single command always fits: a send carries at most
     * 1 MiB of messages plus their attributes.
     */
    public static final int MAX_ENTRY_PAYLOAD_BYTES = MAX_LOG_ENTRY_BYTES - 256 * 1024;

    /** Request timeout of a client that does not park: writes, admin calls, short reads. */
    public static final long DEFAULT_CLIENT_TIMEOUT_MS = 3_000;

    /**
     * Request timeout of a shard's write client, per attempt. An attempt to a leader that cannot be reached (a
     * partition: no reply, no refused connection) costs this much before the client tries another member, which names
     * the new leader; a killed leader's refused connection costs nothing. 1.5 s was tried (PartitionIT: a partitioned
     * leader's stall 3.2-3.4 s either way, because the election itself takes ~2.7 s and a suspected member is passed
     * over); a shorter attempt only makes more slow attempts on a loaded machine time out and be resent, so the default
     * stays.
     */
    public static final long WRITE_ATTEMPT_TIMEOUT_MS = DEFAULT_CLIENT_TIMEOUT_MS;

    /** How long a client request may be retried in all (across leader changes) unless a caller says otherwise. */
    public static final long DEFAULT_RETRY_WINDOW_MS = 10_000;

    /**
     * A client's retry policy: a failed attempt is tried again 250 ms later (at once when a follower names the new
     * leader), but never after {@code windowMillis} since the request was made. An unreachable leader costs an attempt
     * its whole request timeout, so a count alone (40 attempts: ~130 s at 3 s each) would hold a request, and every
     * request queued behind it in the client's ordered window, for minutes; the window bounds it: ~10 s covers a
     * failover (killed leader ~1.4 s, partitioned one ~4 s) with room to spare. Every request type gets it (a type
     * left out would be retried forever).
     */
    public static RetryPolicy retryWithin(long windowMillis) {
        RetryPolicy each = RetryPolicies.retryUpToMaximumCountWithFixedSleep(40,
                TimeDuration.valueOf(250, TimeUnit.MILLISECONDS));
        RequestTypeDependentRetryPolicy.Builder builder = RequestTypeDependentRetryPolicy.newBuilder();
        for (RaftClientRequestProto.TypeCase type : RaftClientRequestProto.TypeCase.values()) {
            builder.setRetryPolicy(type, each).setTimeout(type, TimeDuration.valueOf(windowMillis,
                    TimeUnit.MILLISECONDS));
        }
        return builder.build();
    }

    public static RaftProperties client() {
        return client(DEFAULT_CLIENT_TIMEOUT_MS);
    }

    /** A client whose requests may take {@code timeoutMillis}: parked reads (long polls) need more than the default. */
    public static RaftProperties client(long timeoutMillis) {
        RaftProperties p = new RaftProperties();
        RaftConfigKeys.Rpc.setType(p, SupportedRpcType.GRPC);
        RaftClientConfigKeys.Rpc.setRequestTimeout(p, TimeDuration.valueOf(timeoutMillis, TimeUnit.MILLISECONDS));
        return p;
    }
}
