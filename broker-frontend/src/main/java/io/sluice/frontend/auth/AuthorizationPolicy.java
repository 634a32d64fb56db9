package io.sluice.frontend.auth;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Which actions an authenticated access key may perform on which queues. Each key has an allow-list of
 * {@link Rule}s; a key without rules may do nothing. An admin key is one with the rule {@link #ADMIN} ({@code *} on
 * {@code *}): every action on every queue and on the account. Immutable and thread-safe.
 */
public final class AuthorizationPolicy implements Authorizer {

    /**
     * Allows actions matching {@code actionPattern} (e.g. {@code *}, {@code SendMessage}, {@code Receive*}) on
     * queues whose name matches {@code queuePattern} (e.g. {@code *}, {@code orders-*}). Patterns are
     * case-sensitive globs where {@code *} matches any run of characters, including none.
     */
    public record Rule(String actionPattern, String queuePattern) {
        public Rule {
            Objects.requireNonNull(actionPattern, "actionPattern");
            Objects.requireNonNull(queuePattern, "queuePattern");
        }

        /** A {@code null} queue name (an action on no queue, such as ListQueues) matches only {@code *}. */
        boolean matches(String action, String queueName) {
            boolean queueMatches = queueName == null ? queuePattern.equals("*") : glob(queuePattern, queueName);
            return queueMatches && glob(actionPattern, action);
        }
    }

    /** The rule of an admin key: every action, every queue, and account-wide actions. */
    public static final Rule ADMIN = new Rule("*", "*");

    private static final Authorizer ALLOW_ALL = (accessKeyId, action, queueName) -> true;

    private final Map<String, List<Rule>> rulesByAccessKey;

    /** A policy with the given rules; keys absent from the map, or mapped to no rules, may do nothing. */
    public AuthorizationPolicy(Map<String, List<Rule>> rulesByAccessKey) {
        Map<String, List<Rule>> copy = new HashMap<>();
        rulesByAccessKey.forEach((key, rules) -> copy.put(key, List.copyOf(rules)));
        this.rulesByAccessKey = Map.copyOf(copy);
    }

    /** Everything for everyone: only for a server whose authentication is off ({@code --no-auth}). */
    public static Authorizer allowAll() {
        return ALLOW_ALL;
    }

    /** Whether {@code accessKeyId} may perform {@code action} on the queue {@code queueName} (may be null). */
    @Override
    public boolean isAllowed(String accessKeyId, String action, String queueName) {
        Objects.requireNonNull(accessKeyId, "accessKeyId");
        Objects.requireNonNull(action, "action");
        return rulesByAccessKey.getOrDefault(accessKeyId, List.of()).stream()
                .anyMatch(rule -> rule.matches(action, queueName));
    }

    /** Whether the key has the admin rule itself ({@code *} on {@code *}), not merely rules that happen to match. */
    public boolean isAdmin(String accessKeyId) {
        return rulesByAccessKey.getOrDefault(accessKeyId, List.of()).contains(ADMIN);
    }

    /** Glob match with {@code *} only; backtracks only to the last star, so O(pattern × text) at worst. */
    static boolean glob(String pattern, String text) {
        int p = 0;
        int t = 0;
        int star = -1;
        int resume = 0;
        while (t < text.length()) {
            if (p < pattern.length() && pattern.charAt(p) != '*' && pattern.charAt(p) == text.charAt(t)) {
                p++;
                t++;
            } else if (p < pattern.length() && pattern.charAt(p) == '*') {
                star = p++;
                resume = t;
            } else if (star >= 0) {
                p = star + 1;
                t = ++resume;
            } else {
                return false;
            }
        }
        while (p < pattern.length() && pattern.charAt(p) == '*') {
            p++;
        }
        return p == pattern.length();
    }
}
