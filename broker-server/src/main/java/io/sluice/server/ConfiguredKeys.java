package io.sluice.server;

import io.sluice.metadata.image.ClusterImage;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Start-up rules for the access keys a node is configured with (its own key and its keys file), so a deployment
 * cannot run on credentials everyone knows or on two keys that answer to one id:
 * <ul>
 *   <li>{@code sluice frontend} with authentication on needs configured keys (the built-in dev key exists only in
 *       {@code sluice dev});</li>
 *   <li>{@code sluice frontend} refuses the secrets the documentation shows as examples unless its SQS port binds a
 *       loopback address (a cluster on one machine, such as {@code deploy/local/cluster.sh});</li>
 *   <li>a configured key whose id is also stored in the catalog ({@code sluice admin put-key}) is an error: one of
 *       the two would silently win, so rotating it through the other would do nothing.</li>
 * </ul>
 */
final class ConfiguredKeys {
    /** Example secrets of README.md, docs/ and deploy/: public knowledge. */
    static final Set<String> PLACEHOLDER_SECRETS = Set.of("sluice-dev-secret", "change-me", "change-me-too",
            "replace-me-with-a-long-random-secret");

    private ConfiguredKeys() {
    }

    static void check(Map<String, String> configured, boolean frontend, String sqsHost, boolean authEnabled,
                      ClusterImage catalog) {
        if (frontend && authEnabled && configured.isEmpty()) {
            throw new IllegalArgumentException("sluice frontend needs its access keys: --access-key and --secret-key"
                    + " (sluice.access-key, sluice.secret-key) or sluice.auth.keys-file");
        }
        if (frontend && authEnabled && !ClusterTransport.isLoopback(sqsHost)) {
            Set<String> placeholders = new TreeSet<>();
            configured.forEach((id, secret) -> {
                if (PLACEHOLDER_SECRETS.contains(secret)) {
                    placeholders.add(id);
                }
            });
            if (!placeholders.isEmpty()) {
                throw new IllegalArgumentException("access keys " + placeholders + " use a secret from the"
                        + " documentation's examples, and this frontend binds " + sqsHost + ": give them secrets of"
                        + " their own (e.g. openssl rand -base64 30)");
            }
        }
        Set<String> both = new TreeSet<>(configured.keySet());
        both.retainAll(catalog.accessKeys().keySet());
        if (!both.isEmpty()) {
            throw new IllegalArgumentException("access keys " + both + " are configured on this node and also stored"
                    + " in the catalog (sluice admin put-key): rename or remove the configured ones");
        }
    }
}
