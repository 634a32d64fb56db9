package io.sluice.backend.storage;

/** RocksDB failed. Fatal for the replica that sees it: its state may no longer match its log. */
public final class StorageException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public StorageException(String message, Throwable cause) {
        super(message, cause);
    }
}
