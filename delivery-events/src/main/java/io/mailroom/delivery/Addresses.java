package io.mailroom.delivery;

import java.net.IDN;
import java.util.Locale;

/**
 * The one normalized form of an email address used by the suppression list and delivery events:
 * trimmed, angle brackets and a display name dropped, lower case, the domain in its ASCII (IDNA)
 * form. Mailbox providers treat local parts case-insensitively in practice, and a suppression that
 * missed {@code Ann@Example.com} because it was stored as {@code ann@example.com} would defeat its
 * purpose.
 */
public final class Addresses {

    private Addresses() {
    }

    /**
     * @return the normalized address
     * @throws IllegalArgumentException naming the address when it has no local part or domain
     */
    public static String normalize(String address) {
        if (address == null) {
            throw new IllegalArgumentException("address is required");
        }
        String a = address.strip();
        int open = a.lastIndexOf('<');
        int close = a.lastIndexOf('>');
        if (open >= 0 && close > open) {
            a = a.substring(open + 1, close).strip();
        }
        int at = a.lastIndexOf('@');
        if (at <= 0 || at == a.length() - 1 || a.chars().anyMatch(c -> c <= ' ' || c == 127)) {
            throw new IllegalArgumentException("not an email address: '" + address + "'");
        }
        String local = a.substring(0, at).toLowerCase(Locale.ROOT);
        String domain;
        try {
            domain = IDN.toASCII(a.substring(at + 1), IDN.ALLOW_UNASSIGNED).toLowerCase(Locale.ROOT);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("not an email address (bad domain): '" + address + "'", e);
        }
        return local + "@" + domain;
    }

    /**
     * {@code a***@example.com}, as the dispatcher's log lines show a recipient ({@code EmailAddress.masked}):
     * enough for an operator to tell addresses apart in a log, no more. Something that is not an
     * address at all shows as {@code ***}.
     */
    public static String masked(String address) {
        if (address == null) {
            return "***";
        }
        String a = address.strip();
        int at = a.lastIndexOf('@');
        if (at <= 0 || at == a.length() - 1) {
            return "***";
        }
        return a.charAt(0) + "***@" + a.substring(at + 1);
    }
}
