package io.sluice.server;

import io.sluice.backend.agent.BackendAgent;
import io.sluice.backend.raft.ShardedPartitionService;
import io.sluice.metadata.image.ClusterImage;
import io.sluice.metadata.image.PartitionAssignment;
import io.sluice.metadata.image.ShardInfo;
import io.sluice.partition.PartitionId;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.function.Supplier;
import org.apache.ratis.protocol.RaftGroup;

/** Routes partitions to shard groups from the (cached) catalog image. */
final class CatalogRouter implements ShardedPartitionService.Router {
    private final Supplier<ClusterImage> catalog;

    CatalogRouter(Supplier<ClusterImage> catalog) {
        this.catalog = catalog;
    }

    @Override
    public RaftGroup groupOf(PartitionId partition) {
        ClusterImage image = catalog.get();
        PartitionAssignment a = image.partitions().get(PartitionAssignment.key(partition.queueId(), partition.index()));
        ShardInfo shard = a == null || a.shardId() == null ? null : image.shards().get(a.shardId());
        return shard == null ? null : BackendAgent.group(image, shard);
    }

    @Override
    public Collection<RaftGroup> allGroups() {
        ClusterImage image = catalog.get();
        List<RaftGroup> groups = new ArrayList<>();
        image.shards().values().forEach(s -> groups.add(BackendAgent.group(image, s)));
        return groups;
    }
}
