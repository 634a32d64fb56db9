package io.sluice.it;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The TCP sockets a process listens on, read from Linux's {@code /proc}: the socket inodes among its file
 * descriptors, matched against the LISTEN entries of {@code /proc/net/tcp} and {@code tcp6}. Addresses print as
 * {@code host:port}, an IPv4-mapped IPv6 address as its IPv4 form, a wildcard as {@code 0.0.0.0} or {@code ::}.
 */
final class ListeningSockets {
    private static final String LISTEN = "0A";

    private ListeningSockets() {
    }

    static Set<String> of(long pid) throws IOException {
        Set<String> inodes = new HashSet<>();
        try (var fds = Files.list(Path.of("/proc", Long.toString(pid), "fd"))) {
            for (Path fd : fds.toList()) {
                try {
                    String target = Files.readSymbolicLink(fd).toString();
                    if (target.startsWith("socket:[")) {
                        inodes.add(target.substring(8, target.length() - 1));
                    }
                } catch (IOException e) {
                    // closed meanwhile
                }
            }
        }
        Map<String, String> listening = new HashMap<>();
        for (String table : List.of("tcp", "tcp6")) {
            List<String> lines = Files.readAllLines(Path.of("/proc", Long.toString(pid), "net", table));
            for (String line : lines.subList(1, lines.size())) {
                String[] f = line.trim().split("\\s+");
                if (f.length > 9 && f[3].equals(LISTEN)) {
                    listening.put(f[9], address(f[1]));
                }
            }
        }
        Set<String> out = new TreeSet<>();
        inodes.forEach(inode -> {
            String a = listening.get(inode);
            if (a != null) {
                out.add(a);
            }
        });
        return out;
    }

    /** {@code 0100007F:1F90} (IPv4) or 32 hex digits (IPv6), each 32-bit word little-endian, then the port. */
    static String address(String hex) {
        String[] parts = hex.split(":");
        int port = Integer.parseInt(parts[1], 16);
        String h = parts[0];
        byte[] bytes = new byte[h.length() / 2];
        for (int word = 0; word < h.length() / 8; word++) {
            for (int b = 0; b < 4; b++) { // each 4-byte word is stored little-endian
                int at = word * 8 + (3 - b) * 2;
                bytes[word * 4 + b] = (byte) Integer.parseInt(h.substring(at, at + 2), 16);
            }
        }
        String host;
        if (bytes.length == 4) {
            host = (bytes[0] & 0xff) + "." + (bytes[1] & 0xff) + "." + (bytes[2] & 0xff) + "." + (bytes[3] & 0xff);
        } else {
            boolean mapped = true;
            for (int i = 0; i < 10; i++) {
                mapped &= bytes[i] == 0;
            }
            mapped &= (bytes[10] & 0xff) == 0xff && (bytes[11] & 0xff) == 0xff;
            boolean any = true;
            for (byte b : bytes) {
                any &= b == 0;
            }
            if (mapped) {
                host = (bytes[12] & 0xff) + "." + (bytes[13] & 0xff) + "." + (bytes[14] & 0xff) + "." + (bytes[15] & 0xff);
            } else if (any) {
                host = "::";
            } else {
                StringBuilder s = new StringBuilder();
                for (int i = 0; i < 16; i += 2) {
                    s.append(i == 0 ? "" : ":").append(Integer.toHexString(((bytes[i] & 0xff) << 8) | (bytes[i + 1] & 0xff)));
                }
                host = s.toString();
            }
        }
        return host + ":" + port;
    }
}
