package io.sluice.metadata.image;

import java.util.List;

/**
 * One metadata log entry as the leader writes it: what it decided for one command. Every replica applies the records
 * as they are, never deciding again, so a release that changes a decision (placement, ids, splits) replays an old log
 * exactly as it was first applied.
 *
 * <p>The leader decides on its image plus the records of entries it has appended but not yet applied. If the log
 * holds another catalog change between that view and this entry (two commands decided concurrently and appended in
 * the other order, or an entry of an earlier leader still unapplied when this one decided), the decision is stale:
 * every replica then applies nothing and answers {@link MetadataResult.Status#CONFLICT}, which the client retries.
 *
 * @param records what the command changes, in order (empty: it changes nothing)
 * @param result  the answer, computed by the leader with the records
 * @param after   the catalog change ({@link ClusterImage#lastChange}) the decision was made after; null: none yet
 * @param id      this change's id, unique in the cluster's life (unused when there are no records)
 */
public record MetadataBatch(List<MetadataRecord> records, MetadataResult result, String after, String id) {
    public MetadataBatch {
        records = List.copyOf(records);
    }
}
