package io.sluice.backend.shard;

import io.sluice.backend.agent.ShardHousekeeping;
import io.sluice.backend.raft.ShardedPartitionService;
import io.sluice.backend.storage.ShardStore;
import io.sluice.common.Clock;
import io.sluice.metadata.image.ClusterImage;
import io.sluice.partition.MoveTask;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionConfig;
import io.sluice.partition.PartitionId;
import io.sluice.partition.PartitionOutcome;
import io.sluice.partition.PartitionService;
import io.sluice.partition.PeekedMessage;
import io.sluice.partition.QueueCounts;
import io.sluice.partition.StoredMessage;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * A one-replica shard as {@code sluice dev} assembles it, for tests: a {@link ShardCore} on a synced-WAL store under
 * a {@link LocalLog}, reached through a {@link ShardedPartitionService} (every partition on this one shard). Its time
 * is {@code clock}'s, also as the monotonic clock (a manual clock may jump).
 */
public final class OneReplicaShard implements PartitionService, AutoCloseable {
    private final ShardCore core;
    private final LocalLog log;
    private final ShardedPartitionService service;
    private final ShardHousekeeping housekeeping;

    public OneReplicaShard(Path dir, Clock clock) {
        this.core = new ShardCore("test", dir, ShardStore.Durability.SYNC_WAL,
                new LeaderClock(clock, () -> clock.nowMillis() * 1_000_000L, LeaderClock.DEFAULT_MAX_SKEW_MILLIS));
        core.open();
        this.log = new LocalLog(core, Runnable::run);
        this.service = ShardedPartitionService.overLocalLog(log);
        this.housekeeping = new ShardHousekeeping(new ShardHousekeeping.LedShards() {
            @Override
            public List<ShardHousekeeping.Led> led(ClusterImage image) {
                return List.of(new ShardHousekeeping.Led("test", core, log::submit));
            }

            @Override
            public Map<String, List<PartitionId>> assigned(ClusterImage image) {
                return Map.of();
            }
        }, () -> ClusterImage.EMPTY, 1000);
    }

    public ShardCore core() {
        return core;
    }

    public LocalLog log() {
        return log;
    }

    /** The data plane over it, as a frontend uses it (its listeners hear arrivals, as long polls do). */
    public ShardedPartitionService service() {
        return service;
    }

    /**
     * One round of the leader's housekeeping, as {@code sluice dev} and a cluster's shard leaders run it
     * ({@link ShardHousekeeping#tick}, with an empty catalog: it sweeps, opens and reconciles nothing else).
     *
     * @return the partitions swept
     */
    public int sweep() {
        return housekeeping.tick();
    }

    /** The effects of every entry applied (what the shard's leader's dead-letter hand-offs hear). */
    @Override
    public void addListener(EffectListener listener) {
        core.addListener(listener);
    }

    @Override
    public CompletableFuture<Void> createPartition(PartitionId id, PartitionConfig config) {
        return service.createPartition(id, config);
    }

    @Override
    public CompletableFuture<PartitionOutcome> submit(PartitionId id, PartitionCommand command) {
        return service.submit(id, command);
    }

    @Override
    public CompletableFuture<QueueCounts> counts(PartitionId id) {
        return service.counts(id);
    }

    @Override
    public CompletableFuture<Integer> visibleNow(PartitionId id) {
        return service.visibleNow(id);
    }

    @Override
    public CompletableFuture<Long> nextDeadlineMillis(PartitionId id) {
        return service.nextDeadlineMillis(id);
    }

    @Override
    public CompletableFuture<Boolean> awaitConfigured(PartitionId id, long configVersion) {
        return service.awaitConfigured(id, configVersion);
    }

    @Override
    public CompletableFuture<List<MoveTask>> moveTasks(PartitionId id) {
        return service.moveTasks(id);
    }

    @Override
    public CompletableFuture<List<PeekedMessage>> peek(PartitionId id, int max) {
        return service.peek(id, max);
    }

    @Override
    public CompletableFuture<StoredMessage> readMessage(PartitionId id, long seq) {
        return service.readMessage(id, seq);
    }

    @Override
    public void close() {
        service.close();
        log.close();
        core.close();
    }
}
