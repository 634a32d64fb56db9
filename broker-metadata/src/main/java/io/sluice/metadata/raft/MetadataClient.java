package io.sluice.metadata.raft;

import io.sluice.common.raft.RaftTransport;
import io.sluice.common.raft.RatisSettings;
import io.sluice.metadata.image.ClusterImage;
import io.sluice.metadata.image.MetadataCommand;
import io.sluice.metadata.image.MetadataDelta;
import io.sluice.metadata.image.MetadataJson;
import io.sluice.metadata.image.MetadataResult;
import io.sluice.metadata.image.PartitionLoad;
import io.sluice.metadata.image.ShardReport;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.exceptions.StateMachineException;
import org.apache.ratis.retry.RetryPolicy;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;

/**
 * Talks to the metadata group: linearizable writes (a command is answered once committed on a majority) and reads
 * of the whole image from the leader. Retries are bounded (about 10 s in all): while the group has no leader a
 * write fails with {@link MetadataUnavailableException} rather than hanging.
 */
public final class MetadataClient implements AutoCloseable {
    private final RaftClient client;

    public MetadataClient(MetadataPeers peers) {
        this(peers, RaftTransport.PLAINTEXT);
    }

    /** @param transport how it reaches the members (mutual TLS in a cluster) */
    public MetadataClient(MetadataPeers peers, RaftTransport transport) {
        this(peers, transport, RatisSettings.retryWithin(RatisSettings.DEFAULT_RETRY_WINDOW_MS));
    }

    /** @param retry how often a failed call is retried (the default: 250 ms apart, for at most 10 s in all) */
    public MetadataClient(MetadataPeers peers, RaftTransport transport, RetryPolicy retry) {
        this.client = transport.client(peers.group()).setRetryPolicy(retry).build();
    }

    /** How often a command whose decision another change overtook is decided again before the caller hears of it. */
    static final int OVERTAKEN_RETRIES = 20;

    /**
     * Runs {@code command} on the metadata group. The leader decides it on its latest view; when another command's
     * change overtook that view (decided concurrently and appended first: rare), nothing was changed and it is decided
     * again here, at once.
     */
    public MetadataResult submit(MetadataCommand command) {
        Message message = Message.valueOf(ByteString.copyFrom(MetadataJson.write(command)));
        for (int attempt = 0; ; attempt++) {
            RaftClientReply reply;
            try {
                reply = client.io().send(message);
            } catch (StateMachineException e) { // the blocking API throws a refused append; it does not return it
                if (overtaken(e) && attempt < OVERTAKEN_RETRIES) {
                    continue;
                }
                throw new MetadataUnavailableException("metadata write failed: " + e.getMessage(), e);
            } catch (IOException e) {
                throw new MetadataUnavailableException("metadata write failed: " + e.getMessage(), e);
            }
            if (!reply.isSuccess()) {
                if (overtaken(reply.getException()) && attempt < OVERTAKEN_RETRIES) {
                    continue;
                }
                throw new MetadataUnavailableException("metadata write refused: " + reply.getException(),
                        reply.getException());
            }
            MetadataResult result = MetadataJson.read(reply.getMessage().getContent().toByteArray(), MetadataResult.class);
            if (result.status() == MetadataResult.Status.CONFLICT && attempt < OVERTAKEN_RETRIES) {
                continue;
            }
            if (result.status() == MetadataResult.Status.CONFLICT) { // overtaken every time: busy, retryable
                throw new MetadataUnavailableException("metadata write overtaken " + (attempt + 1) + " times: "
                        + result.message(), null);
            }
            return result;
        }
    }

    /** Whether the leader refused to append a decision because another change overtook the view it was made on. */
    private static boolean overtaken(Throwable refusal) {
        return refusal != null && String.valueOf(refusal.getMessage()).contains(MetadataStateMachine.OVERTAKEN);
    }

    /** The leader's current image. */
    public ClusterImage fetchImage() {
        return MetadataJson.read(query(MetadataStateMachine.QUERY_IMAGE), ClusterImage.class);
    }

    /** The leader's current image without access keys: what a role that verifies no signature reads. */
    public ClusterImage fetchImageWithoutSecrets() {
        return MetadataJson.read(query(MetadataStateMachine.QUERY_IMAGE_WITHOUT_SECRETS), ClusterImage.class);
    }

    /**
     * The catalog records the leader applied after {@code fromIndex} (with access keys and the receipt secret only if
     * {@code withSecrets}); {@link MetadataDelta#complete()} is false when it no longer keeps them all.
     */
    public MetadataDelta fetchDelta(long fromIndex, boolean withSecrets) {
        String q = (withSecrets ? MetadataStateMachine.QUERY_DELTA : MetadataStateMachine.QUERY_DELTA_WITHOUT_SECRETS)
                + fromIndex;
        return MetadataJson.read(query(q), MetadataDelta.class);
    }

    /** The metadata log index the leader's image reflects: a cached copy at this index is current. */
    public long imageIndex() {
        return Long.parseLong(new String(query(MetadataStateMachine.QUERY_INDEX), StandardCharsets.UTF_8));
    }

    /**
     * Records a backend's heartbeat with the metadata leader.
     *
     * @return the leader's clock when it answered (epoch milliseconds)
     */
    public long heartbeat(String nodeId) {
        return heartbeat(nodeId, List.of());
    }

    /**
     * Records a backend's heartbeat and reports the load of partitions it leads (for the leader's auto-split policy).
     *
     * @return the leader's clock when it answered (epoch milliseconds)
     */
    public long heartbeat(String nodeId, List<PartitionLoad> loads) {
        return heartbeat(nodeId, loads, null);
    }

    /**
     * Records a backend's heartbeat with the loads of the partitions it leads and the Raft state of the shards it leads
     * (for the operator's view; a leader of an earlier version ignores the reports).
     *
     * @param shards every shard this backend leads now (empty: none), replacing what it reported before; null when
     *               this heartbeat carries no report
     * @return the leader's clock when it answered (epoch milliseconds)
     */
    public long heartbeat(String nodeId, List<PartitionLoad> loads, List<ShardReport> shards) {
        String q = MetadataStateMachine.QUERY_HEARTBEAT + nodeId;
        if (!loads.isEmpty() || shards != null) {
            q += "\n" + new String(MetadataJson.write(loads), StandardCharsets.UTF_8);
        }
        if (shards != null) {
            q += "\n" + new String(MetadataJson.write(shards), StandardCharsets.UTF_8);
        }
        String answer = new String(query(q), StandardCharsets.UTF_8);
        if (!answer.startsWith("ok ")) {
            throw new MetadataUnavailableException("unexpected heartbeat answer: " + answer, null);
        }
        return Long.parseLong(answer.substring(3));
    }

    /** What only the metadata leader knows: the backends alive and the shard leaders' latest reports. */
    public LeaderHealth health() {
        RaftClientReply reply = read(MetadataStateMachine.QUERY_HEALTH);
        try {
            var tree = MetadataJson.mapper().readTree(reply.getMessage().getContent().toByteArray());
            Set<String> alive = new TreeSet<>();
            tree.path("alive").forEach(n -> alive.add(n.asText()));
            List<ShardReport> shards = List.of(MetadataJson.mapper().treeToValue(tree.path("shards"),
                    ShardReport[].class));
            return new LeaderHealth(reply.getServerId().toString(), alive, shards);
        } catch (IOException e) {
            throw new MetadataUnavailableException("unreadable health answer: " + e.getMessage(), e);
        }
    }

    private byte[] query(String q) {
        return read(q).getMessage().getContent().toByteArray();
    }

    private RaftClientReply read(String q) {
        try {
            RaftClientReply reply = client.io().sendReadOnly(Message.valueOf(q));
            if (!reply.isSuccess()) {
                throw new MetadataUnavailableException("metadata read refused: " + reply.getException(),
                        reply.getException());
            }
            return reply;
        } catch (IOException e) {
            throw new MetadataUnavailableException("metadata read failed: " + e.getMessage(), e);
        }
    }

    @Override
    public void close() {
        try {
            client.close();
        } catch (IOException e) {
            // closing a client loses nothing
        }
    }
}
