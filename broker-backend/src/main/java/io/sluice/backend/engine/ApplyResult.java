package io.sluice.backend.engine;

import io.sluice.partition.Effect;
import io.sluice.partition.PartitionResponse;
import java.util.List;

/** The outcome of applying one command: what to answer, what to store (atomically), what to do. */
public record ApplyResult(PartitionResponse response, List<Mutation> mutations, List<Effect> effects) {
    public ApplyResult {
        mutations = List.copyOf(mutations);
        effects = List.copyOf(effects);
    }
}
