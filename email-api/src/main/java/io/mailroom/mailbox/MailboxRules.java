package io.mailroom.mailbox;

import java.util.Locale;
import java.util.Optional;

/**
 * The one rule for what an email address and a display name may be, applied by the order API
 * before it writes an order and by the dispatcher's {@code EmailAddress} and renderer before they
 * build an email. Because both sides call this class, an order the API accepted is never refused
 * for its address or name when its confirmation is rendered (a refusal there is permanent, and
 * leaves support nothing to decide).
 *
 * <p>Addresses are checked more strictly than RFC 5322 allows, on purpose: printable ASCII only
 * (an internationalised domain must be given in punycode; SMTPUTF8 is not used), a dot-atom local
 * part of at most {@value #MAX_LOCAL_PART_LENGTH} characters (no quoted strings, no comments), a
 * domain of at least two LDH labels of at most {@value #MAX_DOMAIN_LABEL_LENGTH} characters whose
 * last is not all digits (no IP addresses, no address literals), and at most
 * {@value #MAX_ADDRESS_LENGTH} characters in all: RFC 5321's path limit of 256 octets less the
 * angle brackets. Every address accepted here is also accepted by Jakarta Mail's strict parser.
 *
 * <p>A display name is any Unicode text of 1 to {@value #MAX_DISPLAY_NAME_LENGTH} characters
 * (code points, as PostgreSQL's {@code length()} counts them), not blank, without anything
 * {@link #isForbiddenInLine(int)} forbids: ISO control characters (C0 with CR/LF, DEL, C1), the
 * line and paragraph separators, and the Unicode bidi controls (U+061C, U+200E, U+200F,
 * U+202A..U+202E, U+2066..U+2069), which can make {@code evil.com} read as {@code moc.live}. Lone
 * surrogates are refused as well: they cannot be encoded. Joiners (U+200D, used in emoji) are fine.
 * The same rule applies to what RFC 2047 encoded words in the name decode to
 * ({@link #headerTextProblem}): a reader's mail client decodes them.
 *
 * <p>It lives in the email API module, which business applications (the example shop) and the
 * dispatcher both depend on; the email-agnostic core modules stay free of it.
 */
public final class MailboxRules {

    /** RFC 5321: a path is at most 256 octets including {@code <} and {@code >}. */
    public static final int MAX_ADDRESS_LENGTH = 254;
    /** RFC 5321 local-part limit. */
    public static final int MAX_LOCAL_PART_LENGTH = 64;
    /** RFC 1035 label limit. */
    public static final int MAX_DOMAIN_LABEL_LENGTH = 63;
    /** In code points; the {@code orders.customer_name} CHECK has the same limit. */
    public static final int MAX_DISPLAY_NAME_LENGTH = 200;

    /** RFC 5322 atext, without the dot (dots are checked separately). */
    private static final String ATEXT = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&'*+/=?^_`{|}~-";

    private MailboxRules() {
    }

    /**
     * What is wrong with {@code address}, phrased to follow the field's name
     * ("contains a character outside printable ASCII at index 3"), or empty if it is acceptable.
     */
    public static Optional<String> addressProblem(String address) {
        if (address == null || address.isBlank()) {
            return Optional.of("is missing");
        }
        // Characters first: a CR/LF must be reported as such even in an overlong value.
        for (int i = 0; i < address.length(); i++) {
            char c = address.charAt(i);
            if (c <= 0x20 || c >= 0x7F) {
                // Also refuses CR/LF (header injection) and spaces.
                return Optional.of("contains a character outside printable ASCII at index " + i);
            }
        }
        if (address.length() > MAX_ADDRESS_LENGTH) {
            return Optional.of("must be at most " + MAX_ADDRESS_LENGTH + " characters, got " + address.length());
        }
        int at = address.lastIndexOf('@');
        if (at <= 0 || at == address.length() - 1 || address.indexOf('@') != at) {
            return Optional.of("must be local-part@domain, e.g. name@example.com");
        }
        return localPartProblem(address.substring(0, at)).or(() -> domainProblem(address.substring(at + 1)));
    }

    /**
     * The address as it is sent: the domain lower-cased (domains are case-insensitive), the local
     * part as given (it may be case-sensitive).
     *
     * @throws IllegalArgumentException if {@link #addressProblem} finds a problem
     */
    public static String normaliseAddress(String address) {
        addressProblem(address).ifPresent(problem -> {
            throw new IllegalArgumentException("address " + problem);
        });
        int at = address.indexOf('@');
        return address.substring(0, at + 1) + address.substring(at + 1).toLowerCase(Locale.ROOT);
    }

    /** What is wrong with the display name {@code name}, or empty if it is acceptable. */
    public static Optional<String> displayNameProblem(String name) {
        if (name == null) {
            return Optional.of("is missing");
        }
        if (name.isBlank()) {
            return Optional.of("must not be blank");
        }
        Optional<String> text = headerTextProblem(name);
        if (text.isPresent()) {
            return text;
        }
        int length = name.codePointCount(0, name.length());
        if (length > MAX_DISPLAY_NAME_LENGTH) {
            return Optional.of("must be at most " + MAX_DISPLAY_NAME_LENGTH + " characters, got " + length);
        }
        return Optional.empty();
    }

    /**
     * What is wrong with {@code s} as the text of one header line (a display name, a subject), or
     * empty: a character {@link #firstForbiddenInLine} forbids, in the text itself or in what its
     * RFC 2047 encoded words decode to (a reader's client decodes them: {@code =?UTF-8?B?...?=}
     * can carry a CR LF and a Bcc), or an encoded word that cannot be decoded.
     */
    public static Optional<String> headerTextProblem(String s) {
        int bad = firstForbiddenInLine(s);
        if (bad >= 0) {
            return Optional.of("contains " + describe(s, bad));
        }
        if (!EncodedWords.contains(s)) {
            return Optional.empty();
        }
        String decoded;
        try {
            decoded = EncodedWords.decode(s);
        } catch (EncodedWords.Undecodable e) {
            return Optional.of(e.getMessage());
        }
        bad = firstForbiddenInLine(decoded);
        if (bad >= 0) {
            return Optional.of("has an RFC 2047 encoded word that decodes to " + describe(decoded, bad));
        }
        return Optional.empty();
    }

    /** Index of the first char that may not stand in one line of text in a mail header, or -1. */
    public static int firstForbiddenInLine(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                i++; // a valid pair: no code point above the BMP is forbidden
                continue;
            }
            if (Character.isSurrogate(c) || isForbiddenInLine(c)) {
                return i;
            }
        }
        return -1;
    }

    /**
     * Whether the code point may not appear in a single line of displayed text: ISO controls (C0,
     * DEL, C1), U+2028/U+2029, and Unicode's Bidi_Control characters.
     */
    public static boolean isForbiddenInLine(int cp) {
        return Character.isISOControl(cp) || cp == 0x2028 || cp == 0x2029 || isBidiControl(cp);
    }

    private static boolean isBidiControl(int cp) {
        return cp == 0x061C || cp == 0x200E || cp == 0x200F || (cp >= 0x202A && cp <= 0x202E)
                || (cp >= 0x2066 && cp <= 0x2069);
    }

    /** "a control character U+000A at index 3", "a bidi control U+202E at index 4", "a lone surrogate U+D800 at index 0". */
    public static String describe(String s, int index) {
        char c = s.charAt(index);
        String kind = Character.isSurrogate(c) ? "a lone surrogate"
                : isBidiControl(c) ? "a bidi control"
                : c == 0x2028 || c == 0x2029 ? "a line separator"
                : "a control character";
        return String.format(Locale.ROOT, "%s U+%04X at index %d", kind, (int) c, index);
    }

    private static Optional<String> localPartProblem(String local) {
        if (local.length() > MAX_LOCAL_PART_LENGTH) {
            return Optional.of("must have at most " + MAX_LOCAL_PART_LENGTH + " characters before the @");
        }
        if (local.startsWith(".") || local.endsWith(".") || local.contains("..")) {
            return Optional.of("must not start or end with a dot or contain two dots in a row before the @");
        }
        for (int i = 0; i < local.length(); i++) {
            char c = local.charAt(i);
            if (c != '.' && ATEXT.indexOf(c) < 0) {
                return Optional.of("contains '" + c + "' before the @, which is not allowed (no quoted or commented local parts)");
            }
        }
        return Optional.empty();
    }

    private static Optional<String> domainProblem(String domain) {
        String[] labels = domain.split("\\.", -1);
        if (labels.length < 2) {
            return Optional.of("must have a domain with at least two labels, e.g. example.com");
        }
        for (String label : labels) {
            if (label.isEmpty() || label.length() > MAX_DOMAIN_LABEL_LENGTH) {
                return Optional.of("must have domain labels of 1 to " + MAX_DOMAIN_LABEL_LENGTH + " characters");
            }
            if (label.startsWith("-") || label.endsWith("-")) {
                return Optional.of("must not have a domain label that starts or ends with a hyphen");
            }
            for (int i = 0; i < label.length(); i++) {
                char c = label.charAt(i);
                boolean ldh = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
                if (!ldh) {
                    return Optional.of("contains '" + c + "' in the domain, which is not a valid host name");
                }
            }
        }
        if (labels[labels.length - 1].chars().allMatch(Character::isDigit)) {
            return Optional.of("must have a domain name, not an IP address");
        }
        return Optional.empty();
    }
}
