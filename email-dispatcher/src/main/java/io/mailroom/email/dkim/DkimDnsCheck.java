package io.mailroom.email.dkim;

import io.mailroom.outbox.InvalidSettingException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;

/**
 * At start, compares each configured key with the one its selector publishes
 * ({@code <selector>._domainkey.<domain>} TXT), because a key that differs fails every signature,
 * and mail that fails DKIM fails DMARC: Gmail and Microsoft then junk or refuse it, silently from
 * Mailroom's point of view (the relay accepted it).
 *
 * <p>A mismatch refuses start ({@link DkimSettings.DnsCheck#REFUSE}, the default) or logs a warning
 * ({@code WARN}). No record, or no answer from DNS (a network without DNS, a resolver that is down),
 * proves nothing about the key: one log line says so and start goes on.
 */
public final class DkimDnsCheck {

    /** What the lookup found for one key. */
    public enum Outcome { MATCH, MISMATCH, NO_RECORD, UNREACHABLE }

    private static final Logger log = LoggerFactory.getLogger(DkimDnsCheck.class);

    private final TxtLookup dns;

    public DkimDnsCheck(TxtLookup dns) {
        this.dns = dns;
    }

    /**
     * Checks every key.
     *
     * @throws InvalidSettingException naming {@link DkimSettings#SETTING} when a published key differs
     *                                 and the settings say {@code refuse}
     */
    public List<Outcome> check(DkimSettings settings) {
        List<Outcome> outcomes = new ArrayList<>();
        if (settings.dnsCheck() == DkimSettings.DnsCheck.OFF) {
            log.info("DKIM: the published keys are not checked ({}=off)", DkimSettings.DNS_CHECK_SETTING);
            return outcomes;
        }
        for (DkimKey key : settings.keys()) {
            Outcome outcome = check(key);
            outcomes.add(outcome);
            if (outcome == Outcome.MISMATCH) {
                String message = DkimSettings.SETTING + ": the key " + key.source() + " is not the one published at "
                        + key.recordName() + "; receivers will fail every signature with it. Publish: " + key.recordName()
                        + " TXT \"" + key.txtRecord() + "\"";
                if (settings.dnsCheck() == DkimSettings.DnsCheck.REFUSE) {
                    throw new InvalidSettingException(DkimSettings.SETTING, message + " (or set " + DkimSettings.DNS_CHECK_SETTING
                            + "=warn to start anyway)");
                }
                log.warn("{}", message);
            }
        }
        return outcomes;
    }

    Outcome check(DkimKey key) {
        List<String> records;
        try {
            records = dns.txt(key.recordName());
        } catch (IOException | RuntimeException e) {
            log.info("DKIM: DNS did not answer for {}, so its key was not compared with {} ({})", key.recordName(), key.source(),
                    e.getMessage());
            return Outcome.UNREACHABLE;
        }
        String expected = key.publishedKey();
        List<String> published = new ArrayList<>();
        for (String record : records) {
            String p = tag(record, "p");
            String v = tag(record, "v");
            if (p != null && (v == null || v.equals("DKIM1"))) {
                published.add(p.replaceAll("\\s+", ""));
            }
        }
        if (published.isEmpty()) {
            log.info("DKIM: no key record at {}, so {} was not compared with a published key", key.recordName(), key.source());
            return Outcome.NO_RECORD;
        }
        for (String p : published) {
            if (p.equals(expected) || sameBytes(p, expected)) {
                log.info("DKIM: the key at {} is {}'s", key.recordName(), key.source());
                return Outcome.MATCH;
            }
        }
        return Outcome.MISMATCH;
    }

    /** A tag's value in a {@code tag=value; tag=value} list (RFC 6376 §3.2), or null. */
    static String tag(String record, String name) {
        for (String part : record.split(";")) {
            int eq = part.indexOf('=');
            if (eq > 0 && part.substring(0, eq).strip().toLowerCase(Locale.ROOT).equals(name)) {
                return part.substring(eq + 1).strip();
            }
        }
        return null;
    }

    private static boolean sameBytes(String a, String b) {
        try {
            return java.util.Arrays.equals(Base64.getDecoder().decode(a), Base64.getDecoder().decode(b));
        } catch (IllegalArgumentException e) {
            return false;
        }
    }
}
