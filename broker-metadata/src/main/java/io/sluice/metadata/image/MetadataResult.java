package io.sluice.metadata.image;

import io.sluice.catalog.QueueMetadata;

/** The answer to a {@link MetadataCommand}. */
public record MetadataResult(Status status, QueueMetadata queue, String message) {
    /** {@code CONFLICT}: decided on a view of the catalog that another change overtook; nothing changed, retry. */
    public enum Status { OK, ALREADY_EXISTS, NOT_FOUND, DELETED_RECENTLY, INVALID, CONFLICT }

    public static MetadataResult ok(QueueMetadata queue) {
        return new MetadataResult(Status.OK, queue, null);
    }

    public static MetadataResult of(Status status, String message) {
        return new MetadataResult(status, null, message);
    }
}
