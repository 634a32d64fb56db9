package io.sluice.metadata.image;

import java.util.List;

/**
 * What changed in the catalog after {@code fromIndex}: the records the metadata group applied up to {@code toIndex},
 * in order. A role holding the image at {@code fromIndex} replays them ({@link #applyTo}) instead of fetching the whole
 * image. {@code records} is null when the leader no longer keeps them (too far behind, or it restarted from a
 * snapshot since): then only the whole image will do. {@code lastChange} is the catalog's last change at
 * {@code toIndex} ({@link ClusterImage#lastChange}), so a copy caught up equals the leader's image.
 */
public record MetadataDelta(long fromIndex, long toIndex, List<MetadataRecord> records, String lastChange) {
    public MetadataDelta {
        records = records == null ? null : List.copyOf(records);
    }

    public static MetadataDelta unavailable(long fromIndex, long toIndex) {
        return new MetadataDelta(fromIndex, toIndex, null, null);
    }

    public boolean complete() {
        return records != null;
    }

    /** {@code image} (at {@link #fromIndex}) with the records replayed, at {@link #toIndex}. */
    public ClusterImage applyTo(ClusterImage image) {
        if (!complete() || image.appliedIndex() != fromIndex) {
            throw new IllegalArgumentException("delta " + fromIndex + ".." + toIndex + " does not apply to an image at "
                    + image.appliedIndex() + (complete() ? "" : " (records not kept)"));
        }
        return image.replayAll(records).withAppliedIndex(toIndex).withLastChange(lastChange);
    }

    /** The same delta for a role that holds no secrets: access keys and the receipt secret left out. */
    public MetadataDelta withoutSecrets() {
        if (!complete()) {
            return this;
        }
        return new MetadataDelta(fromIndex, toIndex, records.stream()
                .filter(r -> !(r instanceof MetadataRecord.AccessKeySet || r instanceof MetadataRecord.ReceiptSecretSet))
                .toList(), lastChange);
    }
}
