package io.sluice.common.validation;

import io.sluice.common.SqsLimits;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Checks the text of a {@code Number} message attribute in linear time (no big-number parsing of hostile input).
 * Accepted syntax: optional sign, decimal digits with an optional point, optional {@code e}/{@code E} exponent.
 * A non-zero value must have at most 38 significant digits (leading and trailing zeros do not count) and a
 * magnitude in [10^-128, 10^+126] (spec 5.5).
 */
final class NumberAttribute {
    enum Verdict { VALID, NOT_A_NUMBER, OUT_OF_RANGE }

    private static final Pattern SYNTAX =
            Pattern.compile("[+-]?(?:([0-9]+)(?:\\.([0-9]*))?|\\.([0-9]+))(?:[eE]([+-]?[0-9]+))?");
    /** Exponents with more digits than this are certainly outside the range of any 38-digit value. */
    private static final int MAX_EXPONENT_DIGITS = 9;

    private NumberAttribute() {
    }

    static Verdict check(String text) {
        Matcher m = SYNTAX.matcher(text);
        if (!m.matches()) {
            return Verdict.NOT_A_NUMBER;
        }
        String intPart = m.group(1) != null ? m.group(1) : "";
        String fracPart = m.group(2) != null ? m.group(2) : m.group(3) != null ? m.group(3) : "";
        String digits = intPart + fracPart;
        int first = 0;
        while (first < digits.length() && digits.charAt(first) == '0') {
            first++;
        }
        if (first == digits.length()) {
            return Verdict.VALID; // zero, whatever its exponent
        }
        int last = digits.length() - 1;
        while (digits.charAt(last) == '0') {
            last--;
        }
        int precision = last - first + 1;
        if (precision > SqsLimits.MAX_NUMBER_ATTRIBUTE_PRECISION) {
            return Verdict.OUT_OF_RANGE;
        }
        String exponentText = m.group(4) == null ? "0" : m.group(4);
        String exponentDigits = exponentText.replaceFirst("^[+-]?0*", "");
        if (exponentDigits.length() > MAX_EXPONENT_DIGITS) {
            return Verdict.OUT_OF_RANGE;
        }
        long exponent = exponentDigits.isEmpty() ? 0 : Long.parseLong(exponentDigits);
        if (exponentText.startsWith("-")) {
            exponent = -exponent;
        }
        // Power of ten of the leading significant digit: |value| = d.ddd x 10^adjusted.
        long adjusted = (long) intPart.length() - first - 1 + exponent;
        boolean tooLarge = adjusted > SqsLimits.MAX_NUMBER_ATTRIBUTE_EXPONENT
                || (adjusted == SqsLimits.MAX_NUMBER_ATTRIBUTE_EXPONENT && precision > 1)
                || (adjusted == SqsLimits.MAX_NUMBER_ATTRIBUTE_EXPONENT && digits.charAt(first) != '1');
        boolean tooSmall = adjusted < SqsLimits.MIN_NUMBER_ATTRIBUTE_EXPONENT;
        return tooLarge || tooSmall ? Verdict.OUT_OF_RANGE : Verdict.VALID;
    }
}
