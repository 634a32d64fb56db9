package io.sluice.metadata.image;

import io.sluice.catalog.QueueMetadata;

/** The answer to a {@link MetadataCommand}. */
public record MetadataResult(Status status, QueueMetadata queue, String message) {
    public enum Status { OK, ALREADY_EXISTS, NOT_FOUND, DELETED_RECENTLY, INVALID }

    public static MetadataResult ok(QueueMetadata queue) {
        return new MetadataResult(Status.OK, queue, null);
    }

    public static MetadataResult of(Status status, String message) {
        return new MetadataResult(status, null, message);
    }
}
