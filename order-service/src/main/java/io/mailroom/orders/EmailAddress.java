package io.mailroom.orders;

import java.util.Optional;

/**
 * A deliberately plain syntactic check of a recipient address: {@code local@domain} in ASCII, the
 * forms that real order forms produce. It refuses what would be dangerous or undeliverable later:
 * CR/LF and other control characters (header injection when the address is put into a mail header),
 * whitespace, quoted local parts and address literals (not supported by the dispatcher), and
 * addresses longer than 320 characters. Whether the mailbox exists is the mail provider's business.
 */
final class EmailAddress {

    static final int MAX_LENGTH = 320;
    static final int MAX_LOCAL_LENGTH = 64;
    static final int MAX_DOMAIN_LENGTH = 253;
    static final int MAX_LABEL_LENGTH = 63;

    /** RFC 5322 atext, without the dot (dots are checked separately). */
    private static final String ATEXT = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&'*+/=?^_`{|}~-";

    private EmailAddress() {
    }

    /** What is wrong with {@code address}, or empty if it is acceptable. {@code address} is not null. */
    static Optional<String> problem(String address) {
        for (int i = 0; i < address.length(); i++) {
            char c = address.charAt(i);
            if (c == '\r' || c == '\n') {
                return Optional.of("must not contain CR or LF");
            }
            if (Character.isISOControl(c) || Character.isWhitespace(c) || Character.isSpaceChar(c)) {
                return Optional.of("must not contain whitespace or control characters");
            }
        }
        if (address.length() > MAX_LENGTH) {
            return Optional.of("must be at most " + MAX_LENGTH + " characters");
        }
        int at = address.lastIndexOf('@');
        if (at < 0 || address.indexOf('@') != at) {
            return Optional.of("must be an address of the form name@example.com");
        }
        String local = address.substring(0, at);
        String domain = address.substring(at + 1);
        return localPartProblem(local).or(() -> domainProblem(domain));
    }

    private static Optional<String> localPartProblem(String local) {
        if (local.isEmpty() || local.length() > MAX_LOCAL_LENGTH) {
            return Optional.of("must have 1 to " + MAX_LOCAL_LENGTH + " characters before the @");
        }
        if (local.startsWith(".") || local.endsWith(".") || local.contains("..")) {
            return Optional.of("must not start or end with a dot or contain two dots in a row before the @");
        }
        for (int i = 0; i < local.length(); i++) {
            char c = local.charAt(i);
            if (c != '.' && ATEXT.indexOf(c) < 0) {
                return Optional.of("contains a character that is not allowed before the @");
            }
        }
        return Optional.empty();
    }

    private static Optional<String> domainProblem(String domain) {
        if (domain.isEmpty() || domain.length() > MAX_DOMAIN_LENGTH) {
            return Optional.of("must have a domain of 1 to " + MAX_DOMAIN_LENGTH + " characters after the @");
        }
        String[] labels = domain.split("\\.", -1);
        if (labels.length < 2) {
            return Optional.of("must have a domain with a dot, e.g. example.com");
        }
        for (String label : labels) {
            if (label.isEmpty() || label.length() > MAX_LABEL_LENGTH) {
                return Optional.of("must have domain labels of 1 to " + MAX_LABEL_LENGTH + " characters");
            }
            if (label.startsWith("-") || label.endsWith("-")) {
                return Optional.of("must not have a domain label that starts or ends with a hyphen");
            }
            for (int i = 0; i < label.length(); i++) {
                char c = label.charAt(i);
                boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
                if (!ok) {
                    return Optional.of("contains a character that is not allowed in the domain");
                }
            }
        }
        if (labels[labels.length - 1].chars().allMatch(Character::isDigit)) {
            return Optional.of("must end in a top-level domain, not a number");
        }
        return Optional.empty();
    }
}
