package io.sluice.partition;

import java.util.List;

/**
 * What a command to a partition came to: the answer, the effects it triggers (dead-letter hand-offs, arrivals), and
 * for a receive the leased messages with their stored copies.
 */
public record PartitionOutcome(PartitionResponse response, List<Effect> effects, List<DeliveredMessage> delivered) {
}
