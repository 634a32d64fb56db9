package io.sluice.it;

import static io.sluice.it.DeployFiles.asMap;
import static io.sluice.it.DeployFiles.flag;
import static io.sluice.it.DeployFiles.map;
import static io.sluice.it.DeployFiles.strings;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import io.kubernetes.client.custom.IntOrString;
import io.kubernetes.client.custom.Quantity;
import io.kubernetes.client.openapi.JSON;
import io.kubernetes.client.openapi.models.V1ConfigMap;
import io.kubernetes.client.openapi.models.V1Container;
import io.kubernetes.client.openapi.models.V1ContainerPort;
import io.kubernetes.client.openapi.models.V1Deployment;
import io.kubernetes.client.openapi.models.V1EnvFromSource;
import io.kubernetes.client.openapi.models.V1EnvVar;
import io.kubernetes.client.openapi.models.V1HTTPGetAction;
import io.kubernetes.client.openapi.models.V1Namespace;
import io.kubernetes.client.openapi.models.V1PodDisruptionBudget;
import io.kubernetes.client.openapi.models.V1PodSpec;
import io.kubernetes.client.openapi.models.V1PodTemplateSpec;
import io.kubernetes.client.openapi.models.V1Probe;
import io.kubernetes.client.openapi.models.V1Secret;
import io.kubernetes.client.openapi.models.V1Volume;
import io.kubernetes.client.openapi.models.V1Service;
import io.kubernetes.client.openapi.models.V1ServicePort;
import io.kubernetes.client.openapi.models.V1StatefulSet;
import io.kubernetes.client.openapi.models.V1VolumeMount;
import io.kubernetes.client.openapi.models.V1WeightedPodAffinityTerm;
import io.kubernetes.client.openapi.models.V2HorizontalPodAutoscaler;
import io.sluice.server.ConfigKey;
import io.sluice.server.ServerConfig;
import io.sluice.server.ServerConfigKeys;
import io.sluice.server.SluiceMain;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * The deployment artifacts under {@code deploy/}: the Kubernetes manifests against the real Kubernetes API schemas
 * (the official Java client's models, generated from the API server's OpenAPI document, which reject unknown and
 * missing required fields), plus what a schema cannot see: probes on the admin port, selectors that select, a
 * metadata peers list that names the metadata pods, flags the launcher accepts, configuration keys Sluice knows;
 * the same for docker-compose.yml, the HAProxy and Prometheus configurations, the Dockerfile and the Grafana
 * dashboard.
 */
class DeployManifestsTest {
    /** apiVersion/kind -> model of the Kubernetes API that the manifests may use. */
    private static final Map<String, Class<?>> MODELS = Map.of(
            "v1/Namespace", V1Namespace.class,
            "v1/ConfigMap", V1ConfigMap.class,
            "v1/Secret", V1Secret.class,
            "v1/Service", V1Service.class,
            "apps/v1/StatefulSet", V1StatefulSet.class,
            "apps/v1/Deployment", V1Deployment.class,
            "policy/v1/PodDisruptionBudget", V1PodDisruptionBudget.class,
            "autoscaling/v2/HorizontalPodAutoscaler", V2HorizontalPodAutoscaler.class,
            "networking.k8s.io/v1/NetworkPolicy", io.kubernetes.client.openapi.models.V1NetworkPolicy.class);
    private static final String NAMESPACE = "sluice";
    /** Admin port flags and defaults of the roles (SluiceMain). */
    private static final Map<String, Integer> DEFAULT_ADMIN_PORT = Map.of("metadata", 9425, "backend", 9525,
            "frontend", 9325, "dev", 9325);
    /** SLUICE_* variables that are not configuration keys: Logback's levels, the image's entry point. */
    private static final Set<String> OTHER_SLUICE_VARIABLES = Set.of("SLUICE_LOG_LEVEL", "SLUICE_ACCESS_LOG_LEVEL",
            "SLUICE_WAIT_FOR_HOST", "SLUICE_WAIT_FOR_HOST_SECONDS", "SLUICE_HEALTH_URL");
    private static final Pattern VARIABLE_REFERENCE = Pattern.compile("\\$\\(([A-Za-z_][A-Za-z0-9_]*)\\)");
    private static final Pattern XMX = Pattern.compile("-Xmx(\\d+)([kKmMgG]?)");
    /** The data folder of every stateful role is below this mount (the image's volume). */
    private static final String DATA_MOUNT = "/var/lib/sluice";

    /** One Kubernetes object of deploy/k8s, validated against its schema. */
    record Manifest(String source, String kind, String name, String namespace, Object model) {
        <T> T as(Class<T> type) {
            return type.cast(model);
        }
    }

    /** A Deployment or StatefulSet: its pod template. */
    record Workload(Manifest manifest, Map<String, String> selector, V1PodTemplateSpec template) {
        String name() {
            return manifest.name();
        }

        V1PodSpec pod() {
            return template.getSpec();
        }

        V1Container container() {
            return pod().getContainers().get(0);
        }

        String role() {
            return container().getArgs().get(0);
        }

        Map<String, String> labels() {
            return template.getMetadata().getLabels();
        }
    }

    private static List<Manifest> manifests;
    private static List<String> schemaErrors;

    @BeforeAll
    static void load() throws IOException {
        manifests = new ArrayList<>();
        schemaErrors = new ArrayList<>();
        for (Path file : k8sFiles()) {
            List<Map<String, Object>> docs = DeployFiles.loadAll(file);
            for (int i = 0; i < docs.size(); i++) {
                String where = file.getFileName() + " document " + (i + 1);
                Object model = validate(where, docs.get(i), schemaErrors);
                Map<String, Object> meta = map(docs.get(i), "metadata");
                manifests.add(new Manifest(where, String.valueOf(docs.get(i).get("kind")), (String) meta.get("name"),
                        (String) meta.get("namespace"), model));
            }
        }
    }

    // ------------------------------------------------------------------------------------------------ Kubernetes

    @Test
    void everyManifestMatchesTheKubernetesApiSchema() {
        assertTrue(schemaErrors.isEmpty(), "schema errors:\n" + String.join("\n", schemaErrors));
        Set<String> kinds = manifests.stream().map(Manifest::kind).collect(Collectors.toCollection(TreeSet::new));
        assertEquals(new TreeSet<>(List.of("ConfigMap", "Deployment", "HorizontalPodAutoscaler", "Namespace",
                "NetworkPolicy", "PodDisruptionBudget", "Secret", "Service", "StatefulSet")), kinds);
    }

    /** The schema check itself: a misspelt field, a wrong type, a missing required field each fail. */
    @Test
    void theSchemaCheckRejectsWhatKubernetesRejects() throws IOException {
        Map<String, Object> statefulSet = DeployFiles.loadAll(DeployFiles.deploy("k8s/backend.yaml")).stream()
                .filter(d -> "StatefulSet".equals(d.get("kind"))).findFirst().orElseThrow();
        assertTrue(validate("as written", statefulSet, new ArrayList<>()) instanceof V1StatefulSet);

        List<String> errors = new ArrayList<>();
        Map<String, Object> misspelt = deepCopy(statefulSet);
        map(misspelt, "spec").put("replica", 3);
        validate("misspelt", misspelt, errors);
        Map<String, Object> wrongType = deepCopy(statefulSet);
        map(wrongType, "spec").put("replicas", "three");
        validate("wrong type", wrongType, errors);
        Map<String, Object> stringForInt = deepCopy(statefulSet);
        map(stringForInt, "spec").put("replicas", "3");
        validate("string for an integer", stringForInt, errors);
        Map<String, Object> missing = deepCopy(statefulSet);
        map(missing, "spec").remove("selector");
        validate("missing selector", missing, errors);
        Map<String, Object> badQuantity = deepCopy(statefulSet);
        List<Object> containers = listAt(badQuantity, "spec", "template", "spec", "containers");
        map(asMap(containers.get(0), "container"), "resources", "limits").put("memory", "4 gigs");
        validate("bad quantity", badQuantity, errors);
        assertEquals(5, errors.size(), String.join("\n", errors));
    }

    @Test
    void kustomizationListsEveryManifest() throws IOException {
        Map<String, Object> kustomization = DeployFiles.load(DeployFiles.deploy("k8s/kustomization.yaml"));
        assertEquals("kustomize.config.k8s.io/v1beta1", kustomization.get("apiVersion"));
        assertEquals("Kustomization", kustomization.get("kind"));
        Set<String> listed = new TreeSet<>(strings(kustomization, "resources"));
        Set<String> files = k8sFiles().stream().map(p -> p.getFileName().toString())
                .collect(Collectors.toCollection(TreeSet::new));
        assertEquals(files, listed, "kustomization.yaml resources vs the manifests in deploy/k8s");
        // its image override must name the image the workloads use
        for (Object image : (List<?>) kustomization.get("images")) {
            String name = String.valueOf(asMap(image, "image").get("name"));
            assertTrue(workloads().stream().allMatch(w -> w.container().getImage().startsWith(name + ":")),
                    "kustomization images[].name " + name + " is the workloads' image");
        }
    }

    @Test
    void everyObjectIsInTheSluiceNamespace() {
        assertTrue(manifests.stream().anyMatch(m -> m.kind().equals("Namespace") && m.name().equals(NAMESPACE)));
        for (Manifest m : manifests) {
            if (!m.kind().equals("Namespace")) {
                assertEquals(NAMESPACE, m.namespace(), m.source() + " " + m.kind() + " " + m.name());
            }
        }
    }

    @Test
    void theThreeRolesRunWithTheExpectedReplicas() {
        Map<String, Workload> byRole = workloadsByRole();
        assertEquals(Set.of("metadata", "backend", "frontend"), byRole.keySet());
        assertEquals(3, byRole.get("metadata").manifest().as(V1StatefulSet.class).getSpec().getReplicas());
        assertEquals(3, byRole.get("backend").manifest().as(V1StatefulSet.class).getSpec().getReplicas());
        assertEquals(2, byRole.get("frontend").manifest().as(V1Deployment.class).getSpec().getReplicas());
    }

    @Test
    void probesUseTheAdminPort() {
        for (Workload w : workloads()) {
            V1Container c = w.container();
            int adminPort = Integer.parseInt(Objects.requireNonNullElse(flag(c.getArgs(), "--admin-port"),
                    String.valueOf(DEFAULT_ADMIN_PORT.get(w.role()))));
            assertProbe(w, c, "readiness", c.getReadinessProbe(), "/ready", adminPort);
            assertProbe(w, c, "liveness", c.getLivenessProbe(), "/health", adminPort);
            if (c.getStartupProbe() != null) {
                assertProbe(w, c, "startup", c.getStartupProbe(), "/health", adminPort);
            }
        }
    }

    private static void assertProbe(Workload w, V1Container c, String what, V1Probe probe, String path, int adminPort) {
        assertNotNull(probe, w.name() + ": no " + what + " probe");
        V1HTTPGetAction get = probe.getHttpGet();
        assertNotNull(get, w.name() + ": the " + what + " probe is not an HTTP GET");
        assertEquals(path, get.getPath(), w.name() + " " + what + " probe path");
        assertEquals(adminPort, containerPort(c, get.getPort()), w.name() + " " + what
                + " probe: the admin port (--admin-port)");
    }

    @Test
    void resourcesAreSetAndTheHeapFitsTheMemoryLimit() {
        for (Workload w : workloads()) {
            V1Container c = w.container();
            assertNotNull(c.getResources(), w.name() + ": resources");
            Map<String, Quantity> requests = Objects.requireNonNullElse(c.getResources().getRequests(), Map.of());
            Map<String, Quantity> limits = Objects.requireNonNullElse(c.getResources().getLimits(), Map.of());
            assertTrue(requests.containsKey("cpu") && requests.containsKey("memory"),
                    w.name() + ": cpu and memory requests");
            assertTrue(limits.containsKey("memory"), w.name() + ": a memory limit");
            BigDecimal limit = limits.get("memory").getNumber();
            assertTrue(requests.get("memory").getNumber().compareTo(limit) <= 0, w.name() + ": request <= limit");
            String javaOpts = env(c).get("JAVA_OPTS");
            assertNotNull(javaOpts, w.name() + ": JAVA_OPTS sizes the heap");
            Matcher m = XMX.matcher(javaOpts);
            assertTrue(m.find(), w.name() + ": JAVA_OPTS has -Xmx: " + javaOpts);
            BigDecimal heap = new BigDecimal(m.group(1)).multiply(BigDecimal.valueOf(switch (m.group(2)
                    .toLowerCase(Locale.ROOT)) {
                case "k" -> 1L << 10;
                case "m" -> 1L << 20;
                case "g" -> 1L << 30;
                default -> 1L;
            }));
            // The rest of the limit is for metaspace, threads, Netty and (on backends) RocksDB, all off-heap.
            assertTrue(heap.compareTo(limit.multiply(new BigDecimal("0.6"))) <= 0,
                    w.name() + ": -Xmx " + heap + " bytes is over 60% of the memory limit " + limit);
        }
    }

    @Test
    void podsRunAsNonRootWithoutServiceLinksAndStopGracefully() {
        for (Workload w : workloads()) {
            V1PodSpec pod = w.pod();
            // Service links inject e.g. SLUICE_METADATA_PORT=tcp://... (from a Service named sluice-metadata),
            // which Sluice reads as configuration key sluice.metadata.port and refuses.
            assertEquals(Boolean.FALSE, pod.getEnableServiceLinks(), w.name() + ": enableServiceLinks: false");
            assertNotNull(pod.getSecurityContext(), w.name() + ": pod securityContext");
            assertEquals(Boolean.TRUE, pod.getSecurityContext().getRunAsNonRoot(), w.name() + ": runAsNonRoot");
            assertNotNull(pod.getSecurityContext().getRunAsUser(), w.name() + ": runAsUser");
            assertTrue(pod.getSecurityContext().getRunAsUser() > 0, w.name() + ": runAsUser is not root");
            assertNotNull(w.container().getSecurityContext(), w.name() + ": container securityContext");
            assertEquals(Boolean.FALSE, w.container().getSecurityContext().getAllowPrivilegeEscalation(),
                    w.name() + ": allowPrivilegeEscalation: false");
            if (Boolean.TRUE.equals(w.container().getSecurityContext().getReadOnlyRootFilesystem())) {
                assertTrue(mountPaths(w).contains("/tmp"), w.name() + ": a read-only root needs a writable /tmp"
                        + " (RocksDB unpacks its native library there)");
            }
            Long grace = pod.getTerminationGracePeriodSeconds();
            assertNotNull(grace, w.name() + ": terminationGracePeriodSeconds");
            assertTrue(grace >= 30, w.name() + ": at least 30 s to close gracefully, got " + grace);
        }
    }

    @Test
    void argumentsAreAcceptedByTheLauncherAndReferenceDefinedVariables() {
        Map<String, String> config = configMap().getData();
        for (Workload w : workloads()) {
            V1Container c = w.container();
            // what $(VAR) may refer to: the ConfigMap's keys (envFrom), then env entries in their order
            Map<String, String> defined = new LinkedHashMap<>();
            for (V1EnvFromSource from : Objects.requireNonNullElse(c.getEnvFrom(), List.<V1EnvFromSource>of())) {
                assertNotNull(from.getConfigMapRef(), w.name() + ": envFrom a ConfigMap");
                assertEquals(configMap().getMetadata().getName(), from.getConfigMapRef().getName(),
                        w.name() + ": envFrom names the ConfigMap");
                defined.putAll(config);
            }
            for (V1EnvVar e : Objects.requireNonNullElse(c.getEnv(), List.<V1EnvVar>of())) {
                String value = e.getValue();
                if (value != null) {
                    value = expand(w.name() + " env " + e.getName(), value, defined);
                } else if (e.getValueFrom() != null && e.getValueFrom().getFieldRef() != null) {
                    value = e.getValueFrom().getFieldRef().getFieldPath().equals("metadata.name")
                            ? w.name() + "-0" : NAMESPACE;
                } else if (e.getValueFrom() != null && e.getValueFrom().getSecretKeyRef() != null) {
                    String secretName = e.getValueFrom().getSecretKeyRef().getName();
                    String key = e.getValueFrom().getSecretKeyRef().getKey();
                    V1Secret secret = manifests.stream().filter(m -> m.kind().equals("Secret")
                            && m.name().equals(secretName)).map(m -> m.as(V1Secret.class)).findFirst().orElse(null);
                    assertNotNull(secret, w.name() + ": env " + e.getName() + " names Secret " + secretName);
                    assertTrue(secret.getStringData() != null && secret.getStringData().containsKey(key)
                            || secret.getData() != null && secret.getData().containsKey(key),
                            w.name() + ": Secret " + secretName + " has key " + key);
                    value = "secret";
                } else {
                    fail(w.name() + ": env " + e.getName() + " has neither a value nor a supported valueFrom");
                }
                defined.put(e.getName(), value);
            }
            List<String> args = new ArrayList<>();
            for (String a : c.getArgs()) {
                args.add(expand(w.name() + " args", a, defined));
            }
            assertTrue(c.getCommand() == null || c.getCommand().isEmpty(),
                    w.name() + ": keep the image's entry point (java $JAVA_OPTS -jar sluice.jar)");
            parseWithLauncher(w.name(), args);
            // environment variables named like configuration keys must be configuration keys, with valid values
            assertConfiguration(w.name(), defined);
        }
    }

    @Test
    void selectorsSelectAndTargetsExist() {
        List<Workload> workloads = workloads();
        for (Workload w : workloads) {
            assertFalse(w.selector().isEmpty(), w.name() + ": a selector");
            assertTrue(w.labels().entrySet().containsAll(w.selector().entrySet()),
                    w.name() + ": selector " + w.selector() + " matches its pod labels " + w.labels());
        }
        for (Manifest m : ofKind("Service")) {
            V1Service s = m.as(V1Service.class);
            List<Workload> selected = selected(workloads, s.getSpec().getSelector());
            assertEquals(1, selected.size(), "Service " + m.name() + " selects exactly one workload's pods");
            for (V1ServicePort port : s.getSpec().getPorts()) {
                IntOrString target = port.getTargetPort() == null ? new IntOrString(port.getPort())
                        : port.getTargetPort();
                assertTrue(containerPort(selected.get(0).container(), target) > 0,
                        "Service " + m.name() + " port " + port.getName() + " targets a container port");
            }
        }
        for (Manifest m : ofKind("PodDisruptionBudget")) {
            V1PodDisruptionBudget pdb = m.as(V1PodDisruptionBudget.class);
            List<Workload> selected = selected(workloads, pdb.getSpec().getSelector().getMatchLabels());
            assertEquals(1, selected.size(), "PDB " + m.name() + " covers exactly one workload");
            String role = selected.get(0).role();
            if (role.equals("frontend")) {
                assertEquals(new IntOrString(1), pdb.getSpec().getMinAvailable(), "frontend PDB minAvailable 1");
            } else {
                assertEquals(new IntOrString(1), pdb.getSpec().getMaxUnavailable(), role + " PDB maxUnavailable 1");
            }
        }
        Set<String> pdbRoles = ofKind("PodDisruptionBudget").stream().map(m -> selected(workloads,
                m.as(V1PodDisruptionBudget.class).getSpec().getSelector().getMatchLabels()).get(0).role())
                .collect(Collectors.toSet());
        assertEquals(Set.of("metadata", "backend", "frontend"), pdbRoles, "a PDB for each role");
        List<Manifest> hpas = ofKind("HorizontalPodAutoscaler");
        assertEquals(1, hpas.size());
        V2HorizontalPodAutoscaler hpa = hpas.get(0).as(V2HorizontalPodAutoscaler.class);
        String target = hpa.getSpec().getScaleTargetRef().getKind() + "/" + hpa.getSpec().getScaleTargetRef().getName();
        Workload scaled = workloads.stream().filter(w -> (w.manifest().kind() + "/" + w.name()).equals(target))
                .findFirst().orElse(null);
        assertNotNull(scaled, "the HPA's scaleTargetRef " + target + " exists");
        assertEquals("frontend", scaled.role(), "the HPA scales the frontends");
        assertTrue(hpa.getSpec().getMinReplicas() >= 2, "HPA keeps at least 2 frontends");
        assertTrue(hpa.getSpec().getMetrics().stream().anyMatch(x -> x.getResource() != null
                && x.getResource().getName().equals("cpu")), "HPA on CPU");
        assertNotNull(scaled.container().getResources().getRequests().get("cpu"),
                "CPU utilization is relative to the CPU request");
    }

    @Test
    void statefulSetsHaveHeadlessServicesPersistentVolumesAndAntiAffinity() {
        for (Workload w : workloads()) {
            if (!w.manifest().kind().equals("StatefulSet")) {
                continue;
            }
            V1StatefulSet sts = w.manifest().as(V1StatefulSet.class);
            String serviceName = sts.getSpec().getServiceName();
            V1Service svc = ofKind("Service").stream().filter(m -> m.name().equals(serviceName))
                    .map(m -> m.as(V1Service.class)).findFirst().orElse(null);
            assertNotNull(svc, w.name() + ": its serviceName " + serviceName + " exists");
            assertEquals("None", svc.getSpec().getClusterIP(), serviceName + " is headless (clusterIP: None)");
            assertEquals(Boolean.TRUE, svc.getSpec().getPublishNotReadyAddresses(), serviceName
                    + ": publishNotReadyAddresses (members must reach each other before they are ready)");
            assertTrue(w.labels().entrySet().containsAll(svc.getSpec().getSelector().entrySet()),
                    serviceName + " selects " + w.name() + "'s pods");
            assertEquals("Parallel", sts.getSpec().getPodManagementPolicy(), w.name() + ": podManagementPolicy");
            assertEquals("RollingUpdate", sts.getSpec().getUpdateStrategy() == null ? "RollingUpdate"
                    : sts.getSpec().getUpdateStrategy().getType(), w.name() + ": rolling updates");
            // the data folder is on the PVC
            assertNotNull(sts.getSpec().getVolumeClaimTemplates(), w.name() + ": volumeClaimTemplates");
            String claim = sts.getSpec().getVolumeClaimTemplates().get(0).getMetadata().getName();
            V1VolumeMount mount = w.container().getVolumeMounts().stream().filter(v -> v.getName().equals(claim))
                    .findFirst().orElse(null);
            assertNotNull(mount, w.name() + ": the claim " + claim + " is mounted");
            String dataDir = flag(w.container().getArgs(), "--data-dir");
            assertNotNull(dataDir, w.name() + ": --data-dir");
            assertTrue(dataDir.startsWith(mount.getMountPath() + "/"), w.name() + ": --data-dir " + dataDir
                    + " is in a folder of the volume " + mount.getMountPath() + " (not its root: lost+found)");
            // replicas on different nodes where possible
            var anti = w.pod().getAffinity() == null || w.pod().getAffinity().getPodAntiAffinity() == null ? null
                    : w.pod().getAffinity().getPodAntiAffinity().getPreferredDuringSchedulingIgnoredDuringExecution();
            assertNotNull(anti, w.name() + ": preferred pod anti-affinity");
            boolean spreads = false;
            for (V1WeightedPodAffinityTerm t : anti) {
                spreads |= "kubernetes.io/hostname".equals(t.getPodAffinityTerm().getTopologyKey())
                        && t.getPodAffinityTerm().getLabelSelector() != null
                        && w.labels().entrySet().containsAll(
                                t.getPodAffinityTerm().getLabelSelector().getMatchLabels().entrySet());
            }
            assertTrue(spreads, w.name() + ": anti-affinity on kubernetes.io/hostname against its own pods");
        }
    }

    @Test
    void backendsAdvertiseTheirNameInTheHeadlessService() {
        Workload backend = workloadsByRole().get("backend");
        V1StatefulSet sts = backend.manifest().as(V1StatefulSet.class);
        Map<String, String> env = env(backend.container());
        assertEquals("$(POD_NAME)", flag(backend.container().getArgs(), "--node-id"), "backend node id: pod name");
        assertEquals("0.0.0.0", flag(backend.container().getArgs(), "--host"),
                "backend admin endpoint on all interfaces (probes, port-forward)");
        String host = flag(backend.container().getArgs(), "--advertise-host");
        assertNotNull(host, "backend --advertise-host");
        // $(X) indirections through env down to the literal
        for (int i = 0; i < 5 && VARIABLE_REFERENCE.matcher(host).matches(); i++) {
            Matcher m = VARIABLE_REFERENCE.matcher(host);
            assertTrue(m.matches());
            host = Objects.requireNonNull(env.get(m.group(1)), "backend env " + m.group(1));
        }
        assertTrue(host.startsWith("$(POD_NAME)." + sts.getSpec().getServiceName() + "."),
                "backend --advertise-host is its record in the headless Service: " + host);
        String suffix = host.substring(("$(POD_NAME)." + sts.getSpec().getServiceName() + ".").length());
        String resolvedSuffix = VARIABLE_REFERENCE.matcher(suffix).replaceAll(r ->
                Matcher.quoteReplacement(Objects.requireNonNullElse(configMap().getData().get(r.group(1)), "?")));
        assertTrue(resolvedSuffix.startsWith(NAMESPACE + ".svc."), "DNS suffix " + resolvedSuffix);
        int raftPort = Integer.parseInt(flag(backend.container().getArgs(), "--raft-port"));
        assertEquals(raftPort, containerPort(backend.container(), new IntOrString("raft")), "raft container port");
    }

    @Test
    void metadataPeersNameEveryMetadataPod() {
        Workload metadata = workloadsByRole().get("metadata");
        V1StatefulSet sts = metadata.manifest().as(V1StatefulSet.class);
        Map<String, String> config = configMap().getData();
        String spec = config.get(ServerConfigKeys.METADATA_PEERS.environmentName());
        assertNotNull(spec, "the ConfigMap sets " + ServerConfigKeys.METADATA_PEERS.environmentName());
        Map<String, String> peers = DeployFiles.peers(spec);
        int raftPort = containerPort(metadata.container(), new IntOrString("raft"));
        String suffix = config.get("CLUSTER_DNS_SUFFIX");
        Map<String, String> expected = new LinkedHashMap<>();
        for (int i = 0; i < sts.getSpec().getReplicas(); i++) {
            String pod = sts.getMetadata().getName() + "-" + i;
            expected.put(pod, pod + "." + sts.getSpec().getServiceName() + "." + suffix + ":" + raftPort);
        }
        assertEquals(expected, peers, "SLUICE_METADATA_PEERS: one entry per metadata pod, id = pod name,"
                + " host = its record in the headless Service, port = its raft port");
        assertEquals("$(POD_NAME)", flag(metadata.container().getArgs(), "--node-id"), "metadata node id: pod name");
        assertEquals("$(SLUICE_METADATA_PEERS)", flag(metadata.container().getArgs(), "--peers"));
        for (Workload w : workloads()) {
            if (!w.role().equals("metadata")) {
                assertEquals("$(SLUICE_METADATA_PEERS)", flag(w.container().getArgs(), "--metadata-peers"),
                        w.name() + ": the same metadata group");
            }
        }
        V1Service svc = ofKind("Service").stream().filter(m -> m.name().equals(sts.getSpec().getServiceName()))
                .map(m -> m.as(V1Service.class)).findFirst().orElseThrow();
        assertTrue(svc.getSpec().getPorts().stream().anyMatch(p -> p.getPort() == raftPort),
                "the metadata Service publishes the raft port");
    }

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
        for (Workload w : workloads()) {
            V1EnvVar token = w.container().getEnv().stream().filter(e -> e.getName().equals("SLUICE_ADMIN_READ_TOKEN"))
                    .findFirst().orElseThrow(() -> new AssertionError(w.name() + ": SLUICE_ADMIN_READ_TOKEN"));
            assertEquals("sluice-admin-read-token", token.getValueFrom().getSecretKeyRef().getName(), w.name());
            assertEquals("token", token.getValueFrom().getSecretKeyRef().getKey(), w.name());
        }
        V1Secret secret = ofKind("Secret").stream().filter(m -> m.name().equals("sluice-admin-read-token"))
                .map(m -> m.as(V1Secret.class)).findFirst().orElseThrow();
        assertEquals(Set.of("token"), secret.getStringData().keySet(), "the read token's Secret holds only it");
    }

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

    // ------------------------------------------------------------------------------------------------ Grafana

    @Test
    void theDashboardHasItsVariablesAndAPanelPerTopic() throws IOException {
        JsonNode dash = new ObjectMapper().readTree(DeployFiles.deploy("grafana/sluice-dashboard.json").toFile());
        assertTrue(dash.path("schemaVersion").asInt() >= 36, "schemaVersion");
        Map<String, JsonNode> vars = new HashMap<>();
        dash.path("templating").path("list").forEach(v -> vars.put(v.path("name").asText(), v));
        assertEquals("datasource", vars.get("datasource").path("type").asText(), "a data source variable");
        assertEquals("prometheus", vars.get("datasource").path("query").asText());
        assertTrue(vars.get("queue").toString().contains("label_values(sluice_queue_messages, queue)"),
                "a queue variable from label_values(sluice_queue_messages, queue)");
        List<String> exprs = new ArrayList<>();
        Set<Integer> ids = new TreeSet<>();
        for (JsonNode panel : dash.path("panels")) {
            assertTrue(ids.add(panel.path("id").asInt()), "panel ids are unique: " + panel.path("id"));
            if (panel.path("type").asText().equals("row")) {
                continue;
            }
            String title = panel.path("title").asText();
            assertEquals("${datasource}", panel.path("datasource").path("uid").asText(), title + ": data source");
            assertTrue(panel.path("targets").size() > 0, title + ": queries");
            for (JsonNode t : panel.path("targets")) {
                assertFalse(t.path("expr").asText().isBlank(), title + ": an expression");
                exprs.add(t.path("expr").asText());
            }
        }
        String all = String.join("\n", exprs);
        for (String needed : List.of("sluice_queue_messages{", "sluice_queue_oldest_message_age_seconds",
                "sluice_queue_messages_sent_total", "sluice_queue_messages_received_total",
                "sluice_queue_messages_deleted_total", "sluice_queue_empty_receives_total",
                "sluice_queue_throttled_total", "histogram_quantile(0.5,", "histogram_quantile(0.99,",
                "sqs_requests_seconds_bucket", "outcome=~\"5..\"", "sluice_queue_dead_lettered_total",
                "sluice_shard_leader)", "sluice_shard_follower_lag_entries", "sluice_storage_bytes")) {
            assertTrue(all.contains(needed), "a panel uses " + needed);
        }
    }

    // ------------------------------------------------------------------------------------------------ helpers

    /** The deploy/k8s manifests (every *.yaml but the kustomization). */
    static List<Path> k8sFiles() throws IOException {
        try (Stream<Path> files = Files.list(DeployFiles.deploy("k8s"))) {
            return files.filter(p -> p.toString().endsWith(".yaml") || p.toString().endsWith(".yml"))
                    .filter(p -> !p.getFileName().toString().startsWith("kustomization")).sorted().toList();
        }
    }

    /**
     * Deserializes a document into the Kubernetes model of its kind with the client's strict adapters (unknown
     * field, missing required field, object where a value belongs: rejected), then serializes it back: anything
     * that did not survive unchanged (a string where the API wants an integer, a dropped value) is an error too.
     */
    static Object validate(String where, Map<String, Object> doc, List<String> errors) {
        String type = doc.get("apiVersion") + "/" + doc.get("kind");
        Class<?> model = MODELS.get(type);
        if (model == null) {
            errors.add(where + ": " + type + " is not a kind these manifests use (or a removed API version); known: "
                    + new TreeSet<>(MODELS.keySet()));
            return null;
        }
        JsonElement in = new GsonBuilder().serializeNulls().create().toJsonTree(doc);
        Object parsed;
        try {
            parsed = JSON.getGson().fromJson(in, model);
        } catch (RuntimeException e) {
            errors.add(where + " (" + type + "): " + e.getMessage());
            return null;
        }
        List<String> diffs = new ArrayList<>();
        diff("", in, JSON.getGson().toJsonTree(parsed), diffs);
        if (!diffs.isEmpty()) {
            errors.add(where + " (" + type + ") changes when read as the API would read it: " + diffs);
            return null;
        }
        return parsed;
    }

    private static void diff(String path, JsonElement in, JsonElement out, List<String> diffs) {
        if (in.isJsonObject() && out != null && out.isJsonObject()) {
            JsonObject a = in.getAsJsonObject();
            JsonObject b = out.getAsJsonObject();
            for (String k : a.keySet()) {
                if (!b.has(k) && !a.get(k).isJsonNull()) {
                    diffs.add(path + "." + k + " was dropped");
                } else if (b.has(k)) {
                    diff(path + "." + k, a.get(k), b.get(k), diffs);
                }
            }
        } else if (in.isJsonArray() && out != null && out.isJsonArray() && in.getAsJsonArray().size()
                == out.getAsJsonArray().size()) {
            for (int i = 0; i < in.getAsJsonArray().size(); i++) {
                diff(path + "[" + i + "]", in.getAsJsonArray().get(i), out.getAsJsonArray().get(i), diffs);
            }
        } else if (!Objects.equals(in, out) && !sameNumber(in, out) && !sameQuantity(in, out)) {
            diffs.add(path + ": " + in + " reads as " + out);
        }
    }

    private static boolean sameNumber(JsonElement a, JsonElement b) {
        return a.isJsonPrimitive() && b != null && b.isJsonPrimitive() && a.getAsJsonPrimitive().isNumber()
                && b.getAsJsonPrimitive().isNumber()
                && a.getAsBigDecimal().compareTo(b.getAsBigDecimal()) == 0;
    }

    /** "1000m" and "1" are the same quantity. */
    private static boolean sameQuantity(JsonElement a, JsonElement b) {
        try {
            return a.isJsonPrimitive() && a.getAsJsonPrimitive().isString() && b != null && b.isJsonPrimitive()
                    && b.getAsJsonPrimitive().isString()
                    && new Quantity(a.getAsString()).getNumber()
                            .compareTo(new Quantity(b.getAsString()).getNumber()) == 0;
        } catch (RuntimeException e) {
            return false;
        }
    }

    private static Map<String, Object> deepCopy(Map<String, Object> m) {
        return asMap(copy(m), "copy");
    }

    private static Object copy(Object o) {
        if (o instanceof Map<?, ?> m) {
            Map<String, Object> out = new LinkedHashMap<>();
            m.forEach((k, v) -> out.put(String.valueOf(k), copy(v)));
            return out;
        }
        if (o instanceof List<?> l) {
            return new ArrayList<>(l.stream().map(DeployManifestsTest::copy).toList());
        }
        return o;
    }

    @SuppressWarnings("unchecked")
    private static List<Object> listAt(Map<String, Object> m, String... path) {
        Object o = m;
        for (String key : path) {
            o = ((Map<String, Object>) o).get(key);
        }
        return (List<Object>) o;
    }

    private static List<Manifest> ofKind(String kind) {
        return manifests.stream().filter(m -> m.kind().equals(kind) && m.model() != null).toList();
    }

    private static V1ConfigMap configMap() {
        List<Manifest> maps = ofKind("ConfigMap");
        assertEquals(1, maps.size(), "one ConfigMap");
        return maps.get(0).as(V1ConfigMap.class);
    }

    /**
     * Every port is a door: a default policy denies all ingress, and each role's pods are selected by policies that
     * open exactly its container ports; the Raft ports only to Sluice's own pods.
     */
    @Test
    void networkPoliciesOpenEachRolesPortsAndNoOthers() {
        List<io.kubernetes.client.openapi.models.V1NetworkPolicy> policies = ofKind("NetworkPolicy").stream()
                .map(m -> m.as(io.kubernetes.client.openapi.models.V1NetworkPolicy.class)).toList();
        assertTrue(policies.stream().anyMatch(p -> (p.getSpec().getPodSelector().getMatchLabels() == null
                || p.getSpec().getPodSelector().getMatchLabels().isEmpty())
                && (p.getSpec().getIngress() == null || p.getSpec().getIngress().isEmpty())
                && p.getSpec().getPolicyTypes().contains("Ingress")),
                "a default-deny ingress policy for the namespace");
        for (Workload w : workloads()) {
            Set<Integer> open = new TreeSet<>();
            Set<Integer> raftFromOwnPodsOnly = new TreeSet<>();
            for (var p : policies) {
                Map<String, String> selector = p.getSpec().getPodSelector().getMatchLabels();
                if (selector != null && !w.labels().entrySet().containsAll(selector.entrySet())) {
                    continue;
                }
                for (var rule : Objects.requireNonNullElse(p.getSpec().getIngress(),
                        List.<io.kubernetes.client.openapi.models.V1NetworkPolicyIngressRule>of())) {
                    boolean ownPodsOnly = rule.getFrom() != null && !rule.getFrom().isEmpty() && rule.getFrom().stream()
                            .allMatch(f -> f.getNamespaceSelector() == null && f.getPodSelector() != null
                                    && "sluice".equals(f.getPodSelector().getMatchLabels().get("app.kubernetes.io/name")));
                    for (var port : rule.getPorts()) {
                        open.add(port.getPort().getIntValue());
                        if (ownPodsOnly) {
                            raftFromOwnPodsOnly.add(port.getPort().getIntValue());
                        }
                    }
                }
            }
            Set<Integer> declared = new TreeSet<>();
            Integer raft = null;
            for (V1ContainerPort cp : w.container().getPorts()) {
                declared.add(cp.getContainerPort());
                if ("raft".equals(cp.getName())) {
                    raft = cp.getContainerPort();
                }
            }
            assertEquals(declared, open, w.name() + ": the policies open exactly its ports");
            if (raft != null) {
                assertEquals(Set.of(raft), raftFromOwnPodsOnly, w.name() + ": its Raft port only to Sluice's pods");
            }
        }
    }

    /**
     * Raft mutual TLS on Kubernetes: every role mounts the Secret sluice-cluster-tls with the CA and only its own
     * certificate and key, at the paths the ConfigMap names; the Secret that deploy/k8s/make-tls-secret.sh prints has
     * every key the pods mount, and its certificates name the addresses peers dial (the metadata peers, the backends'
     * advertised host).
     */
    @Test
    void everyRoleMountsItsOwnRaftCertificateFromTheSecretTheScriptMakes() throws Exception {
        Map<String, String> config = configMap().getData();
        Path dir = Files.createTempDirectory("sluice-k8s-tls");
        Process p = new ProcessBuilder("bash", DeployFiles.deploy("k8s/make-tls-secret.sh").toString(), dir.toString(),
                NAMESPACE).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        String printed = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, java.util.concurrent.TimeUnit.SECONDS) && p.exitValue() == 0, printed);
        Path printedFile = Files.writeString(dir.resolve("secret.yaml"), printed);
        Map<String, Object> secret = DeployFiles.load(printedFile);
        assertEquals("sluice-cluster-tls", map(secret, "metadata").get("name"));
        assertEquals(NAMESPACE, map(secret, "metadata").get("namespace"));
        Map<String, Object> data = map(secret, "data");
        for (Workload w : workloads()) {
            String role = w.role();
            V1Volume volume = w.pod().getVolumes().stream().filter(v -> v.getSecret() != null
                    && "sluice-cluster-tls".equals(v.getSecret().getSecretName())).findFirst()
                    .orElseThrow(() -> new AssertionError(w.name() + " mounts Secret sluice-cluster-tls"));
            V1VolumeMount mount = w.container().getVolumeMounts().stream().filter(m -> m.getName().equals(
                    volume.getName())).findFirst().orElseThrow(() -> new AssertionError(w.name() + " mounts it"));
            assertEquals(Boolean.TRUE, mount.getReadOnly(), w.name() + ": read-only");
            Map<String, String> items = new TreeMap<>();
            volume.getSecret().getItems().forEach(i -> items.put(i.getKey(), mount.getMountPath() + "/" + i.getPath()));
            assertEquals(Set.of("ca.pem", role + ".pem", role + "-key.pem"), items.keySet(),
                    w.name() + ": the CA and its own certificate only");
            assertEquals(items.get("ca.pem"), config.get("SLUICE_CLUSTER_TLS_CA_FILE"), w.name());
            assertEquals(items.get(role + ".pem"), config.get("SLUICE_CLUSTER_TLS_CERT_FILE"), w.name());
            assertEquals(items.get(role + "-key.pem"), config.get("SLUICE_CLUSTER_TLS_KEY_FILE"), w.name());
            items.keySet().forEach(k -> assertTrue(data.containsKey(k), "the Secret has " + k));
        }
        List<String> dialled = new ArrayList<>();
        DeployFiles.peers(config.get("SLUICE_METADATA_PEERS")).values()
                .forEach(a -> dialled.add("metadata " + a.substring(0, a.lastIndexOf(':'))));
        dialled.add("backend sluice-backend-0.sluice-backend." + config.get("CLUSTER_DNS_SUFFIX"));
        for (String d : dialled) {
            String role = d.substring(0, d.indexOf(' '));
            String host = d.substring(d.indexOf(' ') + 1);
            java.security.cert.X509Certificate cert = (java.security.cert.X509Certificate)
                    java.security.cert.CertificateFactory.getInstance("X.509").generateCertificate(
                            new java.io.ByteArrayInputStream(java.util.Base64.getDecoder().decode(
                                    String.valueOf(data.get(role + ".pem")))));
            List<String> names = cert.getSubjectAlternativeNames().stream().map(n -> String.valueOf(n.get(1))).toList();
            assertTrue(names.stream().anyMatch(n -> n.equals(host) || n.startsWith("*.")
                    && host.endsWith(n.substring(1)) && !host.substring(0, host.length() - n.length() + 1).contains(".")),
                    role + " certificate " + names + " covers " + host);
        }
    }

    private static List<Workload> workloads() {
        List<Workload> out = new ArrayList<>();
        for (Manifest m : ofKind("StatefulSet")) {
            V1StatefulSet s = m.as(V1StatefulSet.class);
            out.add(new Workload(m, s.getSpec().getSelector().getMatchLabels(), s.getSpec().getTemplate()));
        }
        for (Manifest m : ofKind("Deployment")) {
            V1Deployment d = m.as(V1Deployment.class);
            out.add(new Workload(m, d.getSpec().getSelector().getMatchLabels(), d.getSpec().getTemplate()));
        }
        assertFalse(out.isEmpty(), "workloads");
        for (Workload w : out) {
            assertEquals(1, w.pod().getContainers().size(), w.name() + ": one container");
            assertNotNull(w.container().getArgs(), w.name() + ": args give the role");
        }
        return out;
    }

    private static Map<String, Workload> workloadsByRole() {
        Map<String, Workload> out = new LinkedHashMap<>();
        for (Workload w : workloads()) {
            assertTrue(out.put(w.role(), w) == null, "one workload per role: " + w.role());
        }
        return out;
    }

    private static List<Workload> selected(List<Workload> workloads, Map<String, String> selector) {
        assertTrue(selector != null && !selector.isEmpty(), "a non-empty selector");
        return workloads.stream().filter(w -> w.labels().entrySet().containsAll(selector.entrySet())).toList();
    }

    private static Map<String, String> env(V1Container c) {
        Map<String, String> out = new LinkedHashMap<>();
        for (V1EnvVar e : Objects.requireNonNullElse(c.getEnv(), List.<V1EnvVar>of())) {
            out.put(e.getName(), e.getValue());
        }
        return out;
    }

    private static Set<String> mountPaths(Workload w) {
        return Objects.requireNonNullElse(w.container().getVolumeMounts(), List.<V1VolumeMount>of()).stream()
                .map(V1VolumeMount::getMountPath).collect(Collectors.toSet());
    }

    /** The container port a probe or Service port refers to (by name or number); -1 if none. */
    private static int containerPort(V1Container c, IntOrString port) {
        for (V1ContainerPort p : Objects.requireNonNullElse(c.getPorts(), List.<V1ContainerPort>of())) {
            if (port.isInteger() ? p.getContainerPort().equals(port.getIntValue())
                    : port.getStrValue().equals(p.getName())) {
                return p.getContainerPort();
            }
        }
        return -1;
    }

    /** Kubernetes' $(VAR) expansion; an undefined variable is an error (Kubernetes would pass it on literally). */
    private static String expand(String where, String value, Map<String, String> defined) {
        Matcher m = VARIABLE_REFERENCE.matcher(value);
        StringBuilder sb = new StringBuilder();
        while (m.find()) {
            String v = defined.get(m.group(1));
            assertNotNull(v, where + ": $(" + m.group(1) + ") is not defined before use");
            m.appendReplacement(sb, Matcher.quoteReplacement(v));
        }
        m.appendTail(sb);
        return sb.toString();
    }

    /** The launcher's own command-line parser accepts the role and flags (unknown or missing flags fail). */
    private static void parseWithLauncher(String where, List<String> args) {
        try {
            CommandLine.ParseResult parsed = new CommandLine(new SluiceMain()).parseArgs(args.toArray(String[]::new));
            assertTrue(parsed.hasSubcommand(), where + ": a role");
            assertTrue(Set.of("metadata", "backend", "frontend").contains(parsed.subcommand().commandSpec().name()),
                    where + ": a cluster role, not " + parsed.subcommand().commandSpec().name());
        } catch (CommandLine.ParameterException e) {
            fail(where + ": sluice refuses " + args + ": " + e.getMessage());
        }
    }

    /** SLUICE_* variables are configuration keys (or one of the few others) and their values are valid. */
    private static void assertConfiguration(String where, Map<String, String> env) {
        Set<String> keys = ServerConfigKeys.all().stream().map(ConfigKey::environmentName).collect(Collectors.toSet());
        Map<String, String> config = new HashMap<>();
        env.forEach((k, v) -> {
            if (k.startsWith("SLUICE_")) {
                assertTrue(keys.contains(k) || OTHER_SLUICE_VARIABLES.contains(k),
                        where + ": " + k + " is not a configuration key (docs/configuration.md)");
                if (keys.contains(k)) {
                    config.put(k, v);
                }
            }
        });
        try {
            ServerConfig.load(null, config, Map.of());
        } catch (RuntimeException e) {
            fail(where + ": Sluice refuses the configuration " + config + ": " + e.getMessage());
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

    private static List<String> dockerfile() throws IOException {
        // join continuation lines
        String text = Files.readString(DeployFiles.deploy("docker/Dockerfile")).replaceAll("\\\\\\n\\s*", " ");
        return text.lines().map(String::trim).filter(l -> !l.isEmpty() && !l.startsWith("#")).toList();
    }
}
