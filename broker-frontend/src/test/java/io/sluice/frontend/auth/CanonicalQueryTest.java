package io.sluice.frontend.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Canonical query strings and URIs (spec section 9, step 2). */
class CanonicalQueryTest {

    @ParameterizedTest(name = "[{index}] ''{0}'' -> ''{1}''")
    @CsvSource(delimiter = '|', emptyValue = "", value = {
        "''|''",
        "Action=ListQueues|Action=ListQueues",
        "b=2&a=3&a=1&c|a=1&a=3&b=2&c=",
        "a=b+c|a=b%20c", // a + is a space, as the parameter parser reads it (form encoding)
        "a=b%2Bc|a=b%2Bc",
        "a=b%20c|a=b%20c",
        "a=b c|a=b%20c",
        "a=%7e%2a*~|a=~%2A%2A~",
        "a=%c3%a9|a=%C3%A9",
        "a=é|a=%C3%A9",
        "a=%zz%4|a=%25zz%254",
        "a=%FF%FE|a=%FF%FE",
        "&&a=1&&|a=1",
        "a=x=y|a=x%3Dy",
        "%41%2Fb=1|A%2Fb=1",
        "B=1&a=1&_=1&~=1&-=1&.=1|-=1&.=1&B=1&_=1&a=1&~=1",
        "X-Amz-Signature=abc&X-Amz-Date=1|X-Amz-Date=1",
    })
    void canonicalQuery(String raw, String expected) {
        assertEquals(expected, QueryString.parse(raw).canonical("X-Amz-Signature"));
    }

    @Test
    void nullQueryIsEmpty() {
        assertEquals("", QueryString.parse(null).canonical(null));
    }

    @Test
    void valuesAreDecodedWithPlusAsASpaceAsTheParameterParserReadsThem() {
        QueryString q = QueryString.parse("X-Amz-Credential=AKID%2F20240102%2Fus-east-1&m=a+b&m=%E2%82%AC&flag");
        assertEquals(List.of("AKID/20240102/us-east-1"), q.values("X-Amz-Credential"));
        assertEquals(List.of("a b", "\u20ac"), q.values("m"));
        assertEquals(List.of(""), q.values("flag"));
        assertEquals(List.of(), q.values("M"));
    }

    @ParameterizedTest(name = "[{index}] ''{0}'' -> ''{1}''")
    @CsvSource(delimiter = '|', emptyValue = "", value = {
        "''|/",
        "/|/",
        "/000000000000/orders-1.fifo|/000000000000/orders-1.fifo",
        "/a%20b|/a%2520b",
        "/a b/é|/a%20b/%C3%A9",
        "/a+b*c~|/a%2Bb%2Ac~",
    })
    void canonicalPathEncodesTheWirePathOnceMore(String rawPath, String expected) {
        assertEquals(expected, UriEncoding.canonicalPath(rawPath));
    }
}
