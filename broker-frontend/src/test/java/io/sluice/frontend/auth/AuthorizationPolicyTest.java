package io.sluice.frontend.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.frontend.auth.AuthorizationPolicy.Rule;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class AuthorizationPolicyTest {
    private final AuthorizationPolicy policy = new AuthorizationPolicy(Map.of(
            "producer", List.of(new Rule("SendMessage*", "orders-*"), new Rule("GetQueueUrl", "*")),
            "admin", List.of(new Rule("*", "*")),
            "open", List.of()));

    @Test
    void keysWithoutRulesMayDoNothing() {
        assertFalse(policy.isAllowed("stranger", "DeleteQueue", "orders-1"));
        assertFalse(policy.isAllowed("open", "PurgeQueue", "anything"));
        assertFalse(policy.isAllowed("open", "ListQueues", null));
        assertTrue(policy.isAllowed("admin", "ListQueues", null), "an admin key is explicit: the rule * on *");
        assertTrue(AuthorizationPolicy.allowAll().isAllowed("anyone", "ListQueues", null), "only for --no-auth");
    }

    @Test
    void rulesAreAnAllowList() {
        assertTrue(policy.isAllowed("producer", "SendMessage", "orders-eu"));
        assertTrue(policy.isAllowed("producer", "SendMessageBatch", "orders-"));
        assertTrue(policy.isAllowed("producer", "GetQueueUrl", "payments"));
        assertFalse(policy.isAllowed("producer", "ReceiveMessage", "orders-eu"));
        assertFalse(policy.isAllowed("producer", "SendMessage", "payments"));
        assertFalse(policy.isAllowed("producer", "sendmessage", "orders-eu"));
        assertTrue(policy.isAllowed("admin", "DeleteQueue", "x"));
    }

    @Test
    void actionsOnNoQueueNeedAStarQueuePattern() {
        assertFalse(policy.isAllowed("producer", "SendMessage", null));
        assertTrue(policy.isAllowed("producer", "GetQueueUrl", null));
        assertTrue(policy.isAllowed("admin", "ListQueues", null));
    }

    @ParameterizedTest(name = "[{index}] ''{0}'' ~ ''{1}'' = {2}")
    @CsvSource(delimiter = '|', emptyValue = "", value = {
        "*|''|true", "''|''|true", "''|a|false", "a|a|true", "a|ab|false", "a*|ab|true", "*b|ab|true", "*b|ba|false",
        "a*c*e|abcde|true", "a*c*e|abcdf|false", "**|x|true", "orders-*|orders-|true", "orders-*|order-1|false",
        "*a*a*a*a*a*b|aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa|false",
    })
    void glob(String pattern, String text, boolean expected) {
        assertEquals(expected, AuthorizationPolicy.glob(pattern, text));
    }
}
