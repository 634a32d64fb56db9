package io.sluice.it;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * CPU time of every thread of some processes, from {@code /proc/PID/task/TID/stat}, summed by thread group: a thread's
 * Java name (from {@code jcmd PID Thread.print}, else the kernel's name, cut at 15 characters) with its numbers and
 * Raft group ids taken out ({@code grpc-default-executor-12} counts as {@code grpc-default-executor-N}, a Raft group's
 * {@code n1@group-5F3A…->n2-GrpcLogAppender} as {@code nN@group-X->nN-GrpcLogAppender}). Two snapshots give what each
 * group spent between them, per process: the load generator's per-request CPU budget ({@code --threads}).
 */
final class ThreadCpu {
    private static final Pattern JCMD_THREAD = Pattern.compile("^\"(.*?)\" .*\\bnid=(0x[0-9a-fA-F]+|[0-9]+)\\b.*");

    /** Ticks per process name and thread group. */
    private final Map<String, Map<String, Long>> ticks;

    private ThreadCpu(Map<String, Map<String, Long>> ticks) {
        this.ticks = ticks;
    }

    /** One thread's kernel name and CPU ticks so far, per process name and thread id. */
    record Threads(List<Long> pids, Map<String, Map<Long, Used>> used) {
    }

    record Used(String kernelName, long ticks) {
    }

    static Threads snapshot(List<Long> pids, List<String> names) {
        Map<String, Map<Long, Used>> out = new LinkedHashMap<>();
        for (int i = 0; i < pids.size(); i++) {
            Map<Long, Used> threads = out.computeIfAbsent(names.get(i), k -> new HashMap<>());
            try (Stream<Path> tasks = Files.list(Path.of("/proc", Long.toString(pids.get(i)), "task"))) {
                for (Path task : (Iterable<Path>) tasks::iterator) {
                    readThread(task, threads);
                }
            } catch (IOException e) {
                // the process is gone: it counts nothing from here on
            }
        }
        return new Threads(pids, out);
    }

    private static void readThread(Path task, Map<Long, Used> threads) {
        String line;
        try {
            line = Files.readString(task.resolve("stat"));
        } catch (IOException e) {
            return; // the thread ended between the listing and the read
        }
        // comm is in parentheses and may hold spaces and parentheses: it ends at the last ")"
        String name = line.substring(line.indexOf('(') + 1, line.lastIndexOf(')'));
        String[] f = line.substring(line.lastIndexOf(')') + 2).split(" ");
        threads.put(Long.parseLong(task.getFileName().toString()),
                new Used(name, Long.parseLong(f[11]) + Long.parseLong(f[12]))); // utime, stime
    }

    /**
     * What each process's thread groups spent between two snapshots, in ticks; threads named by their Java names
     * where {@code jcmd} gives them (asked now: the threads that count are long-lived).
     */
    static ThreadCpu between(Threads before, Threads after) {
        Map<String, Map<String, Long>> out = new LinkedHashMap<>();
        int i = 0;
        for (Map.Entry<String, Map<Long, Used>> process : after.used().entrySet()) {
            Map<Long, String> javaNames = javaNames(after.pids().get(i++));
            Map<Long, Used> earlier = before.used().getOrDefault(process.getKey(), Map.of());
            Map<String, Long> spent = new TreeMap<>();
            process.getValue().forEach((tid, used) -> {
                Used was = earlier.get(tid);
                long d = used.ticks() - (was == null ? 0 : was.ticks());
                if (d > 0) {
                    spent.merge(group(javaNames.getOrDefault(tid, used.kernelName())), d, Long::sum);
                }
            });
            out.put(process.getKey(), spent);
        }
        return new ThreadCpu(out);
    }

    /** Thread id to Java thread name, from {@code jcmd PID Thread.print} (empty if that fails). */
    private static Map<Long, String> javaNames(long pid) {
        Map<Long, String> names = new HashMap<>();
        try {
            Process jcmd = new ProcessBuilder("jcmd", Long.toString(pid), "Thread.print")
                    .redirectError(ProcessBuilder.Redirect.DISCARD).start();
            try (BufferedReader r = new BufferedReader(new InputStreamReader(jcmd.getInputStream(),
                    StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                    Matcher m = JCMD_THREAD.matcher(line);
                    if (m.matches()) {
                        String nid = m.group(2);
                        names.put(nid.startsWith("0x") ? Long.parseLong(nid.substring(2), 16) : Long.parseLong(nid),
                                m.group(1));
                    }
                }
            }
            jcmd.waitFor(30, TimeUnit.SECONDS);
        } catch (IOException e) {
            // no jcmd: the kernel's names stay
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return names;
    }

    static String group(String threadName) {
        return threadName.replaceAll("@group-[0-9A-Fa-f]+", "@group-X").replaceAll("[0-9]+", "N")
                .replace(' ', '_');
    }

    /**
     * A table of the {@code top} largest thread groups (over all processes) in milliseconds of CPU per unit
     * ({@code units} of work in the window: requests, say), one column per process, a total row and column; the
     * groups below the top ones are summed in "the rest".
     */
    String table(double units, String unit, int top, long ticksPerSecond) {
        Map<String, Long> byGroup = new TreeMap<>();
        ticks.values().forEach(g -> g.forEach((group, t) -> byGroup.merge(group, t, Long::sum)));
        List<String> order = new ArrayList<>(byGroup.keySet());
        order.sort(Comparator.comparing((String g) -> byGroup.get(g)).reversed());
        List<String> shown = order.subList(0, Math.min(top, order.size()));
        List<String> processes = new ArrayList<>(ticks.keySet());
        double msPerTick = 1000.0 / ticksPerSecond;
        StringBuilder s = new StringBuilder(String.format("  server CPU in ms per %s, by thread group and process"
                + " (%,.0f %ss):%n  | thread group |", unit, units, unit));
        processes.forEach(p -> s.append(' ').append(p).append(" |"));
        s.append(" all |\n  |---|").append("---|".repeat(processes.size() + 1)).append('\n');
        for (String group : shown) {
            s.append("  | ").append(group).append(" |");
            processes.forEach(p -> s.append(String.format(" %.3f |",
                    ticks.get(p).getOrDefault(group, 0L) * msPerTick / units)));
            s.append(String.format(" %.3f |%n", byGroup.get(group) * msPerTick / units));
        }
        s.append("  | the rest |");
        long restAll = 0;
        for (String p : processes) {
            long rest = ticks.get(p).entrySet().stream().filter(e -> !shown.contains(e.getKey()))
                    .mapToLong(Map.Entry::getValue).sum();
            restAll += rest;
            s.append(String.format(" %.3f |", rest * msPerTick / units));
        }
        s.append(String.format(" %.3f |%n  | all |", restAll * msPerTick / units));
        long all = 0;
        for (String p : processes) {
            long sum = ticks.get(p).values().stream().mapToLong(Long::longValue).sum();
            all += sum;
            s.append(String.format(" %.3f |", sum * msPerTick / units));
        }
        return s.append(String.format(" %.3f |%n", all * msPerTick / units)).toString();
    }
}
