package io.sluice.metadata.raft;

/** The metadata group could not answer (no leader, or unreachable): retry later; nothing was lost. */
public final class MetadataUnavailableException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public MetadataUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
