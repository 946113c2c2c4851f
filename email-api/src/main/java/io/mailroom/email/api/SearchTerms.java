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
    /** A tag: {@code tag:category=invoice}. */
    public static final String TAG = "tag";

    private SearchTerms() {
    }

    /**
     * The terms of {@code email}: its recipient, the recipient's domain, its template; with several
     * recipients, a {@code to:} term for every To, Cc and Bcc address (support finds an email by any
     * of them) and a {@code domain:} term for each of their domains, and a {@code tag:name=value} term
     * for each tag. An email with one recipient and no tags has exactly the three terms it always had.
     */
    public static List<String> of(OutgoingEmail email) {
        java.util.Set<String> addresses = new java.util.LinkedHashSet<>();
        for (List<OutgoingEmail.Mailbox> list : List.of(email.toList(), email.cc(), email.bcc())) {
            list.forEach(m -> addresses.add(normalize(m.address())));
        }
        java.util.Set<String> terms = new java.util.LinkedHashSet<>();
        for (String address : addresses) {
            terms.add(TO + ":" + address);
        }
        for (String address : addresses) {
            terms.add(DOMAIN + ":" + address.substring(address.lastIndexOf('@') + 1));
        }
        terms.add(TEMPLATE + ":" + email.template());
        email.tags().forEach((name, value) -> terms.add(tag(name, value)));
        return new ArrayList<>(terms);
    }

    /** {@code tag:name=value}. */
    public static String tag(String name, String value) {
        return TAG + ":" + name + "=" + value;
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
