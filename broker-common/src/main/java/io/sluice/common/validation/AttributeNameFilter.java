package io.sluice.common.validation;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * ReceiveMessage's {@code MessageAttributeNames} selection (spec ReceiveMessage): {@code All}, {@code .*} or
 * {@code *} select every attribute; {@code foo.*} selects names starting with {@code foo.}; any other entry is an
 * exact, case-sensitive name. Names that do not exist or could never be valid simply match nothing. No names
 * selects nothing.
 */
public final class AttributeNameFilter {
    public static final AttributeNameFilter NONE = new AttributeNameFilter(false, Set.of(), List.of());
    public static final AttributeNameFilter ALL = new AttributeNameFilter(true, Set.of(), List.of());

    private final boolean all;
    private final Set<String> exact;
    private final List<String> prefixes;

    private AttributeNameFilter(boolean all, Set<String> exact, List<String> prefixes) {
        this.all = all;
        this.exact = exact;
        this.prefixes = prefixes;
    }

    /** The filter for the requested names; null or empty selects nothing. */
    public static AttributeNameFilter of(Collection<String> requested) {
        if (requested == null || requested.isEmpty()) {
            return NONE;
        }
        Set<String> exact = new HashSet<>();
        List<String> prefixes = new ArrayList<>();
        for (String name : requested) {
            if (name == null) {
                continue;
            }
            if (name.equals("All") || name.equals(".*") || name.equals("*")) {
                return ALL;
            }
            if (name.endsWith(".*")) {
                prefixes.add(name.substring(0, name.length() - 1)); // keep the dot: "foo.*" -> "foo."
            } else {
                exact.add(name);
            }
        }
        return new AttributeNameFilter(false, Set.copyOf(exact), List.copyOf(prefixes));
    }

    public boolean matches(String name) {
        if (all || exact.contains(name)) {
            return true;
        }
        for (String prefix : prefixes) {
            if (name.startsWith(prefix)) {
                return true;
            }
        }
        return false;
    }

    /** True when this filter can select nothing (no names requested). */
    public boolean selectsNothing() {
        return !all && exact.isEmpty() && prefixes.isEmpty();
    }

    /** The matching entries, in the input's iteration order. */
    public <V> Map<String, V> select(Map<String, V> attributes) {
        Map<String, V> selected = new LinkedHashMap<>();
        attributes.forEach((name, value) -> {
            if (matches(name)) {
                selected.put(name, value);
            }
        });
        return selected;
    }
}
