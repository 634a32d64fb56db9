package io.sluice.catalog;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The catalog of queues. Implemented by broker-metadata's {@code CachedCatalog} over the Raft metadata
 * service behind the same interface. Writes return only once they are durable.
 */
public interface QueueCatalog {

    sealed interface CreateResult {
        QueueMetadata queue();
    }

    record Created(QueueMetadata queue) implements CreateResult {
    }

    /** The queue existed with identical attributes: CreateQueue is idempotent. */
    record AlreadyExists(QueueMetadata queue) implements CreateResult {
    }

    /**
     * Creates a queue unless one with that name exists. The caller compares attributes of an existing queue
     * (the catalog stores and returns them; the rules for "identical" are the frontend's).
     *
     * @throws QueueDeletedRecentlyException when the name was deleted less than 60 s ago
     */
    CreateResult create(String name, boolean fifo, Map<String, String> attributes, Map<String, String> tags,
                        int partitions, long nowMillis);

    Optional<QueueMetadata> get(String name);

    /** Queues whose names start with {@code prefix} (case-sensitive), sorted by name. */
    List<QueueMetadata> list(String prefix);

    /** Deletes a queue; returns the deleted metadata, empty if it did not exist. */
    Optional<QueueMetadata> delete(String name, long nowMillis);

    /** Replaces the attribute map; returns the updated queue, empty if it does not exist. */
    Optional<QueueMetadata> setAttributes(String name, Map<String, String> attributes, long nowMillis);

    /** Replaces the tag map; returns the updated queue, empty if it does not exist. */
    Optional<QueueMetadata> setTags(String name, Map<String, String> tags);

    /**
     * Raises a standard queue's partition count; returns the updated queue, empty if it does not exist or the change
     * is not allowed (lowering it, or a FIFO queue).
     */
    Optional<QueueMetadata> raisePartitions(String name, int partitions);

    final class QueueDeletedRecentlyException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        public QueueDeletedRecentlyException(String name) {
            super(name, null, false, false);
        }
    }
}
