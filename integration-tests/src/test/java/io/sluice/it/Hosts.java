package io.sluice.it;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Hosts of a test cluster: one network namespace per process, each with an address of its own on a private bridge
 * ({@code deploy/local/netns.sh}, the script {@code cluster.sh} uses too), and the network faults between them: a
 * host isolated, two sides split, a one-way cut, a slow and lossy link, all healed by {@link #heal}. The test itself
 * stays outside every namespace and reaches every host; faults only cut links between hosts.
 *
 * <p>Needs root, iproute2 and iptables ({@link #available}). Networks 100-199 are the tests'; the first use in a JVM
 * removes what a killed earlier run left there, and {@link #close} removes this one (namespaces, bridge, filters,
 * delay programs, and any process still running in them).
 */
final class Hosts implements AutoCloseable {
    private static final AtomicInteger NEXT = new AtomicInteger(100);
    private static final AtomicBoolean SWEPT = new AtomicBoolean();

    final int net;
    private final Map<String, String> addresses = new LinkedHashMap<>();

    private Hosts(int net) {
        this.net = net;
    }

    /** Whether this machine can make hosts: root, {@code ip} and {@code iptables}. */
    static boolean available() {
        try {
            return run(List.of("id", "-u"), true).strip().equals("0") && onPath("ip") && (onPath("iptables") || onPath("iptables-legacy"));
        } catch (IOException e) {
            return false;
        }
    }

    /** Whether every test cluster runs on hosts ({@code -Dsluice.netns=true}: scripts/client-suite.sh with SLUICE_NETNS=1). */
    static boolean everywhere() {
        return Boolean.parseBoolean(System.getProperty("sluice.netns", "false").strip()) && wanted();
    }

    /**
     * Whether tests that cut the network use hosts: {@code -Dsluice.netns=true} insists (fails without root), {@code false}
     * refuses, unset uses them where {@link #available} (with SLUICE_REQUIRE_TOOLS set, as in CI, it fails instead of
     * skipping).
     */
    static boolean wanted() {
        String p = System.getProperty("sluice.netns", "");
        if (p.isBlank()) {
            if (System.getenv("SLUICE_REQUIRE_TOOLS") != null && !available()) { // CI: never skip them silently
                throw new IllegalStateException("SLUICE_REQUIRE_TOOLS is set, but this machine cannot make network"
                        + " namespaces (needs root, iproute2 and iptables)");
            }
            return available();
        }
        boolean on = Boolean.parseBoolean(p.strip());
        if (on && !available()) {
            throw new IllegalStateException("-Dsluice.netns=true, but this machine cannot make network namespaces"
                    + " (needs root, iproute2 and iptables)");
        }
        return on;
    }

    private static boolean onPath(String command) {
        for (String dir : System.getenv().getOrDefault("PATH", "/usr/sbin:/usr/bin:/sbin:/bin").split(":")) {
            if (Files.isExecutable(Path.of(dir, command))) {
                return true;
            }
        }
        return Files.isExecutable(Path.of("/usr/sbin", command)) || Files.isExecutable(Path.of("/sbin", command));
    }

    /** A new network with one host per name. */
    static Hosts create(List<String> names) throws IOException {
        if (SWEPT.compareAndSet(false, true)) {
            for (String line : script("list").split("\n")) {
                if (line.matches("1\\d\\d")) {
                    script("down", line);
                }
            }
        }
        Hosts hosts = new Hosts(NEXT.getAndIncrement());
        if (hosts.net > 199) {
            throw new IllegalStateException("more than 100 test networks in one JVM");
        }
        script("down", Integer.toString(hosts.net)); // a stale one of this number, if any
        Runtime.getRuntime().addShutdownHook(new Thread(hosts::close));
        hosts.add(names);
        return hosts;
    }

    /** Adds hosts (a backend started later). */
    void add(List<String> names) throws IOException {
        List<String> args = new ArrayList<>(List.of("up", Integer.toString(net)));
        args.addAll(names);
        for (String line : script(args.toArray(String[]::new)).split("\n")) {
            String[] parts = line.strip().split(" ");
            if (parts.length == 2) {
                addresses.put(parts[0], parts[1]);
            }
        }
    }

    /** The host's address. */
    String address(String name) {
        String a = addresses.get(name);
        if (a == null) {
            throw new IllegalArgumentException("no host " + name + " in " + addresses.keySet());
        }
        return a;
    }

    /** The address the machine (this test) has on the hosts' network. */
    String machineAddress() {
        return "10.231." + net + ".1";
    }

    /** The prefix that runs a command in the host (exec: the process keeps the PID). */
    List<String> prefix(String name) {
        address(name);
        return List.of("ip", "netns", "exec", "sluice-" + net + "-" + name);
    }

    /** Cuts the host from every other host, both ways; the test still reaches it. */
    void isolate(String name) throws IOException {
        script("isolate", Integer.toString(net), name);
    }

    /** Cuts every host of one side from every host of the other, both ways. */
    void split(List<String> one, List<String> other) throws IOException {
        script("split", Integer.toString(net), String.join(",", one), String.join(",", other));
    }

    /** One way: {@code from}'s packets to {@code to} are lost; {@code to}'s packets to {@code from} arrive. */
    void cut(String from, String to) throws IOException {
        script("cut", Integer.toString(net), from, to);
    }

    /** The host's links to the others: its packets delayed by {@code delayMs} ± {@code jitterMs}, a share lost. */
    void slow(String name, int delayMs, int jitterMs, int lossPercent, int seconds) throws IOException {
        script("slow", Integer.toString(net), name, Integer.toString(delayMs), Integer.toString(jitterMs),
                Integer.toString(lossPercent), Integer.toString(seconds));
    }

    /** Lifts every fault. */
    void heal() throws IOException {
        script("heal", Integer.toString(net));
    }

    /** Removes the network: namespaces, bridge, filters, delay programs, and whatever still runs in them. */
    @Override
    public void close() {
        try {
            script("down", Integer.toString(net));
        } catch (IOException e) {
            System.err.println("could not remove test network " + net + ": " + e.getMessage());
        }
    }

    private static String script(String... args) throws IOException {
        List<String> cmd = new ArrayList<>(List.of("bash", DeployFiles.root().resolve("deploy/local/netns.sh")
                .toString()));
        cmd.addAll(List.of(args));
        return run(cmd, false);
    }

    private static String run(List<String> cmd, boolean quiet) throws IOException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out;
        try {
            out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException(String.join(" ", cmd) + " did not finish");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
        if (p.exitValue() != 0 && !quiet) {
            throw new IOException(String.join(" ", cmd) + " failed (" + p.exitValue() + "): " + out);
        }
        return out;
    }
}
