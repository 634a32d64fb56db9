package io.sluice.backend.raft;

import io.sluice.partition.CommandCodec;
import io.sluice.partition.DeliveredMessage;
import io.sluice.partition.OutcomeCodec;
import io.sluice.partition.PartitionId;
import io.sluice.partition.PartitionOutcome;
import io.sluice.partition.PartitionResponse;
import java.util.ArrayList;
import java.util.List;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A shard entry's reply: the outcomes of its commands, in order. Its receives carry their messages' bodies, read from
 * the replica's store each time the reply is serialised (sent to the client by the leader, or by a new leader from
 * its retry cache after a fail-over) and never kept: Ratis keeps every reply of every replica in its retry cache for a
 * minute, and followers never send theirs unless asked again. So a consumer's receive needs no second round trip for
 * the bodies, and followers do no work for replies they do not send.
 *
 * <p>A client in the same process (a frontend reaching a local leader through {@link LocalLeaders}) takes the
 * outcomes as objects ({@link #outcomesWithBodies}): nothing is encoded only to be decoded again.
 */
final class OutcomeReply implements Message {
    private static final Logger LOG = LoggerFactory.getLogger(OutcomeReply.class);

    /** Reads a receive's bodies from the replica's store: the outcome with them, or null once the store is closed. */
    interface BodyReader {
        PartitionOutcome withBodies(PartitionId partition, PartitionOutcome outcome);
    }

    private final String shard;
    private final BodyReader store;
    /** The partition of each outcome. */
    private final List<PartitionId> ids;
    private final List<PartitionOutcome> outcomes;

    /** @param applied the outcomes of {@code batch}'s commands (their effects are not kept) */
    OutcomeReply(String shard, BodyReader store, List<CommandCodec.Addressed> batch, List<PartitionOutcome> applied) {
        this.shard = shard;
        this.store = store;
        this.ids = new ArrayList<>(batch.size());
        this.outcomes = new ArrayList<>(applied.size());
        for (int i = 0; i < applied.size(); i++) {
            ids.add(batch.get(i).partition());
            outcomes.add(new PartitionOutcome(applied.get(i).response(), List.of(), List.of()));
        }
    }

    @Override
    public ByteString getContent() {
        try {
            Bodies read = withBodies(OutcomeCodec.REPLY_BODY_BUDGET);
            if (read != null) {
                return ByteString.copyFrom(OutcomeCodec.encodeWithBodies(read.outcomes(), read.upTo()));
            }
        } catch (RuntimeException e) { // the client reads the bodies itself: a reply never fails for them
            LOG.warn("shard {}: message bodies for a reply could not be read; answering leases only", shard, e);
        }
        return ByteString.copyFrom(OutcomeCodec.encode(outcomes));
    }

    /** The outcomes with every receive's bodies read from the store, or null (store closed, read failed). */
    List<PartitionOutcome> outcomesWithBodies() {
        try {
            Bodies read = withBodies(Long.MAX_VALUE); // nothing to frame: no budget
            return read == null ? null : read.outcomes();
        } catch (RuntimeException e) { // as getContent(): the client reads the bodies itself
            LOG.warn("shard {}: message bodies for a reply could not be read; answering leases only", shard, e);
            return null;
        }
    }

    /** Outcomes whose receives before {@code upTo} (an outcome index) carry their bodies. */
    private record Bodies(List<PartitionOutcome> outcomes, int upTo) {
    }

    /**
     * The outcomes with their receives' bodies read from the store, in order, until {@code budget} bytes are spent
     * (the first receive always; the rest carry leases only and the client reads those bodies itself); null if the
     * store is closed.
     */
    private Bodies withBodies(long budget) {
        List<PartitionOutcome> full = new ArrayList<>(outcomes);
        for (int i = 0; i < outcomes.size(); i++) {
            if (!(outcomes.get(i).response() instanceof PartitionResponse.Received r) || r.deliveries().isEmpty()) {
                continue;
            }
            if (budget <= 0) {
                return new Bodies(full, i);
            }
            PartitionOutcome read = store.withBodies(ids.get(i), outcomes.get(i));
            if (read == null) {
                return null;
            }
            for (DeliveredMessage d : read.delivered()) {
                budget -= OutcomeCodec.sizeOf(d.message());
            }
            full.set(i, read);
        }
        return new Bodies(full, outcomes.size());
    }

    @Override
    public String toString() {
        return "outcomes of " + outcomes.size() + " commands";
    }
}
