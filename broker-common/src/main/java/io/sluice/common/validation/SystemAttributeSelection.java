package io.sluice.common.validation;

import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * ReceiveMessage's system attribute selection: the union of {@code AttributeNames} and
 * {@code MessageSystemAttributeNames}. {@code All} selects every system attribute (spec 5.1); otherwise the known
 * names listed; unknown names are silently skipped, never an error.
 */
public final class SystemAttributeSelection {
    /** Every message system attribute SQS can return, in canonical order. */
    public static final List<String> KNOWN = List.of("SenderId", "SentTimestamp", "ApproximateReceiveCount",
            "ApproximateFirstReceiveTimestamp", "SequenceNumber", "MessageGroupId", "MessageDeduplicationId",
            "AWSTraceHeader", "DeadLetterQueueSourceArn");

    private final Set<String> names;

    private SystemAttributeSelection(Set<String> names) {
        this.names = names;
    }

    /** The selection from any number of requested-name lists (null lists are skipped). */
    @SafeVarargs
    public static SystemAttributeSelection of(Collection<String>... requestedLists) {
        Set<String> requested = new LinkedHashSet<>();
        for (Collection<String> list : requestedLists) {
            if (list != null) {
                requested.addAll(list);
            }
        }
        if (requested.contains("All")) {
            return new SystemAttributeSelection(new LinkedHashSet<>(KNOWN));
        }
        Set<String> names = new LinkedHashSet<>();
        for (String known : KNOWN) {
            if (requested.contains(known)) {
                names.add(known);
            }
        }
        return new SystemAttributeSelection(names);
    }

    public boolean includes(String name) {
        return names.contains(name);
    }

    /** The selected known names, in canonical order. */
    public Set<String> names() {
        return Collections.unmodifiableSet(names);
    }

    /** The selected entries of a message's system attributes (those it has), in canonical order. */
    public <V> Map<String, V> select(Map<String, V> systemAttributes) {
        Map<String, V> selected = new LinkedHashMap<>();
        for (String name : names) {
            V value = systemAttributes.get(name);
            if (value != null) {
                selected.put(name, value);
            }
        }
        return selected;
    }
}
