package io.sluice.metadata;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sluice.common.SqsLimits;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The catalog of a single process ({@code sluice dev}): a map persisted as one JSON file, rewritten atomically
 * (write a temporary file, fsync it, rename it over the old one, fsync the folder) on every change. Catalog
 * changes are rare, so simplicity wins over write cost. The replicated metadata service replaces it in a cluster.
 */
public final class LocalQueueCatalog implements QueueCatalog {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** The persisted form. */
    record State(long nextQueueId, TreeMap<String, QueueMetadata> queues, Map<String, Long> deletedAtMillis) {
    }

    private final Path file;
    private State state;

    private LocalQueueCatalog(Path file, State state) {
        this.file = file;
        this.state = state;
    }

    public static LocalQueueCatalog open(Path dir) {
        try {
            Files.createDirectories(dir);
            Path file = dir.resolve("catalog.json");
            State state = Files.exists(file)
                    ? JSON.readValue(file.toFile(), new TypeReference<State>() { })
                    : new State(1, new TreeMap<>(), new HashMap<>());
            return new LocalQueueCatalog(file, state);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open catalog in " + dir, e);
        }
    }

    @Override
    public synchronized CreateResult create(String name, boolean fifo, Map<String, String> attributes,
                                            Map<String, String> tags, int partitions, long nowMillis) {
        QueueMetadata existing = state.queues().get(name);
        if (existing != null) {
            return new AlreadyExists(existing);
        }
        Long deletedAt = state.deletedAtMillis().get(name);
        if (deletedAt != null && nowMillis - deletedAt < SqsLimits.RECREATE_AFTER_DELETE_MILLIS) {
            throw new QueueDeletedRecentlyException(name);
        }
        long nowSeconds = nowMillis / 1000;
        QueueMetadata queue = new QueueMetadata(name, state.nextQueueId(), fifo, attributes, tags, nowSeconds,
                nowSeconds, partitions);
        TreeMap<String, QueueMetadata> queues = new TreeMap<>(state.queues());
        queues.put(name, queue);
        Map<String, Long> deleted = new HashMap<>(state.deletedAtMillis());
        deleted.remove(name);
        persist(new State(state.nextQueueId() + 1, queues, deleted));
        return new Created(queue);
    }

    @Override
    public synchronized Optional<QueueMetadata> get(String name) {
        return Optional.ofNullable(state.queues().get(name));
    }

    @Override
    public synchronized List<QueueMetadata> list(String prefix) {
        List<QueueMetadata> out = new ArrayList<>();
        for (QueueMetadata q : state.queues().tailMap(prefix == null ? "" : prefix, true).values()) {
            if (prefix != null && !q.name().startsWith(prefix)) {
                break;
            }
            out.add(q);
        }
        return out;
    }

    @Override
    public synchronized Optional<QueueMetadata> delete(String name, long nowMillis) {
        QueueMetadata existing = state.queues().get(name);
        if (existing == null) {
            return Optional.empty();
        }
        TreeMap<String, QueueMetadata> queues = new TreeMap<>(state.queues());
        queues.remove(name);
        Map<String, Long> deleted = new HashMap<>(state.deletedAtMillis());
        deleted.values().removeIf(t -> nowMillis - t >= SqsLimits.RECREATE_AFTER_DELETE_MILLIS);
        deleted.put(name, nowMillis);
        persist(new State(state.nextQueueId(), queues, deleted));
        return Optional.of(existing);
    }

    @Override
    public synchronized Optional<QueueMetadata> setAttributes(String name, Map<String, String> attributes,
                                                              long nowMillis) {
        return update(name, q -> q.withAttributes(attributes, nowMillis / 1000));
    }

    @Override
    public synchronized Optional<QueueMetadata> setTags(String name, Map<String, String> tags) {
        return update(name, q -> q.withTags(tags));
    }

    private Optional<QueueMetadata> update(String name, java.util.function.UnaryOperator<QueueMetadata> change) {
        QueueMetadata existing = state.queues().get(name);
        if (existing == null) {
            return Optional.empty();
        }
        QueueMetadata next = change.apply(existing);
        TreeMap<String, QueueMetadata> queues = new TreeMap<>(state.queues());
        queues.put(name, next);
        persist(new State(state.nextQueueId(), queues, state.deletedAtMillis()));
        return Optional.of(next);
    }

    private void persist(State next) {
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        try {
            byte[] bytes = JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(next);
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    StandardOpenOption.TRUNCATE_EXISTING)) {
                ch.write(ByteBuffer.wrap(bytes));
                ch.force(true);
            }
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            try (FileChannel dir = FileChannel.open(file.getParent(), StandardOpenOption.READ)) {
                dir.force(true);
            }
            state = next;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write catalog " + file, e);
        }
    }
}
