package io.sluice.backend.raft;

import io.sluice.backend.shard.ShardQueries;
import io.sluice.common.raft.RaftTransport;
import io.sluice.common.raft.RatisSettings;
import io.sluice.partition.CommandCodec;
import io.sluice.partition.DeliveredMessage;
import io.sluice.partition.OutcomeCodec;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionId;
import io.sluice.partition.PartitionOutcome;
import io.sluice.partition.PartitionResponse;
import io.sluice.partition.StoredMessage;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.exceptions.AlreadyClosedException;
import org.apache.ratis.protocol.exceptions.GroupMismatchException;
import org.apache.ratis.protocol.exceptions.RaftRetryFailureException;
import org.apache.ratis.protocol.exceptions.TimeoutIOException;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;

/**
 * Sends partition commands to one shard, grouping concurrent ones into one Raft entry (group commit). A Raft entry
 * costs the replicas about the same whatever it carries, so batching is the main throughput lever.
 *
 * <p>Adaptive, no timer: at most {@code maxInFlight} entries are outstanding; a command that arrives while they are
 * waits in the queue and leaves with the next entry, together with everything else that queued meanwhile (up to
 * {@code maxBatch} commands and {@code maxEntryBytes} bytes). An idle shard therefore adds no linger to a lone
 * request, and a busy one fills its entries.
 *
 * <p>Outcomes are released when the entry is committed (on disk on a majority) and applied. A failed entry fails
 * every command in it; whether to retry is the caller's decision (a send retried after an unknown outcome may be
 * applied twice: FIFO deduplication makes that harmless there; standard queues are at-least-once).
 *
 * <p>Callers' continuations never run on a Ratis thread: Ratis completes its futures while holding the client's
 * sliding-window lock, so a continuation that writes to another shard from there can deadlock with a thread doing the
 * reverse. Every outcome is completed on the {@code completions} executor instead.
 */
public final class ShardClient implements AutoCloseable {
    private record Pending(PartitionId partition, byte[] encoded, CompletableFuture<PartitionOutcome> done) {
    }

    /** The commands of one entry, and its number among this client's entries. */
    private record Entry(long number, List<Pending> commands) {
    }

    /**
     * This client's entries' writer id (random, never 0): with an entry's number, its id, which the shard applies
     * once however many times its log holds it (EntryIds: Ratis appends some retried calls a second time, and its
     * retry cache does not survive a restart or a snapshot).
     */
    private final long writer = writerId(System.getProperty(ENTRY_IDS_PROPERTY));

    /**
     * A JVM system property: {@code false} makes this process's shard clients write entries without ids (the log
     * format of releases before 2026-12-08, which older replicas can read) for the rolling upgrade from such a
     * release (operations.md, Rolling upgrade). Default true.
     */
    public static final String ENTRY_IDS_PROPERTY = "sluice.shard.entry-ids";

    private final RaftGroup group;
    private final RaftTransport transport;
    private final LocalLeaders local;
    private volatile RaftClient client;
    private final int maxBatch;
    private final int maxEntryBytes;
    private final int maxInFlight;
    private final Executor completions;
    private final ArrayDeque<Pending> queue = new ArrayDeque<>();
    private int inFlight;
    private long entriesSent;
    private long commandsSent;

    public ShardClient(RaftGroup group, int maxBatch, int maxInFlight, Executor completions) {
        this(group, maxBatch, maxInFlight, completions, RaftTransport.PLAINTEXT);
    }

    public ShardClient(RaftGroup group, int maxBatch, int maxInFlight, Executor completions, RaftTransport transport) {
        this(group, maxBatch, RatisSettings.MAX_ENTRY_PAYLOAD_BYTES, maxInFlight, completions, transport);
    }

    /**
     * @param maxEntryBytes the most command bytes one entry carries: a batch closes before it would pass this, so
     *                      no entry reaches Ratis' own limit ({@link RatisSettings#MAX_LOG_ENTRY_BYTES}) and fails
     *                      every command batched in it
     */
    public ShardClient(RaftGroup group, int maxBatch, int maxEntryBytes, int maxInFlight, Executor completions,
                       RaftTransport transport) {
        this(group, maxBatch, maxEntryBytes, maxInFlight, completions, transport, LocalLeaders.NONE);
    }

    /** @param local the shard leaders in this process: an entry for one of them is handed over without an RPC */
    public ShardClient(RaftGroup group, int maxBatch, int maxEntryBytes, int maxInFlight, Executor completions,
                       RaftTransport transport, LocalLeaders local) {
        this.local = local;
        this.maxEntryBytes = maxEntryBytes;
        this.group = group;
        this.transport = transport;
        this.completions = completions;
        this.client = newClient();
        this.maxBatch = maxBatch;
        this.maxInFlight = maxInFlight;
    }

    /**
     * A group's members as comparable values, {@code id=address}: {@code RaftPeer} equality is by id only and
     * {@code RaftGroup.getPeers()} is not a value-equal collection, so a moved replica would go unnoticed.
     */
    public static SortedSet<String> members(Collection<RaftPeer> peers) {
        SortedSet<String> out = new TreeSet<>();
        peers.forEach(p -> out.add(p.getId() + "=" + p.getAddress()));
        return out;
    }

    /** Whether this client already talks to exactly {@code other}'s members. */
    public boolean boundTo(RaftGroup other) {
        return members(group.getPeers()).equals(members(other.getPeers()));
    }

    /** The shard group this client writes to. */
    public RaftGroup group() {
        return group;
    }

    public CompletableFuture<PartitionOutcome> submit(PartitionId partition, PartitionCommand command) {
        CompletableFuture<PartitionOutcome> done = new CompletableFuture<>();
        byte[] encoded = CommandCodec.encodeOne(new CommandCodec.Addressed(partition, command));
        if (encoded.length + CommandCodec.BATCH_HEADER_BYTES > maxEntryBytes) { // Ratis would refuse its entry
            done.completeExceptionally(new IllegalArgumentException("a command of " + encoded.length
                    + " bytes does not fit a shard log entry (" + maxEntryBytes + " bytes)"));
            return done;
        }
        Entry batch;
        synchronized (this) {
            queue.add(new Pending(partition, encoded, done));
            batch = takeBatchIfAllowed();
        }
        if (batch != null) {
            send(batch);
        }
        return done;
    }

    /** Caller holds the lock. */
    private Entry takeBatchIfAllowed() {
        if (queue.isEmpty() || inFlight >= maxInFlight) {
            return null;
        }
        List<Pending> batch = new ArrayList<>(Math.min(queue.size(), maxBatch));
        long bytes = CommandCodec.BATCH_HEADER_BYTES;
        while (!queue.isEmpty() && batch.size() < maxBatch
                && (batch.isEmpty() || bytes + queue.peek().encoded().length <= maxEntryBytes)) {
            Pending next = queue.poll();
            bytes += next.encoded().length;
            batch.add(next);
        }
        inFlight++;
        entriesSent++;
        commandsSent += batch.size();
        return new Entry(entriesSent, batch);
    }

    /** A new writer id, or 0 (entries without ids) when {@code entryIds} is "false". */
    static long writerId(String entryIds) {
        if ("false".equalsIgnoreCase(entryIds)) {
            return 0;
        }
        long id;
        do {
            UUID random = UUID.randomUUID(); // SecureRandom: unique across processes too
            id = random.getMostSignificantBits() ^ random.getLeastSignificantBits();
        } while (id == 0);
        return id;
    }

    private RaftClient newClient() {
        return transport.writerClient(group, RatisSettings.WRITE_ATTEMPT_TIMEOUT_MS)
                .setRetryPolicy(RatisSettings.retryWithin(RatisSettings.DEFAULT_RETRY_WINDOW_MS))
                .build();
    }

    /**
     * Ratis' ordered async client closes itself for good after some failures (a replica that has not joined the
     * group yet, for one, or a request that ran out of retries: its sliding window then refuses every later request);
     * the next entry then goes through a fresh client.
     */
    private void replaceIfClosed(RaftClient used, Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause()) {
            if (t instanceof AlreadyClosedException
                    || t instanceof GroupMismatchException
                    || t instanceof RaftRetryFailureException
                    || t instanceof TimeoutIOException) {
                synchronized (this) {
                    if (client == used) {
                        client = newClient();
                        closeAfterRetryWindow(used);
                    }
                }
                return;
            }
        }
    }

    /**
     * Closes a replaced client (or channel) once what it has in flight has had its retry window. Closed at once, its
     * entries in flight would fail with an unknown outcome although the leader may still commit them: a send its
     * client then retries would be stored twice. Later commands go through the replacement meanwhile.
     */
    static void closeAfterRetryWindow(AutoCloseable replaced) {
        CompletableFuture.delayedExecutor(RatisSettings.DEFAULT_RETRY_WINDOW_MS + 5_000, TimeUnit.MILLISECONDS)
                .execute(() -> {
                    try {
                        replaced.close();
                    } catch (Exception e) {
                        // it is being dropped anyway
                    }
                });
    }

    private void send(Entry next) {
        List<Pending> batch = next.commands();
        RaftClient used = client;
        CompletableFuture<RaftClientReply> reply;
        try {
            byte[] encoded = CommandCodec.join(writer, next.number(),
                    batch.stream().map(Pending::encoded).toList());
            Message entry = Message.valueOf(ByteString.copyFrom(encoded));
            // not led here (or refused before its append): over the network, with the client's retries
            reply = LocalLeaders.send(local, group.getGroupId(), entry, false, () -> used.async().send(entry),
                    completions);
        } catch (RuntimeException e) {
            reply = CompletableFuture.failedFuture(e); // never leak an in-flight slot
        }
        reply.whenCompleteAsync((r, error) -> {
            if (error != null) {
                replaceIfClosed(used, error);
            }
            Entry following;
            try {
                complete(used, batch, r, error);
            } finally { // whatever completing did, the slot is freed
                synchronized (this) {
                    inFlight--;
                    following = takeBatchIfAllowed();
                }
            }
            if (following != null) {
                send(following);
            }
        }, completions);
    }

    private void complete(RaftClient used, List<Pending> batch, RaftClientReply reply, Throwable error) {
        if (error == null && reply != null && !reply.isSuccess()) {
            error = reply.getException();
        }
        if (error != null) {
            Throwable cause = error;
            batch.forEach(p -> p.done().completeExceptionally(cause));
            return;
        }
        List<PartitionOutcome> outcomes = reply.getMessage() instanceof OutcomeReply local
                ? local.outcomesWithBodies() : null; // a leader in this process: no encoding, no decoding
        if (outcomes == null) {
            ByteString content;
            try { // read once: a shard's reply serialises its bodies each time it is asked (its OutcomeReply)
                content = reply.getMessage() == null ? ByteString.EMPTY : reply.getMessage().getContent();
            } catch (RuntimeException e) {
                batch.forEach(p -> p.done().completeExceptionally(e));
                return;
            }
            if (content.isEmpty()) {
                // A replica that skipped the entry on replay (its store had it) answers nothing: outcome unknown.
                IllegalStateException unknown = new IllegalStateException("shard entry committed, outcome unknown");
                batch.forEach(p -> p.done().completeExceptionally(unknown));
                return;
            }
            try {
                outcomes = OutcomeCodec.decode(content.toByteArray());
            } catch (RuntimeException e) {
                batch.forEach(p -> p.done().completeExceptionally(e));
                return;
            }
        }
        for (int i = 0; i < batch.size(); i++) {
            Pending p = batch.get(i);
            PartitionOutcome o = outcomes.get(i);
            if (!OutcomeCodec.hasBodies(o)) { // a reply without them (a backend before they were sent, a closed store)
                withBodies(used, p.partition(), (PartitionResponse.Received) o.response()).whenComplete((full, e) -> {
                    if (e != null) {
                        p.done().completeExceptionally(e);
                    } else {
                        p.done().complete(full);
                    }
                });
            } else {
                p.done().complete(o);
            }
        }
    }

    /**
     * A receive's outcome with the bodies of its leased messages, read from the shard's leader once the receive is
     * committed, for a reply that carried leases only (from a backend that predates bodies in replies, or one whose
     * store closed as it answered). A message gone meanwhile
     * (purged, expired, or not yet applied on a leader elected in between) is left out: its lease ends on its own and
     * it is delivered again.
     */
    private CompletableFuture<PartitionOutcome> withBodies(RaftClient used, PartitionId partition,
                                                                 PartitionResponse.Received received) {
        List<Long> seqs = received.deliveries().stream().map(PartitionResponse.Delivery::seq).toList();
        Message read = Message.valueOf(ByteString.copyFrom(ShardQueries.readMessages(partition, seqs)));
        return LocalLeaders.send(local, group.getGroupId(), read, true, () -> used.async().sendReadOnlyUnordered(read),
                completions).thenApplyAsync(reply -> {
                    if (!reply.isSuccess()) {
                        throw new CompletionException(reply.getException());
                    }
                    List<StoredMessage> messages = OutcomeCodec.decodeMessages(
                            reply.getMessage().getContent().toByteArray());
                    List<PartitionResponse.Delivery> kept = new ArrayList<>();
                    List<DeliveredMessage> delivered = new ArrayList<>();
                    for (int i = 0; i < seqs.size(); i++) {
                        if (messages.get(i) != null) {
                            kept.add(received.deliveries().get(i));
                            delivered.add(new DeliveredMessage(received.deliveries().get(i),
                                    messages.get(i)));
                        }
                    }
                    return new PartitionOutcome(new PartitionResponse.Received(kept), List.of(), delivered);
                }, completions);
    }

    /** Entries sent so far and the commands they carried: their ratio is the batching factor. */
    public synchronized long[] stats() {
        return new long[] {entriesSent, commandsSent};
    }

    @Override
    public void close() throws IOException {
        client.close();
    }
}
