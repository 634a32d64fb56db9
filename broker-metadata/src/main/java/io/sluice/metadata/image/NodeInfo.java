package io.sluice.metadata.image;

/** A backend node known to the catalog. Liveness is not here: the metadata leader tracks it in memory. */
public record NodeInfo(String nodeId, String address, long registeredMillis) {
}
