package io.mailroom.email.dkim;

import io.mailroom.outbox.InvalidSettingException;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Which keys sign which sender's mail ({@code MAILROOM_DKIM_KEYS}) and what a start-up DNS check
 * that finds another key than the configured one does ({@code MAILROOM_DKIM_DNS_CHECK}).
 *
 * <p>An email is signed with the keys of its From domain, or, if that has none, of the closest
 * parent domain that has (From {@code shop@mail.shop.example} with {@code d=shop.example} still
 * aligns under DMARC's relaxed alignment). A domain may have one RSA and one Ed25519 key: it is
 * then signed twice, as RFC 8463 §6 suggests while receivers that ignore Ed25519 remain.
 *
 * @param keys     at least one; no domain with two keys of one algorithm
 * @param dnsCheck what a published key that differs from the configured one does at start
 */
public record DkimSettings(List<DkimKey> keys, DnsCheck dnsCheck) {

    public static final String SETTING = "MAILROOM_DKIM_KEYS";
    public static final String DNS_CHECK_SETTING = "MAILROOM_DKIM_DNS_CHECK";
    public static final DnsCheck DEFAULT_DNS_CHECK = DnsCheck.REFUSE;

    /** What a mismatch between the published and the configured key does at start (no record, or no DNS, is only logged). */
    public enum DnsCheck {
        /** Refuse to start: every email would fail DKIM, and so DMARC. */
        REFUSE,
        /** Log a warning and start (e.g. while a new key's record propagates). */
        WARN,
        /** Do not look the records up. */
        OFF
    }

    public DkimSettings {
        if (keys == null || keys.isEmpty()) {
            throw new InvalidSettingException(SETTING, SETTING + " must name at least one key");
        }
        keys = List.copyOf(keys);
        if (dnsCheck == null) {
            throw new InvalidSettingException(DNS_CHECK_SETTING, DNS_CHECK_SETTING + " must be set");
        }
        Set<String> seen = new HashSet<>();
        for (DkimKey k : keys) {
            if (!seen.add(k.domain() + " " + k.algorithm())) {
                throw new InvalidSettingException(SETTING, SETTING + " has two " + k.algorithm().tag() + " keys for " + k.domain()
                        + "; a domain has at most one key per algorithm");
            }
        }
    }

    /** The keys that sign mail from {@code fromDomain}: its own, else its closest parent's; empty when none. */
    public List<DkimKey> keysFor(String fromDomain) {
        String d = fromDomain.toLowerCase(Locale.ROOT);
        while (true) {
            List<DkimKey> found = new ArrayList<>(2);
            for (DkimKey k : keys) {
                if (k.domain().equals(d)) {
                    found.add(k);
                }
            }
            if (!found.isEmpty()) {
                return found;
            }
            int dot = d.indexOf('.');
            if (dot < 0 || d.indexOf('.', dot + 1) < 0) {
                return List.of(); // never sign with a public suffix-like one-label domain
            }
            d = d.substring(dot + 1);
        }
    }

    @Override
    public String toString() {
        return "DkimSettings[keys=" + keys + ", dnsCheck=" + dnsCheck.name().toLowerCase(Locale.ROOT) + "]";
    }
}
