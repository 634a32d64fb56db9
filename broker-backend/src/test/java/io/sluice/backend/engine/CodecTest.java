package io.sluice.backend.engine;

import io.sluice.partition.CommandCodec;
import io.sluice.partition.DeliveredMessage;
import io.sluice.partition.NewMessage;
import io.sluice.partition.OutcomeCodec;
import io.sluice.partition.PartitionCommand;
import io.sluice.partition.PartitionConfig;
import io.sluice.partition.PartitionId;
import io.sluice.partition.PartitionOutcome;
import io.sluice.partition.PartitionResponse;
import io.sluice.partition.PayloadCodec;
import io.sluice.partition.StoredMessage;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.sluice.common.MessageAttributeValue;
import io.sluice.common.ReceiptHandle;
import io.sluice.common.SqsError;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Log-entry and reply codecs: every command and response type survives a round trip; garbage is refused. */
class CodecTest {
    static final PartitionId P = new PartitionId(9, 2);
    static final ReceiptHandle H = new ReceiptHandle(9, 2, 77, 3);

    static List<CommandCodec.Addressed> everyCommand() {
        NewMessage full = new NewMessage("id", "body \u00e9\r\n", Map.of("a", MessageAttributeValue.ofString("String", "v"),
                "b", MessageAttributeValue.ofBinary("Binary.x", new byte[] {0, 1})),
                Map.of("AWSTraceHeader", MessageAttributeValue.ofString("String", "Root=1")), 5, "g", "d", "sender",
                new NewMessage.Provenance(1, 2, 3, "arn:aws:sqs:us-east-1:000000000000:src"));
        List<PartitionCommand> commands = List.of(new PartitionCommand.Configure(PartitionConfig.FIFO_DEFAULTS),
                new PartitionCommand.Send(List.of(full, NewMessage.of("id2", "x"), new NewMessage("id3", "y", null, null,
                        0, null, null, null, new NewMessage.Provenance(4, 5, 6, "arn:src", "7/0/8")))),
                new PartitionCommand.Receive(10, -1, "attempt"), new PartitionCommand.Receive(1, 0, null),
                new PartitionCommand.Delete(List.of(H)),
                new PartitionCommand.ChangeVisibility(List.of(new PartitionCommand.VisibilityChange(H, 30))),
                new PartitionCommand.Purge(), new PartitionCommand.Expire(100),
                new PartitionCommand.AcknowledgeDeadLetters(List.of(1L, 2L)), new PartitionCommand.Retire(true));
        List<CommandCodec.Addressed> out = new ArrayList<>();
        commands.forEach(c -> out.add(new CommandCodec.Addressed(P, c)));
        return out;
    }

    @Test
    void everyCommandTypeRoundTrips() {
        List<CommandCodec.Addressed> batch = everyCommand();
        assertEquals(9, batch.stream().map(a -> a.command().typeId()).distinct().count(), "all nine command types");
        assertEquals(batch, CommandCodec.decode(CommandCodec.encode(batch)));
    }

    /** Version 2 carries the entry's id; version 1 (logged before ids) decodes as an entry without one. */
    @Test
    void anEntryCarriesItsIdAndOneWithoutAnIdStillDecodes() {
        List<CommandCodec.Addressed> batch = everyCommand();
        List<byte[]> pieces = batch.stream().map(CommandCodec::encodeOne).toList();
        CommandCodec.Batch withId = CommandCodec.decodeBatch(CommandCodec.join(-42, 7, pieces));
        assertEquals(new CommandCodec.Batch(-42, 7, batch), withId);
        byte[] v1 = CommandCodec.join(pieces);
        assertEquals(1, v1[0], "no id: the version 1 layout, as logged before ids existed");
        assertEquals(CommandCodec.Batch.anonymous(batch), CommandCodec.decodeBatch(v1));
        assertEquals(CommandCodec.join(pieces).length + CommandCodec.BATCH_HEADER_BYTES - 5,
                CommandCodec.join(1, 1, pieces).length, "the header bound covers the id");
        byte[] noEntry = CommandCodec.join(5, 1, pieces);
        noEntry[16] = 0; // entry number 1 -> 0: an id that no writer makes
        assertThrows(IllegalArgumentException.class, () -> CommandCodec.decodeBatch(noEntry));
    }

    @Test
    void everyResponseTypeRoundTripsAndRepliesCarryNoBodies(@TempDir Path dir) {
        try (EngineFixture q = new EngineFixture(dir, PartitionConfig.STANDARD_DEFAULTS)) {
            q.send(new NewMessage("m1", "hello", Map.of("k", MessageAttributeValue.ofString("String", "v")), Map.of(), -1,
                    null, null, "s", null));
            List<PartitionOutcome> outcomes = List.of(
                    q.apply(new PartitionCommand.Send(List.of(NewMessage.of("m2", "x")))),
                    q.apply(new PartitionCommand.Receive(10, 30, null)),
                    q.apply(new PartitionCommand.Delete(List.of(new ReceiptHandle(1, 0, 1, 1), H))),
                    q.apply(new PartitionCommand.Expire(10)),
                    q.apply(new PartitionCommand.Configure(PartitionConfig.STANDARD_DEFAULTS)),
                    new PartitionOutcome(new PartitionResponse.Rejected(SqsError.OVER_LIMIT.withMessage("full")),
                            List.of(), List.of()));
            List<PartitionOutcome> decoded = OutcomeCodec.decode(OutcomeCodec.encode(outcomes));
            assertEquals(outcomes.size(), decoded.size());
            for (int i = 0; i < outcomes.size(); i++) {
                assertEquals(outcomes.get(i).response(), decoded.get(i).response(), "response " + i);
                assertEquals(List.of(), decoded.get(i).delivered(), "no bodies in a reply " + i);
            }
            List<DeliveredMessage> delivered = outcomes.get(1).delivered();
            assertEquals(2, delivered.size());
            java.util.ArrayList<StoredMessage> read = new java.util.ArrayList<>();
            delivered.forEach(d -> read.add(d.message()));
            read.add(1, null); // one that is gone meanwhile
            assertEquals(read, OutcomeCodec.decodeMessages(OutcomeCodec.encodeMessages(read)));
        }
    }

    /**
     * A shard's reply with its receives' bodies: the bodies come back in lease order, a lease whose message is gone
     * is left out of the outcome, other outcomes are unchanged; a reply without the section is marked incomplete
     * (the client then reads the bodies).
     */
    @Test
    void repliesWithBodiesCarryThemAndLeaveOutWhatIsGone(@TempDir Path dir) {
        try (EngineFixture q = new EngineFixture(dir, PartitionConfig.STANDARD_DEFAULTS)) {
            q.send(NewMessage.of("m1", "one"));
            q.send(NewMessage.of("m2", "two"));
            q.send(NewMessage.of("m3", "three"));
            PartitionOutcome sent = q.apply(new PartitionCommand.Send(List.of(NewMessage.of("m4", "four"))));
            PartitionOutcome received = q.apply(new PartitionCommand.Receive(3, 30, null));
            assertEquals(3, received.delivered().size());
            PartitionOutcome empty = q.apply(new PartitionCommand.Receive(10, 30, null)); // m4 only
            PartitionOutcome gone = new PartitionOutcome(received.response(), List.of(),
                    List.of(received.delivered().get(0), received.delivered().get(2))); // m2 deleted since
            List<PartitionOutcome> decoded = OutcomeCodec.decode(OutcomeCodec.encodeWithBodies(List.of(sent, gone, empty), 3));
            assertEquals(sent.response(), decoded.get(0).response());
            PartitionResponse.Received r = (PartitionResponse.Received) decoded.get(1).response();
            assertEquals(List.of(received.delivered().get(0).delivery(), received.delivered().get(2).delivery()),
                    r.deliveries(), "the gone lease is left out");
            assertEquals(List.of("one", "three"), decoded.get(1).delivered().stream().map(d -> d.message().body()).toList());
            assertEquals(List.of("four"), decoded.get(2).delivered().stream().map(d -> d.message().body()).toList());
            decoded.forEach(o -> assertEquals(true, OutcomeCodec.hasBodies(o)));

            List<PartitionOutcome> leasesOnly = OutcomeCodec.decode(OutcomeCodec.encode(List.of(sent, received)));
            assertEquals(true, OutcomeCodec.hasBodies(leasesOnly.get(0)));
            assertEquals(false, OutcomeCodec.hasBodies(leasesOnly.get(1)), "without the section: read the bodies");
            assertEquals(received.response(), leasesOnly.get(1).response());
        }
    }

    /** The receives past the cut the reader chose (its body budget spent) carry leases only: the client reads them. */
    @Test
    void receivesPastTheCutCarryLeasesOnly(@TempDir Path dir) {
        try (EngineFixture q = new EngineFixture(dir, PartitionConfig.STANDARD_DEFAULTS)) {
            for (int i = 0; i < 6; i++) {
                q.send(NewMessage.of("m" + i, "body " + i));
            }
            PartitionOutcome first = q.apply(new PartitionCommand.Receive(3, 30, null));
            PartitionOutcome second = q.apply(new PartitionCommand.Receive(3, 30, null));
            List<PartitionOutcome> decoded = OutcomeCodec.decode(OutcomeCodec.encodeWithBodies(List.of(first, second), 1));
            assertEquals(true, OutcomeCodec.hasBodies(decoded.get(0)));
            assertEquals(3, decoded.get(0).delivered().size());
            assertEquals(false, OutcomeCodec.hasBodies(decoded.get(1)), "past the cut: leases only");
            assertEquals(second.response(), decoded.get(1).response());
        }
    }

    /** A stored message gained a trailing dead-letter reason: records written before it read back without one. */
    @Test
    void storedMessagesOfEitherFormatRead() {
        StoredMessage copy = new StoredMessage("id", "body", Map.of(), Map.of(), 5, null, null, null, "sender",
                "arn:src", io.sluice.partition.DeadLetterReason.MAX_RECEIVES_EXCEEDED);
        assertEquals(copy, PayloadCodec.decodeMessage(PayloadCodec.encodeMessage(copy)));
        StoredMessage older = new StoredMessage("id", "body", Map.of(), Map.of(), 5, null, null, null, "sender",
                "arn:src");
        byte[] olderBytes = PayloadCodec.encodeMessage(older);
        assertEquals(PayloadCodec.encodeMessage(copy).length - 1, olderBytes.length, "one byte appended, if any");
        assertEquals(older, PayloadCodec.decodeMessage(olderBytes));
    }

    @Test
    void truncatedOrForeignBytesAreRefused() {
        byte[] good = CommandCodec.encode(everyCommand());
        for (int cut : new int[] {0, 1, 5, good.length / 2, good.length - 1}) {
            byte[] truncated = Arrays.copyOf(good, cut);
            assertThrows(RuntimeException.class, () -> CommandCodec.decode(truncated), "cut at " + cut);
        }
        assertThrows(RuntimeException.class, () -> CommandCodec.decode(new byte[] {9, 9, 9}));
    }

    /** A forged count or length is refused before it sizes an allocation (2^31 - 1 would need gigabytes). */
    @Test
    void implausibleCountsAreRefusedBeforeAllocating() {
        byte[] hugeCount = {1, 0x7f, (byte) 0xff, (byte) 0xff, (byte) 0xff, 0, 0};
        assertThrows(IllegalArgumentException.class, () -> OutcomeCodec.decode(hugeCount));
        assertThrows(IllegalArgumentException.class, () -> OutcomeCodec.decodeMessages(hugeCount));
        byte[] hugeBody = {1, 0, 0, 0, 1, 1, 0x7f, (byte) 0xff, (byte) 0xff, (byte) 0xff}; // one message, its length
        assertThrows(IllegalArgumentException.class, () -> OutcomeCodec.decodeMessages(hugeBody));
    }
}
