package io.sluice.partition;

/** A leased message: the lease from the engine and the message from storage. */
public record DeliveredMessage(PartitionResponse.Delivery delivery, StoredMessage message) {
}
