package io.sluice.it;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * The deployment files under {@code deploy/} (docker-compose, Kubernetes, Prometheus, Grafana) as parsed data, for
 * {@link KubernetesManifestsTest}, {@link ComposeFilesTest}, {@link DockerImageTest}, {@link GrafanaDashboardTest},
 * {@link AlertRulesTest} and {@link ComposeSmokeIT}.
 */
final class DeployFiles {
    /** What a ${VAR:-default} reference in docker-compose.yml looks like. */
    private static final Pattern COMPOSE_VARIABLE = Pattern.compile("\\$\\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?}");

    private DeployFiles() {
    }

    /** The repository root: the nearest folder, from the working directory up, that holds deploy/docker-compose.yml. */
    static Path root() {
        Path p = Path.of("").toAbsolutePath();
        while (p != null && !Files.isRegularFile(p.resolve("deploy/docker-compose.yml"))) {
            p = p.getParent();
        }
        if (p == null) {
            throw new IllegalStateException("no deploy/docker-compose.yml above " + Path.of("").toAbsolutePath());
        }
        return p;
    }

    static Path deploy(String relative) {
        return root().resolve("deploy").resolve(relative);
    }

    /** Every YAML document of a file (merge keys resolved), empty documents left out. */
    static List<Map<String, Object>> loadAll(Path file) throws IOException {
        List<Map<String, Object>> out = new ArrayList<>();
        try (Reader r = Files.newBufferedReader(file)) {
            for (Object doc : yaml().loadAll(r)) {
                if (doc != null) {
                    out.add(asMap(doc, file.toString()));
                }
            }
        }
        return out;
    }

    /** A single-document YAML file. */
    static Map<String, Object> load(Path file) throws IOException {
        List<Map<String, Object>> docs = loadAll(file);
        if (docs.size() != 1) {
            throw new IllegalStateException(file + ": expected one YAML document, found " + docs.size());
        }
        return docs.get(0);
    }

    private static Yaml yaml() {
        LoaderOptions options = new LoaderOptions();
        options.setAllowDuplicateKeys(false);
        return new Yaml(new SafeConstructor(options));
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> asMap(Object o, String what) {
        if (!(o instanceof Map)) {
            throw new IllegalStateException(what + ": expected a mapping, got " + o);
        }
        return (Map<String, Object>) o;
    }

    /** The mapping at {@code path} below {@code m}, or an empty one. */
    static Map<String, Object> map(Map<String, Object> m, String... path) {
        Object o = m;
        for (String key : path) {
            o = o instanceof Map<?, ?> mm ? mm.get(key) : null;
        }
        return o == null ? new LinkedHashMap<>() : asMap(o, String.join(".", path));
    }

    /** The list at {@code key} of {@code m} as strings (a YAML string alone counts as a one-entry list). */
    static List<String> strings(Map<String, Object> m, String key) {
        Object o = m.get(key);
        List<String> out = new ArrayList<>();
        if (o instanceof List<?> l) {
            l.forEach(e -> out.add(String.valueOf(e)));
        } else if (o != null) {
            out.add(String.valueOf(o));
        }
        return out;
    }

    /** The value after {@code flag} in a command line, or null. */
    static String flag(List<String> args, String flag) {
        int i = args.indexOf(flag);
        return i < 0 || i + 1 >= args.size() ? null : args.get(i + 1);
    }

    /** docker compose's interpolation of ${VAR:-default} and ${VAR-default} with an empty environment. */
    static String composeDefaults(String value) {
        Matcher m = COMPOSE_VARIABLE.matcher(value);
        StringBuilder sb = new StringBuilder();
        while (m.find()) {
            m.appendReplacement(sb, Matcher.quoteReplacement(m.group(2) == null ? "" : m.group(2)));
        }
        m.appendTail(sb);
        return sb.toString();
    }

    /** A metadata peers list {@code id=host:port,...} as id -> host:port, in order. */
    static Map<String, String> peers(String spec) {
        Map<String, String> out = new LinkedHashMap<>();
        for (String part : spec.split(",")) {
            String[] kv = part.trim().split("=", 2);
            if (kv.length != 2 || out.put(kv[0], kv[1]) != null) {
                throw new IllegalStateException("bad or repeated entry " + part + " in peers " + spec);
            }
        }
        return out;
    }
}
