package io.sluice.backend.engine;

/** A storage change produced by a command. All mutations of one command are written in one atomic batch. */
public sealed interface Mutation {
    record Put(byte[] key, byte[] value) implements Mutation {
    }

    record Delete(byte[] key) implements Mutation {
    }

    /** Deletes keys in {@code [fromInclusive, toExclusive)}: one range tombstone instead of one per key. */
    record DeleteRange(byte[] fromInclusive, byte[] toExclusive) implements Mutation {
    }
}
