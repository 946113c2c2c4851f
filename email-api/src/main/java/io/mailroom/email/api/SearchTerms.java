package io.mailroom.email.api;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The search terms an email is kept under in the history ({@code outbox_effect_term}), so support
 * finds it by recipient, recipient domain and template for as long as the history keeps it, after
 * the queued payload is gone. The SQL function {@code enqueue_email} writes the same terms
 * (EnqueueEmailConformanceTest compares them).
 *
 * <p>An address is kept as the suppression list normalises it: lower case. Addresses are printable
 * ASCII here ({@code MailboxRules}: an internationalised domain is given in punycode), so lower-casing
 * is the whole of it.
 */
public final class SearchTerms {

    /** The recipient's address: {@code to:ann@example.com}. */
    public static final String TO = "to";
    /** The recipient's domain: {@code domain:example.com}. */
    public static final String DOMAIN = "domain";
    /** The template: {@code template:receipt}. */
    public static final String TEMPLATE = "template";

    private SearchTerms() {
    }

    /** The terms of {@code email}: its recipient, the recipient's domain, its template. */
    public static List<String> of(OutgoingEmail email) {
        List<String> terms = new ArrayList<>(3);
        String address = normalize(email.to().address());
        terms.add(TO + ":" + address);
        terms.add(DOMAIN + ":" + address.substring(address.lastIndexOf('@') + 1));
        terms.add(TEMPLATE + ":" + email.template());
        return terms;
    }

    /** An address as terms hold it: trimmed, lower case. */
    public static String normalize(String address) {
        return address.strip().toLowerCase(Locale.ROOT);
    }

    /** {@code name:value}. */
    public static String term(String name, String value) {
        return name + ":" + value;
    }
}
