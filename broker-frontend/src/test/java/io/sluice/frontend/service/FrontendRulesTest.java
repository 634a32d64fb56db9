package io.sluice.frontend.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * One retry policy for every action that reaches a partition: commands go through
 * {@link SqsServices#submitToQueue}, which waits for a partition its shard has not configured yet and answers a
 * retryable error if it stays missing (a direct submit answered such a partition "no such queue", which clients do not
 * retry). Checked over the frontend's sources.
 */
class FrontendRulesTest {
    private static final Pattern DIRECT_SUBMIT = Pattern.compile("partitions(\\(\\))?\\s*\\.\\s*submit\\(");

    @Test
    void commandsReachPartitionsOnlyThroughSubmitToQueue() throws IOException {
        Path sources = Path.of("src/main/java");
        assertTrue(Files.isDirectory(sources), "run from the module: " + Path.of("").toAbsolutePath());
        List<String> direct;
        try (Stream<Path> files = Files.walk(sources)) {
            direct = files.filter(p -> p.toString().endsWith(".java"))
                    .filter(p -> !p.getFileName().toString().equals("SqsServices.java"))
                    .filter(p -> {
                        try {
                            return DIRECT_SUBMIT.matcher(Files.readString(p)).find();
                        } catch (IOException e) {
                            throw new IllegalStateException(e);
                        }
                    }).map(Path::toString).toList();
        }
        assertEquals(List.of(), direct, "submit through SqsServices.submitToQueue");
    }
}
