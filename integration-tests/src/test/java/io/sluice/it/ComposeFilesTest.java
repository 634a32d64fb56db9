package io.sluice.it;

import static io.sluice.it.DeployFiles.asMap;
import static io.sluice.it.DeployFiles.flag;
import static io.sluice.it.DeployFiles.map;
import static io.sluice.it.DeployFiles.strings;
import static io.sluice.it.LauncherChecks.DATA_MOUNT;
import static io.sluice.it.LauncherChecks.DEFAULT_ADMIN_PORT;
import static io.sluice.it.LauncherChecks.assertConfiguration;
import static io.sluice.it.LauncherChecks.parseWithLauncher;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * docker-compose.yml (and the combined form where it says so), with the HAProxy and Prometheus configurations it
 * mounts: every role runs with flags and configuration Sluice accepts, peers match the metadata services, certificates
 * come from the certs job, services start in order, the load balancer checks readiness, Prometheus scrapes every node
 * with the read token.
 */
class ComposeFilesTest {
    // ------------------------------------------------------------------------------------------------ compose

    @Test
    void composeRunsTheWholeCluster() throws IOException {
        Map<String, Object> compose = compose();
        Map<String, List<String>> roles = composeRoles(compose);
        assertEquals(3, roles.getOrDefault("metadata", List.of()).size(), "3 metadata members: " + roles);
        assertEquals(3, roles.getOrDefault("backend", List.of()).size(), "3 backends: " + roles);
        assertEquals(2, roles.getOrDefault("frontend", List.of()).size(), "2 frontends: " + roles);
        Map<String, Object> services = map(compose, "services");
        String lb = serviceWithImage(services, "haproxy");
        assertTrue(strings(map(services, lb), "ports").stream().anyMatch(p -> p.endsWith(":9324:9324")),
                "the load balancer publishes the client endpoint on 9324");
        String prometheus = serviceWithImage(services, "prom/prometheus");
        Set<String> declared = map(compose, "volumes").keySet();
        Set<String> used = new LinkedHashSet<>();
        for (String role : List.of("metadata", "backend")) {
            for (String name : roles.get(role)) {
                Map<String, Object> svc = map(services, name);
                List<String> command = command(svc);
                String volume = strings(svc, "volumes").stream().filter(v -> v.endsWith(":" + DATA_MOUNT))
                        .map(v -> v.substring(0, v.indexOf(':'))).findFirst().orElse(null);
                assertNotNull(volume, name + " keeps its data on a volume at " + DATA_MOUNT);
                assertTrue(declared.contains(volume), name + ": volume " + volume + " is a named volume");
                assertTrue(used.add(volume), name + ": volume " + volume + " is its own");
                String dataDir = flag(command, "--data-dir");
                assertNotNull(dataDir, name + ": --data-dir");
                assertTrue(dataDir.startsWith(DATA_MOUNT + "/"), name + ": --data-dir " + dataDir + " on the volume");
            }
        }
        assertTrue(strings(map(services, prometheus), "volumes").stream()
                .anyMatch(v -> declared.contains(v.substring(0, v.indexOf(':')))), "Prometheus keeps its data");
    }

    @Test
    void composePeersMatchTheMetadataServices() throws IOException {
        Map<String, Object> compose = compose();
        Map<String, Object> services = map(compose, "services");
        Map<String, List<String>> roles = composeRoles(compose);
        Map<String, String> idToService = new LinkedHashMap<>();
        for (String name : roles.get("metadata")) {
            String id = flag(command(map(services, name)), "--node-id");
            assertNotNull(id, name + ": --node-id");
            assertTrue(idToService.put(id, name) == null, "metadata id " + id + " used twice");
        }
        Set<String> specs = new LinkedHashSet<>();
        for (String role : List.of("metadata", "backend", "frontend")) {
            for (String name : roles.get(role)) {
                String spec = flag(command(map(services, name)), role.equals("metadata") ? "--peers"
                        : "--metadata-peers");
                assertNotNull(spec, name + ": metadata peers");
                specs.add(spec);
            }
        }
        assertEquals(1, specs.size(), "every service names the same metadata group: " + specs);
        Map<String, String> peers = DeployFiles.peers(specs.iterator().next());
        assertEquals(idToService.keySet(), peers.keySet(), "--peers ids are the metadata members' --node-id");
        for (Map.Entry<String, String> p : peers.entrySet()) {
            String host = p.getValue().substring(0, p.getValue().lastIndexOf(':'));
            assertEquals(idToService.get(p.getKey()), host, "peer " + p.getKey() + " is at its service's name");
            assertEquals("9426", p.getValue().substring(p.getValue().lastIndexOf(':') + 1), "metadata Raft port");
        }
        Set<String> backendIds = new LinkedHashSet<>();
        for (String name : roles.get("backend")) {
            List<String> command = command(map(services, name));
            assertEquals(name, flag(command, "--advertise-host"), name + ": --advertise-host is its service name");
            assertTrue(backendIds.add(flag(command, "--node-id")), name + ": a node id of its own");
            assertFalse(idToService.containsKey(flag(command, "--node-id")), name + ": not a metadata id");
        }
    }

    @Test
    void composeCommandsAndEnvironmentAreAcceptedBySluice() throws IOException {
        Map<String, Object> compose = compose();
        Map<String, Object> services = map(compose, "services");
        composeRoles(compose).values().stream().flatMap(List::stream).forEach(name -> {
            Map<String, Object> svc = map(services, name);
            parseWithLauncher(name, command(svc));
            Map<String, String> env = new LinkedHashMap<>();
            map(svc, "environment").forEach((k, v) -> env.put(k, DeployFiles.composeDefaults(String.valueOf(v))));
            assertConfiguration(name, env);
            assertTrue(env.containsKey("JAVA_OPTS"), name + ": JAVA_OPTS sizes the heap");
            String grace = String.valueOf(svc.get("stop_grace_period"));
            Matcher m = Pattern.compile("(\\d+)s").matcher(grace);
            assertTrue(m.matches() && Integer.parseInt(m.group(1)) >= 30, name + ": stop_grace_period >= 30s: "
                    + grace);
        });
    }

    /**
     * Raft mutual TLS in compose: the certs job makes, in the cluster-tls volume, a certificate for every name the
     * Sluice services use (with their hostname as DNS name for those that are dialled); each service mounts the volume
     * where its configuration points and starts after the job.
     */
    @Test
    void composeServicesUseCertificatesTheCertsJobMakes() throws IOException {
        Map<String, Object> compose = compose();
        Map<String, Object> services = map(compose, "services");
        Map<String, Object> certs = map(services, "certs");
        assertTrue(strings(certs, "entrypoint").get(0).endsWith("make-certs.sh"), "the certs job runs make-certs.sh");
        List<String> command = strings(certs, "command");
        String dir = command.get(0);
        Map<String, String> made = new HashMap<>();
        command.subList(1, command.size()).forEach(spec -> made.put(spec.substring(0, spec.indexOf('=')),
                spec.substring(spec.indexOf('=') + 1)));
        String volume = strings(certs, "volumes").stream().filter(v -> v.endsWith(":" + dir)).map(v -> v.substring(0,
                v.indexOf(':'))).findFirst().orElseThrow(() -> new AssertionError("the certs job writes a volume"));
        for (Map.Entry<String, List<String>> role : composeRoles(compose).entrySet()) {
            for (String name : role.getValue()) {
                Map<String, Object> svc = map(services, name);
                Map<String, Object> env = map(svc, "environment");
                String cert = String.valueOf(env.get("SLUICE_CLUSTER_TLS_CERT_FILE"));
                String certName = cert.substring(cert.lastIndexOf('/') + 1, cert.length() - ".pem".length());
                assertEquals(dir + "/" + certName + ".pem", cert, name);
                assertEquals(dir + "/" + certName + "-key.pem", env.get("SLUICE_CLUSTER_TLS_KEY_FILE"), name);
                assertEquals(dir + "/ca.pem", env.get("SLUICE_CLUSTER_TLS_CA_FILE"), name);
                assertTrue(made.containsKey(certName), name + ": the certs job makes " + certName);
                if (!role.getKey().equals("frontend")) {
                    assertTrue(List.of(made.get(certName).split(",")).contains("DNS:" + name),
                            name + ": its certificate names " + name + ", the address its peers dial");
                }
                assertTrue(strings(svc, "volumes").contains(volume + ":" + dir + ":ro"), name + " mounts " + volume);
                assertEquals("service_completed_successfully", map(map(svc, "depends_on"), "certs").get("condition"),
                        name + " starts after the certs job");
            }
        }
    }

    @Test
    void composeStartsInOrderWithHealthChecks() throws IOException {
        Map<String, Object> compose = compose();
        Map<String, Object> services = map(compose, "services");
        Map<String, List<String>> roles = composeRoles(compose);
        Map<String, String> after = Map.of("backend", "metadata", "frontend", "backend");
        for (Map.Entry<String, List<String>> role : roles.entrySet()) {
            for (String name : role.getValue()) {
                Map<String, Object> svc = map(services, name);
                List<String> command = command(svc);
                String adminPort = Objects.requireNonNullElse(flag(command, "--admin-port"),
                        String.valueOf(DEFAULT_ADMIN_PORT.get(role.getKey())));
                String host = "127.0.0.1";
                String test = String.join(" ", strings(map(svc, "healthcheck"), "test"));
                assertTrue(test.contains("http://" + host + ":" + adminPort + "/ready")
                                || test.contains("http://" + host + ":" + adminPort + "/health"),
                        name + ": health check on its admin endpoint http://" + host + ":" + adminPort + ": " + test);
                String before = after.get(role.getKey());
                if (before != null) {
                    assertDependsOnHealthy(svc, name, roles.get(before));
                }
            }
        }
        assertDependsOnHealthy(map(services, serviceWithImage(services, "haproxy")), "the load balancer",
                roles.get("frontend"));
    }

    private static void assertDependsOnHealthy(Map<String, Object> svc, String name, List<String> dependencies) {
        Map<String, Object> dependsOn = map(svc, "depends_on");
        for (String d : dependencies) {
            assertEquals("service_healthy", map(dependsOn, d).get("condition"),
                    name + " starts after " + d + " is healthy");
        }
    }

    @Test
    void theLoadBalancerSendsToEveryFrontendAndChecksReadiness() throws IOException {
        Map<String, Object> compose = compose();
        Map<String, Object> services = map(compose, "services");
        Map<String, Object> lb = map(services, serviceWithImage(services, "haproxy"));
        String mount = strings(lb, "volumes").stream().filter(v -> v.contains("haproxy.cfg")).findFirst()
                .orElseThrow(() -> new AssertionError("haproxy.cfg is mounted"));
        Path cfg = DeployFiles.deploy(mount.substring(0, mount.indexOf(':')));
        assertTrue(Files.isRegularFile(cfg), cfg + " exists");
        List<String> lines = Files.readAllLines(cfg).stream().map(String::trim)
                .filter(l -> !l.startsWith("#")).toList();
        Map<String, String> servers = new HashMap<>();
        for (String l : lines) {
            String[] words = l.split("\\s+");
            if (words[0].equals("server")) {
                servers.put(words[2].substring(0, words[2].lastIndexOf(':')),
                        words[2].substring(words[2].lastIndexOf(':') + 1));
            }
        }
        Map<String, String> frontends = new HashMap<>();
        for (String name : composeRoles(compose).get("frontend")) {
            frontends.put(name, Objects.requireNonNullElse(flag(command(map(services, name)), "--port"), "9324"));
        }
        assertEquals(frontends, servers, "haproxy servers are the frontends at their SQS ports");
        assertTrue(lines.stream().anyMatch(l -> l.matches("http-check send meth GET uri /ready.*")),
                "haproxy checks /ready");
        assertTrue(lines.stream().anyMatch(l -> l.matches("default-server .*check port 9325.*")),
                "haproxy checks the frontends' admin port");
        assertTrue(lines.stream().anyMatch(l -> l.matches("bind :9324")), "haproxy listens on 9324");
    }

    @Test
    void prometheusScrapesEveryNodeAndLoadsTheRules() throws IOException {
        Map<String, Object> compose = compose();
        Map<String, Object> services = map(compose, "services");
        Map<String, Object> prometheus = map(services, serviceWithImage(services, "prom/prometheus"));
        assertTrue(strings(prometheus, "volumes").contains("./prometheus:/etc/prometheus:ro"),
                "deploy/prometheus is Prometheus's configuration folder");
        assertTrue(strings(prometheus, "command").contains("--config.file=/etc/prometheus/prometheus.yml"));
        Map<String, Object> config = DeployFiles.load(DeployFiles.deploy("prometheus/prometheus.yml"));
        Set<String> targets = new TreeSet<>();
        Map<String, String> jobs = new HashMap<>();
        for (Object job : (List<?>) config.get("scrape_configs")) {
            Map<String, Object> j = asMap(job, "scrape config");
            for (Object sc : (List<?>) j.getOrDefault("static_configs", List.of())) {
                for (String t : strings(asMap(sc, "static config"), "targets")) {
                    targets.add(t);
                    jobs.put(t, String.valueOf(j.get("job_name")));
                }
            }
        }
        Map<String, List<String>> roles = composeRoles(compose);
        Set<String> expected = new TreeSet<>();
        for (Map.Entry<String, List<String>> role : roles.entrySet()) {
            for (String name : role.getValue()) {
                String port = Objects.requireNonNullElse(flag(command(map(services, name)), "--admin-port"),
                        String.valueOf(DEFAULT_ADMIN_PORT.get(role.getKey())));
                expected.add(name + ":" + port);
                assertEquals("sluice-" + role.getKey(), jobs.get(name + ":" + port),
                        name + ": scraped by job sluice-" + role.getKey() + " (the alert rules select on it)");
            }
        }
        targets.removeIf(t -> t.startsWith("localhost:"));
        assertEquals(expected, targets, "Prometheus scrapes /metrics on every node's admin port");
        assertEquals(List.of("alerts.yml"), strings(config, "rule_files"));
    }

    /**
     * Outside sluice dev, /metrics and /admin/status need a token (issue 42 item 10): every Sluice service of both
     * compose files reads the read token from the compose secret, Prometheus holds that secret (and no Sluice key or
     * certificate) and scrapes every Sluice job with it; every Kubernetes pod takes it from its own Secret.
     */
    @Test
    void metricsAndStatusAreReadWithTheReadToken() throws IOException {
        for (String file : List.of("docker-compose.yml", "docker-compose.combined.yml")) {
            Map<String, Object> compose = DeployFiles.load(DeployFiles.deploy(file));
            assertEquals("SLUICE_ADMIN_READ_TOKEN", map(map(compose, "secrets"), "admin-read-token").get("environment"),
                    file + ": the secret comes from the environment, required like SLUICE_SECRET_KEY");
            Map<String, Object> services = map(compose, "services");
            for (String name : composeRoles(compose).values().stream().flatMap(List::stream).toList()) {
                Map<String, Object> svc = map(services, name);
                assertTrue(strings(svc, "secrets").contains("admin-read-token"), file + " " + name + ": the secret");
                assertEquals(AlertRulesTest.READ_TOKEN_FILE, map(svc, "environment").get("SLUICE_ADMIN_READ_TOKEN_FILE"),
                        file + " " + name + ": reads it as sluice.admin.read-token-file");
            }
            Map<String, Object> prometheus = map(services, serviceWithImage(services, "prom/prometheus"));
            assertEquals(List.of("admin-read-token"), strings(prometheus, "secrets"), file + ": Prometheus's secrets");
            assertTrue(strings(prometheus, "volumes").stream().noneMatch(v -> v.startsWith("cluster-tls")),
                    file + ": Prometheus holds no cluster certificate");
            String config = strings(prometheus, "command").stream().filter(c -> c.startsWith("--config.file="))
                    .findFirst().orElseThrow().substring("--config.file=/etc/prometheus/".length());
            int sluiceJobs = 0;
            for (Object job : (List<?>) DeployFiles.load(DeployFiles.deploy("prometheus/" + config)).get("scrape_configs")) {
                Map<String, Object> j = asMap(job, "scrape config");
                if (String.valueOf(j.get("job_name")).startsWith("sluice-")) {
                    sluiceJobs++;
                    assertEquals(AlertRulesTest.READ_TOKEN_FILE, map(j, "authorization").get("credentials_file"),
                            config + " " + j.get("job_name") + ": scraped with the read token");
                }
            }
            assertTrue(sluiceJobs > 0, config + ": Sluice jobs");
        }
    }

    private static Map<String, Object> compose() throws IOException {
        return DeployFiles.load(DeployFiles.deploy("docker-compose.yml"));
    }

    /** Role (first word of the command) -> services running the Sluice image with that role. */
    private static Map<String, List<String>> composeRoles(Map<String, Object> compose) {
        Map<String, List<String>> out = new TreeMap<>();
        map(compose, "services").forEach((name, svc) -> {
            Map<String, Object> s = asMap(svc, name);
            // the image's own entry point runs a role; a service that replaces it (the certs job) runs a script
            if (String.valueOf(s.get("image")).contains("sluice") && !s.containsKey("entrypoint")) {
                List<String> command = command(s);
                assertFalse(command.isEmpty(), name + ": a command (the role and its flags)");
                out.computeIfAbsent(command.get(0), k -> new ArrayList<>()).add(name);
            }
        });
        return out;
    }

    private static List<String> command(Map<String, Object> svc) {
        return strings(svc, "command");
    }

    private static String serviceWithImage(Map<String, Object> services, String image) {
        List<String> found = services.entrySet().stream()
                .filter(e -> String.valueOf(asMap(e.getValue(), e.getKey()).get("image")).startsWith(image + ":"))
                .map(Map.Entry::getKey).toList();
        assertEquals(1, found.size(), "one service runs " + image + ": " + found);
        return found.get(0);
    }
}
