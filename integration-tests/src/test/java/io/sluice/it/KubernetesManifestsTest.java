package io.sluice.it;

import static io.sluice.it.DeployFiles.asMap;
import static io.sluice.it.DeployFiles.flag;
import static io.sluice.it.DeployFiles.map;
import static io.sluice.it.DeployFiles.strings;
import static io.sluice.it.LauncherChecks.DEFAULT_ADMIN_PORT;
import static io.sluice.it.LauncherChecks.assertConfiguration;
import static io.sluice.it.LauncherChecks.parseWithLauncher;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

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
import io.sluice.server.ServerConfigKeys;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
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

/**
 * The Kubernetes manifests under {@code deploy/k8s} against the real Kubernetes API schemas (the official Java
 * client's models, generated from the API server's OpenAPI document, which reject unknown and missing required
 * fields), plus what a schema cannot see: probes on the admin port, selectors that select, a metadata peers list that
 * names the metadata pods, flags the launcher accepts, configuration keys Sluice knows, network policies, certificates
 * and the admin read token.
 */
class KubernetesManifestsTest {
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
    private static final Pattern VARIABLE_REFERENCE = Pattern.compile("\\$\\(([A-Za-z_][A-Za-z0-9_]*)\\)");
    private static final Pattern XMX = Pattern.compile("-Xmx(\\d+)([kKmMgG]?)");

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


    /** Every pod takes the admin read token from its own Secret, which holds only it. */
    @Test
    void everyPodTakesTheReadTokenFromItsSecret() {
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
            return new ArrayList<>(l.stream().map(KubernetesManifestsTest::copy).toList());
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
}
