package io.sluice.it;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** One scrape of a Prometheus text endpoint, parsed into samples, with label-matching lookups. */
final class PromScrape {
    private static final Pattern SAMPLE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{(.*)})?\\s+(\\S+)");
    private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");

    record Sample(String name, Map<String, String> labels, double value) {
    }

    private final List<Sample> samples = new ArrayList<>();

    PromScrape(String text) {
        for (String line : text.split("\n")) {
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            Matcher m = SAMPLE.matcher(line);
            if (!m.find()) {
                throw new IllegalArgumentException("not a sample line: " + line);
            }
            Map<String, String> labels = new LinkedHashMap<>();
            if (m.group(3) != null) {
                Matcher l = LABEL.matcher(m.group(3));
                while (l.find()) {
                    labels.put(l.group(1), l.group(2));
                }
            }
            samples.add(new Sample(m.group(1), labels, Double.parseDouble(m.group(4))));
        }
    }

    /** Scrapes with the fixtures' read token ({@link ProcessFixtures#READ_TOKEN}). */
    static PromScrape of(URI adminEndpoint) throws IOException, InterruptedException {
        return of(adminEndpoint, ProcessFixtures.READ_TOKEN);
    }

    /** Scrapes presenting {@code token} as Prometheus does ({@code Authorization: Bearer}). */
    static PromScrape of(URI adminEndpoint, String token) throws IOException, InterruptedException {
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create(adminEndpoint + "/metrics")).header("Authorization", "Bearer " + token).build(),
                HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            throw new IOException("scrape answered " + r.statusCode() + ": " + r.body());
        }
        return new PromScrape(r.body());
    }

    /** Samples of the metric whose labels include every given pair ({@code k1, v1, k2, v2, ...}). */
    List<Sample> find(String name, String... labelPairs) {
        List<Sample> out = new ArrayList<>();
        for (Sample s : samples) {
            if (!s.name().equals(name)) {
                continue;
            }
            boolean all = true;
            for (int i = 0; i + 1 < labelPairs.length; i += 2) {
                all &= labelPairs[i + 1].equals(s.labels().get(labelPairs[i]));
            }
            if (all) {
                out.add(s);
            }
        }
        return out;
    }

    /** The sum over matching samples (0 when none match). */
    double sum(String name, String... labelPairs) {
        return find(name, labelPairs).stream().mapToDouble(Sample::value).sum();
    }

    Set<String> names() {
        Set<String> out = new TreeSet<>();
        samples.forEach(s -> out.add(s.name()));
        return out;
    }

    List<Sample> samples() {
        return samples;
    }
}
