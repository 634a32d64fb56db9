package io.sluice.server;

import io.sluice.frontend.auth.AuthorizationPolicy;
import io.sluice.frontend.auth.Authorizer;
import io.sluice.frontend.auth.CredentialStore;
import io.sluice.frontend.auth.Credentials;
import io.sluice.metadata.image.ClusterImage;
import io.sluice.metadata.image.MetadataRecord;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Access keys from two places: the node's own configuration (the dev key, {@code sluice.auth.keys-file}) and the
 * replicated catalog ({@code sluice admin put-key}), so a key added once is accepted by every frontend as soon as
 * its cached catalog has it. An id in both is refused at start ({@link ConfiguredKeys}); one stored in the catalog
 * later is refused while it clashes (neither copy silently wins: rotating one would do nothing), logged once. The
 * catalog's rules are rebuilt only when the image changes.
 */
final class CatalogAccessKeys implements CredentialStore, Authorizer {
    private static final Logger LOG = LoggerFactory.getLogger(CatalogAccessKeys.class);

    private final Map<String, String> configuredSecrets;
    private final Map<String, List<AuthorizationPolicy.Rule>> configuredRules;
    private final Supplier<ClusterImage> catalog;
    private final Set<String> clashesLogged = ConcurrentHashMap.newKeySet();
    private volatile Compiled compiled = new Compiled(-1, new AuthorizationPolicy(Map.of()));

    private record Compiled(long index, AuthorizationPolicy policy) {
    }

    CatalogAccessKeys(Map<String, String> configuredSecrets, Map<String, List<AuthorizationPolicy.Rule>> configuredRules,
                      Supplier<ClusterImage> catalog) {
        this.configuredSecrets = Map.copyOf(configuredSecrets);
        this.configuredRules = Map.copyOf(configuredRules);
        this.catalog = catalog;
    }

    @Override
    public Optional<Credentials> find(String accessKeyId) {
        String secret = configuredSecrets.get(accessKeyId);
        MetadataRecord.AccessKeySet stored = catalog.get().accessKeys().get(accessKeyId);
        if (secret != null && stored != null) {
            if (clashesLogged.add(accessKeyId)) {
                LOG.error("access key {} is configured on this node and stored in the catalog: refused until one is"
                        + " renamed or removed", accessKeyId);
            }
            return Optional.empty();
        }
        if (secret == null) {
            secret = stored == null ? null : stored.secretKey();
        }
        return secret == null ? Optional.empty() : Optional.of(new Credentials(accessKeyId, secret));
    }

    @Override
    public boolean isAllowed(String accessKeyId, String action, String queueName) {
        return policy().isAllowed(accessKeyId, action, queueName);
    }

    /** Whether the key has the admin rule ({@code *} on {@code *}) itself. */
    boolean isAdmin(String accessKeyId) {
        return policy().isAdmin(accessKeyId);
    }

    private AuthorizationPolicy policy() {
        ClusterImage image = catalog.get();
        Compiled c = compiled;
        if (c.index() != image.appliedIndex()) {
            Map<String, List<AuthorizationPolicy.Rule>> rules = new HashMap<>();
            image.accessKeys().forEach((id, key) -> {
                List<AuthorizationPolicy.Rule> list = new ArrayList<>();
                key.allow().forEach(pair -> list.add(new AuthorizationPolicy.Rule(pair.get(0), pair.get(1))));
                rules.put(id, list);
            });
            configuredSecrets.keySet().forEach(k -> rules.put(k, configuredRules.getOrDefault(k, List.of())));
            c = new Compiled(image.appliedIndex(), new AuthorizationPolicy(rules));
            compiled = c;
        }
        return c.policy();
    }
}
