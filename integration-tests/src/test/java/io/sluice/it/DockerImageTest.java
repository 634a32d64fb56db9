package io.sluice.it;

import static io.sluice.it.DeployFiles.map;
import static io.sluice.it.LauncherChecks.DATA_MOUNT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The Dockerfile: a non-root image with a health check and the contract entry point, built from what it copies. */
class DockerImageTest {
    // ------------------------------------------------------------------------------------------------ image

    @Test
    void theImageRunsAsNonRootWithAHealthCheckAndTheContractEntryPoint() throws IOException {
        List<String> lines = dockerfile();
        List<String> froms = lines.stream().filter(l -> l.startsWith("FROM ")).toList();
        assertEquals(2, froms.size(), "multi-stage: build, runtime");
        assertTrue(froms.get(0).matches("FROM maven:3\\.\\d+.*17.* AS build"), "Maven 3.8+ / JDK 17 build stage");
        assertTrue(froms.get(1).matches("FROM eclipse-temurin:17-jre.*"), "JRE 17 runtime");
        String runtime = String.join("\n", lines.subList(lines.indexOf(froms.get(1)), lines.size()));
        Matcher user = Pattern.compile("(?m)^USER (\\S+)").matcher(runtime);
        assertTrue(user.find(), "a USER in the runtime stage");
        assertFalse(user.group(1).matches("(root|0)(:.*)?"), "not root: " + user.group(1));
        assertTrue(runtime.lines().anyMatch(l -> l.startsWith("HEALTHCHECK ") && l.contains(" CMD ")), "a HEALTHCHECK");
        assertTrue(runtime.contains("apt-get install -y --no-install-recommends curl"),
                "curl, which the health check uses, is installed");
        assertTrue(Files.readString(DeployFiles.deploy("docker/healthcheck.sh")).contains("/health"),
                "the health check asks /health");
        assertTrue(runtime.contains("VOLUME [\"" + DATA_MOUNT + "\"]"), "the data volume");
        Set<String> exposed = new TreeSet<>();
        Matcher expose = Pattern.compile("(?m)^EXPOSE (.*)$").matcher(runtime);
        while (expose.find()) {
            exposed.addAll(List.of(expose.group(1).trim().split("\\s+")));
        }
        assertTrue(exposed.containsAll(List.of("9324", "9325", "9425", "9426", "9500", "9525")), "EXPOSE " + exposed);
        assertTrue(runtime.contains("ENTRYPOINT [\"/opt/sluice/entrypoint.sh\"]"), "the entry point script");
        assertTrue(Files.readString(DeployFiles.deploy("docker/entrypoint.sh"))
                .contains("exec java $JAVA_OPTS -jar /opt/sluice/sluice.jar \"$@\""),
                "the entry point runs java $JAVA_OPTS -jar /opt/sluice/sluice.jar with the role and flags");
    }

    /** Every COPY source exists and is not left out of the build context by .dockerignore. */
    @Test
    void theBuildContextHoldsWhatTheDockerfileCopies() throws IOException {
        Path root = DeployFiles.root();
        List<String> ignored = Files.readAllLines(root.resolve(".dockerignore")).stream().map(String::trim)
                .filter(l -> !l.isEmpty() && !l.startsWith("#")).toList();
        int copies = 0;
        for (String line : dockerfile()) {
            if (!line.startsWith("COPY ") || line.contains("--from=")) {
                continue;
            }
            String[] words = line.split("\\s+");
            for (int i = 1; i < words.length - 1; i++) {
                String source = words[i];
                copies++;
                assertTrue(Files.exists(root.resolve(source)), "COPY source " + source + " exists");
                for (String pattern : ignored) {
                    String p = pattern.replaceAll("/$", "");
                    assertFalse(source.equals(p) || source.startsWith(p + "/") || (p.startsWith("**/")
                                    && (source + "/").contains("/" + p.substring(3) + "/")),
                            "COPY " + source + " is excluded by .dockerignore line " + pattern);
                }
            }
        }
        assertTrue(copies >= 10, "the Dockerfile copies the poms and sources: " + copies);
        List<String> modules = new ArrayList<>();
        Matcher m = Pattern.compile("<module>([^<]+)</module>").matcher(Files.readString(root.resolve("pom.xml")));
        while (m.find()) {
            modules.add(m.group(1));
        }
        String all = String.join("\n", dockerfile());
        for (String module : modules) {
            assertTrue(all.contains("COPY " + module + "/pom.xml"), "the reactor needs every module's pom: " + module);
        }
    }

    private static List<String> dockerfile() throws IOException {
        // join continuation lines
        String text = Files.readString(DeployFiles.deploy("docker/Dockerfile")).replaceAll("\\\\\\n\\s*", " ");
        return text.lines().map(String::trim).filter(l -> !l.isEmpty() && !l.startsWith("#")).toList();
    }
}
