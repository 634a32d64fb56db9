package io.sluice.backend.engine;

import io.sluice.partition.Effect;
import io.sluice.partition.NewMessage;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionConfig;
import io.sluice.partition.PartitionId;
import io.sluice.partition.PartitionOutcome;
import io.sluice.partition.PartitionResponse;
import io.sluice.partition.QueueCounts;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import io.sluice.backend.storage.ShardStore;
import io.sluice.common.ManualClock;
import io.sluice.common.ReceiptHandle;
import io.sluice.common.SqsFailure;
import io.sluice.partition.DeliveredMessage;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.TreeMap;
import java.util.UUID;

/** One partition on a real RocksDB store in a temporary folder, driven by a manual clock. */
final class EngineFixture implements AutoCloseable {
    static final PartitionId PARTITION = new PartitionId(7, 0);
    static final long START = 1_700_000_000_000L;

    final Path dir;
    final ManualClock clock = new ManualClock(START);
    ShardStore store;
    PartitionEngine engine;
    long logIndex;
    final List<Effect> effects = new ArrayList<>();

    /** The index's size before sends go to the cold tail: lowered to page often. */
    final int hotLimit;

    EngineFixture(Path dir, PartitionConfig config) {
        this(dir, config, PartitionQueueState.DEFAULT_HOT_LIMIT);
    }

    EngineFixture(Path dir, PartitionConfig config, int hotLimit) {
        this.dir = dir;
        this.hotLimit = hotLimit;
        this.store = ShardStore.open(dir, ShardStore.Durability.SYNC_WAL);
        this.engine = PartitionEngine.create(store, PARTITION, config, clock.nowMillis(), ++logIndex);
        limits();
    }

    PartitionOutcome apply(PartitionCommand command) {
        PartitionOutcome outcome = engine.apply(command, clock.nowMillis(), ++logIndex);
        effects.addAll(outcome.effects());
        return outcome;
    }

    PartitionResponse.SentMessage send(NewMessage message) {
        PartitionResponse.Sent sent = assertInstanceOf(PartitionResponse.Sent.class,
                apply(new PartitionCommand.Send(List.of(message))).response());
        return sent.messages().get(0);
    }

    String send(String body) {
        return send(NewMessage.of(UUID.randomUUID().toString(), body)).messageId();
    }

    String sendFifo(String group, String body) {
        return send(NewMessage.fifo(UUID.randomUUID().toString(), body, group, UUID.randomUUID().toString()))
                .messageId();
    }

    List<DeliveredMessage> receive(int max, int visibilitySeconds) {
        PartitionOutcome outcome = apply(new PartitionCommand.Receive(max, visibilitySeconds, null));
        assertInstanceOf(PartitionResponse.Received.class, outcome.response());
        return outcome.delivered();
    }

    DeliveredMessage receiveOne(int visibilitySeconds) {
        List<DeliveredMessage> got = receive(1, visibilitySeconds);
        assertEquals(1, got.size(), "expected one message");
        return got.get(0);
    }

    List<String> bodies(List<DeliveredMessage> delivered) {
        return delivered.stream().map(d -> d.message().body()).toList();
    }

    SqsFailure delete(ReceiptHandle handle) {
        return entryOutcome(apply(new PartitionCommand.Delete(List.of(handle))));
    }

    SqsFailure changeVisibility(ReceiptHandle handle, int seconds) {
        return entryOutcome(apply(new PartitionCommand.ChangeVisibility(
                List.of(new PartitionCommand.VisibilityChange(handle, seconds)))));
    }

    private static SqsFailure entryOutcome(PartitionOutcome outcome) {
        PartitionResponse.EntryOutcomes outcomes = assertInstanceOf(PartitionResponse.EntryOutcomes.class,
                outcome.response());
        return outcomes.failures().get(0);
    }

    void advanceSeconds(double seconds) {
        clock.advanceMillis(Math.round(seconds * 1000));
    }

    QueueCounts counts() {
        return engine.state().counts();
    }

    List<Effect.DeadLetter> deadLetterEffects() {
        return effects.stream().filter(Effect.DeadLetter.class::isInstance).map(Effect.DeadLetter.class::cast).toList();
    }

    /** Closes and reopens the store, rebuilding the engine from disk. */
    void reopen() {
        store.close();
        store = ShardStore.open(dir, ShardStore.Durability.SYNC_WAL);
        engine = PartitionEngine.open(store, PARTITION).orElseThrow();
        limits();
    }

    private void limits() {
        engine.state().hotLimit = hotLimit;
        engine.state().page = hotLimit < PartitionQueueState.DEFAULT_HOT_LIMIT ? 2 : PartitionQueueState.PAGE;
    }

    /** Every key and value in the store, hex encoded, for byte-for-byte comparison. */
    /**
     * Every stored record but the apply digest, which chains the entries as they were grouped: replicas compared here
     * may group the same commands into entries differently (a shard's replicas never do).
     */
    TreeMap<String, String> dump() {
        TreeMap<String, String> out = new TreeMap<>();
        HexFormat hex = HexFormat.of();
        byte[] digestKey = PartitionKeys.appliedDigestKey();
        store.scan(new byte[0], new byte[] {(byte) 0xFF, (byte) 0xFF}, (k, v) -> {
            if (!java.util.Arrays.equals(k, digestKey)) {
                out.put(hex.formatHex(k), hex.formatHex(v));
            }
        });
        return out;
    }

    @Override
    public void close() {
        store.close();
    }
}
