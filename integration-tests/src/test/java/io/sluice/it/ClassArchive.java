package io.sluice.it;

import io.sluice.testing.Ports;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.services.sqs.SqsClient;

/**
 * A class-data-sharing archive of the launcher jar's classes (JDK 17 AppCDS, dynamic archive), which every process the
 * integration tests launch maps instead of loading and verifying Netty's, Ratis', gRPC's and Sluice's classes again:
 * a {@code sluice dev} is ready about 0.7 s sooner (3.5 s to 2.8 s measured on 2026-12-07) and spends that much less
 * CPU, on a suite that starts a few hundred JVMs on 2 cores. Only the test JVMs use it; the product is not changed.
 *
 * <p>The archive is made once per jar (named by its size and modification time) by a training run: a {@code sluice dev}
 * started with {@code -XX:ArchiveClassesAtExit}, sent a few requests through the SDK, and stopped. A JVM given an
 * archive that does not match its jar ignores it and loads classes as usual, so a stale or missing archive costs
 * speed, never a result. {@code -Dsluice.it.class-archive=false} turns it off.
 */
final class ClassArchive {
    /** JDK unified-logging options that keep CDS's own warnings (e.g. an archive refused) out of the servers' logs. */
    private static final List<String> QUIET = List.of("-Xlog:cds=off", "-Xlog:cds+dynamic=off");
    private static boolean attempted;
    private static Path archive;

    private ClassArchive() {
    }

    /** The JVM options that map the archive, made first if need be; none when it is off or could not be made. */
    static synchronized List<String> jvmOptions() {
        if (!Boolean.parseBoolean(System.getProperty("sluice.it.class-archive", "true"))) {
            return List.of();
        }
        if (!attempted) {
            attempted = true; // once per test JVM, even if the training run fails (and before it launches a process)
            archive = trained();
        }
        if (archive == null) {
            return List.of();
        }
        return List.of("-XX:SharedArchiveFile=" + archive, QUIET.get(0), QUIET.get(1));
    }

    private static Path trained() {
        try {
            Path jar = Path.of(SluiceProcess.jar());
            Path target = SluiceProcess.itDir().resolve("sluice-" + Files.size(jar) + "-"
                    + Files.getLastModifiedTime(jar).toMillis() + ".jsa").toAbsolutePath();
            if (Files.exists(target)) {
                return target;
            }
            Path partial = target.resolveSibling(target.getFileName() + ".part");
            Files.deleteIfExists(partial);
            Path data = Files.createTempDirectory(SluiceProcess.itDir(), "class-archive-");
            Path log = data.resolveSibling(data.getFileName() + ".log");
            int port = Ports.free();
            int admin = Ports.free();
            Process dev = ProcessFixtures.launch(List.of("-XX:ArchiveClassesAtExit=" + partial, QUIET.get(0),
                            QUIET.get(1), "-Xmx512m", "-XX:+UseSerialGC"),
                    List.of("dev", "--port", Integer.toString(port), "--admin-port", Integer.toString(admin),
                            "--data-dir", data.toString(), "--access-key", SluiceProcess.ACCESS_KEY,
                            "--secret-key", SluiceProcess.SECRET_KEY),
                    log, Map.of("SLUICE_METADATA_PORT", Integer.toString(Ports.free())));
            try {
                ProcessFixtures.awaitHealthy(dev, admin, log, "the class archive's training run");
                try (SqsClient sqs = SqsClients.client(URI.create("http://127.0.0.1:" + port))) {
                    String url = sqs.createQueue(b -> b.queueName("training")).queueUrl();
                    sqs.sendMessage(b -> b.queueUrl(url).messageBody("a"));
                    sqs.receiveMessage(b -> b.queueUrl(url).waitTimeSeconds(1)).messages().forEach(m ->
                            sqs.deleteMessage(d -> d.queueUrl(url).receiptHandle(m.receiptHandle())));
                    sqs.getQueueAttributes(b -> b.queueUrl(url));
                }
            } finally {
                ProcessFixtures.stop(dev); // the archive is written as the JVM exits
            }
            if (!Files.exists(partial) || Files.size(partial) == 0) {
                System.err.println("no class archive made (see " + log + "): processes load their classes as usual");
                return null;
            }
            Files.move(partial, target, StandardCopyOption.ATOMIC_MOVE);
            return target;
        } catch (IOException | RuntimeException e) {
            System.err.println("no class archive made (" + e + "): processes load their classes as usual");
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }
}
