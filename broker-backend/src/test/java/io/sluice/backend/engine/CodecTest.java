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

    @Test
    void truncatedOrForeignBytesAreRefused() {
        byte[] good = CommandCodec.encode(everyCommand());
        for (int cut : new int[] {0, 1, 5, good.length / 2, good.length - 1}) {
            byte[] truncated = Arrays.copyOf(good, cut);
            assertThrows(RuntimeException.class, () -> CommandCodec.decode(truncated), "cut at " + cut);
        }
        assertThrows(RuntimeException.class, () -> CommandCodec.decode(new byte[] {9, 9, 9}));
    }
}
