package io.sluice.metadata.raft;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;

/** The metadata group's members, written {@code id=host:port,id=host:port,...}. */
public record MetadataPeers(Map<String, String> addresses) {
    /** One fixed group id: a cluster has exactly one metadata group. */
    static final RaftGroupId GROUP_ID = RaftGroupId.valueOf(
            UUID.nameUUIDFromBytes("sluice-metadata".getBytes(StandardCharsets.UTF_8)));

    public MetadataPeers {
        if (addresses.isEmpty()) {
            throw new IllegalArgumentException("the metadata group needs at least one member");
        }
        addresses = Map.copyOf(addresses);
    }

    public static MetadataPeers parse(String spec) {
        Map<String, String> out = new LinkedHashMap<>();
        for (String part : spec.split(",")) {
            String p = part.trim();
            int eq = p.indexOf('=');
            if (eq <= 0 || eq == p.length() - 1 || !p.substring(eq + 1).contains(":")) {
                throw new IllegalArgumentException("expected id=host:port in \"" + spec + "\", got \"" + p + "\"");
            }
            if (out.put(p.substring(0, eq), p.substring(eq + 1)) != null) {
                throw new IllegalArgumentException("member " + p.substring(0, eq) + " listed twice");
            }
        }
        return new MetadataPeers(out);
    }

    RaftGroup group() {
        List<RaftPeer> peers = new ArrayList<>();
        new TreeMap<>(addresses).forEach((id, address) ->
                peers.add(RaftPeer.newBuilder().setId(RaftPeerId.valueOf(id)).setAddress(address).build()));
        return RaftGroup.valueOf(GROUP_ID, peers);
    }

    int port(String id) {
        String address = addresses.get(id);
        if (address == null) {
            throw new IllegalArgumentException("node " + id + " is not a member: " + addresses.keySet());
        }
        return Integer.parseInt(address.substring(address.lastIndexOf(':') + 1));
    }
}
