package io.sluice.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The Query/XML protocol through real clients: Debian's python3-boto3 (botocore 1.29, Query protocol) and the
 * Debian AWS CLI 2.9. `.ci/run` installs both; on a developer machine without them these tests are skipped, in CI
 * (CI=true, or SLUICE_REQUIRE_TOOLS=1 as .ci/run sets) their absence is a failure.
 */
class QueryProtocolClientsIT extends SharedServer {
    private static final Path PYTHON = Path.of("/usr/bin/python3");
    private static final Path AWS = Path.of("/usr/bin/aws");

    @Test
    void boto3Scenarios() throws Exception {
        requireTool(PYTHON, List.of(PYTHON.toString(), "-c", "import boto3"));
        assertEquals(0, run(List.of(PYTHON.toString(), script("boto3_scenarios.py"))));
    }

    @Test
    void awsCliSmoke() throws Exception {
        requireTool(AWS, List.of(AWS.toString(), "--version"));
        assertEquals(0, run(List.of("bash", script("aws_cli_smoke.sh"))));
    }

    private static void requireTool(Path tool, List<String> probe) throws Exception {
        boolean present = Files.isExecutable(tool) && new ProcessBuilder(probe).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start().waitFor() == 0;
        if (!present && ("true".equals(System.getenv("CI")) || "1".equals(System.getenv("SLUICE_REQUIRE_TOOLS")))) {
            throw new AssertionError(tool + " is required in CI (.ci/run installs python3-boto3 and awscli)");
        }
        assumeTrue(present, tool + " not installed (apt-get install python3-boto3 awscli)");
    }

    private static String script(String name) {
        return Path.of(System.getProperty("sluice.scripts", "src/test/scripts"), name).toString();
    }

    /** Runs a client script against the shared server; its output goes to the test log. */
    private static int run(List<String> command) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        pb.environment().put("SLUICE_ENDPOINT", server.endpoint().toString());
        pb.environment().put("AWS_ACCESS_KEY_ID", SluiceProcess.ACCESS_KEY);
        pb.environment().put("AWS_SECRET_ACCESS_KEY", SluiceProcess.SECRET_KEY);
        pb.environment().put("AWS_DEFAULT_REGION", "us-east-1");
        Process p = pb.start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("client script timed out:\n" + output);
        }
        System.out.println(output);
        if (p.exitValue() != 0) {
            throw new AssertionError("client script failed:\n" + output);
        }
        return p.exitValue();
    }
}
