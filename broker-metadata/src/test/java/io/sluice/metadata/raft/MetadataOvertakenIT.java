package io.sluice.metadata.raft;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.common.SystemClock;
import io.sluice.common.raft.RaftTransport;
import io.sluice.common.raft.RatisSettings;
import io.sluice.metadata.image.MetadataCommand;
import io.sluice.metadata.image.MetadataJson;
import io.sluice.metadata.image.MetadataResult;
import io.sluice.testing.Ports;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.TransactionContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A command decided after another and appended before it is refused at the append (its view did not happen) and
 * decided again by {@link MetadataClient#submit}: both callers get their answer, the catalog holds both changes. A
 * real one-member Ratis group; the first command is held between its decision and its append (where Ratis leaves a
 * gap any two concurrent writes can fall into) until the second one is in the catalog.
 */
class MetadataOvertakenIT {
    @TempDir
    Path dir;

    /** Holds the decided command {@code first-key} before it goes on to the log, until {@code second-key} is applied. */
    static final class HoldingFirst extends MetadataStateMachine {
        final CountDownLatch firstDecided = new CountDownLatch(1);
        final AtomicInteger decisions = new AtomicInteger();

        HoldingFirst() {
            super(SystemClock.INSTANCE, new LivenessTracker(SystemClock.INSTANCE, 10_000), 1);
        }

        @Override
        public TransactionContext startTransaction(RaftClientRequest request) throws IOException {
            TransactionContext decided = super.startTransaction(request);
            decisions.incrementAndGet();
            String command = request.getMessage().getContent().toStringUtf8();
            if (command.contains("first-key") && firstDecided.getCount() > 0) {
                firstDecided.countDown();
                long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (!image().accessKeys().containsKey("second-key") && System.nanoTime() < until) {
                    try {
                        Thread.sleep(20);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        break;
                    }
                }
            }
            return decided;
        }
    }

    @Test
    void aCommandOvertakenOnItsWayToTheLogIsDecidedAgainAndAnswered() throws Exception {
        MetadataPeers peers = new MetadataPeers(Map.of("m1", "127.0.0.1:" + Ports.free()));
        HoldingFirst stateMachine = new HoldingFirst();
        RaftServer server = RaftTransport.PLAINTEXT.server().setServerId(RaftPeerId.valueOf("m1"))
                .setGroup(peers.group()).setStateMachine(stateMachine)
                .setProperties(RatisSettings.server(dir.resolve("m1"), "127.0.0.1", peers.port("m1"), 10_000))
                .setOption(RaftStorage.StartupOption.FORMAT).build();
        server.start();
        try (MetadataClient one = new MetadataClient(peers); MetadataClient two = new MetadataClient(peers)) {
            await().atMost(Duration.ofSeconds(30)).until(() -> server.getDivision(peers.group().getGroupId())
                    .getInfo().isLeaderReady());
            List<List<String>> everything = List.of(List.of("*", "*"));
            CompletableFuture<MetadataResult> first = CompletableFuture.supplyAsync(
                    () -> one.submit(new MetadataCommand.SetAccessKey("first-key", "s3cret-first", everything)));
            assertTrue(stateMachine.firstDecided.await(30, TimeUnit.SECONDS), "the first command was decided");
            // decided on a view holding first-key's change, which is not in the log: its append is refused
            MetadataResult second = two.submit(new MetadataCommand.SetAccessKey("second-key", "s3cret-second", everything));
            assertEquals(MetadataResult.Status.OK, second.status(), "the second command, decided again: " + second);
            MetadataResult firstResult = first.get(30, TimeUnit.SECONDS);
            assertEquals(MetadataResult.Status.OK, firstResult.status(), "the first command, decided again: " + firstResult);
            assertTrue(stateMachine.decisions.get() >= 4, "both were decided twice: " + stateMachine.decisions.get());
            assertEquals(List.of("first-key", "second-key"), List.copyOf(stateMachine.image().accessKeys().keySet()),
                    MetadataJson.write(stateMachine.image().withoutSecrets()).length + " bytes of image");
        } finally {
            server.close();
        }
    }
}
