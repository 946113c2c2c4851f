package io.mailroom.email.service;

import io.mailroom.email.EmailAddress;
import io.mailroom.email.config.EmailTopics;
import io.mailroom.email.dkim.DkimAlgorithm;
import io.mailroom.email.dkim.DkimKey;
import io.mailroom.email.dkim.DkimKeys;
import io.mailroom.email.dkim.DkimSettings;
import io.mailroom.outbox.InvalidSettingException;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * DKIM as the service reads it from its environment:
 * <ul>
 *   <li>{@code MAILROOM_DKIM_KEYS}: entries {@code domain:selector:algorithm:keyfile}, separated by
 *       commas or whitespace; the algorithm {@code rsa-sha256} (or {@code rsa}) or
 *       {@code ed25519-sha256} (or {@code ed25519}); the key file a PKCS#8 PEM, or a PKCS#12
 *       keystore ({@code .p12}/{@code .pfx}, optionally {@code #alias}). Unset: mail goes unsigned.</li>
 *   <li>{@code MAILROOM_DKIM_KEYSTORE_PASSWORD}: the password of the keystores named there.</li>
 *   <li>{@code MAILROOM_DKIM_DNS_CHECK}: {@code refuse} (default), {@code warn} or {@code off}, what a
 *       published key that differs from the configured one does at start.</li>
 * </ul>
 * Every key is read here, so that one that cannot be used refuses start naming its file.
 */
final class DkimEnv {

    static final String KEYSTORE_PASSWORD = "MAILROOM_DKIM_KEYSTORE_PASSWORD";

    private static final Pattern DOMAIN = Pattern.compile("[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+");
    private static final Pattern SELECTOR = Pattern.compile("[a-z0-9]([a-z0-9_-]{0,61}[a-z0-9])?(\\.[a-z0-9]([a-z0-9_-]{0,61}[a-z0-9])?)*");

    private DkimEnv() {
    }

    /** The settings, or null when {@code MAILROOM_DKIM_KEYS} is unset. */
    static DkimSettings dkim(Settings s) {
        String setting = DkimSettings.SETTING;
        String list = s.string(setting);
        String password = s.secret(KEYSTORE_PASSWORD);
        DkimSettings.DnsCheck check = s.enumValue(DkimSettings.DNS_CHECK_SETTING, DkimSettings.DnsCheck.class, DkimSettings.DEFAULT_DNS_CHECK);
        if (list == null) {
            if (password != null || s.string(DkimSettings.DNS_CHECK_SETTING) != null) {
                String stray = password != null ? KEYSTORE_PASSWORD : DkimSettings.DNS_CHECK_SETTING;
                throw new InvalidSettingException(stray, stray + " is set but " + setting + " is not");
            }
            return null;
        }
        List<DkimKey> keys = new ArrayList<>();
        for (String entry : list.split("[,\\s]+")) {
            if (entry.isEmpty()) {
                continue;
            }
            String[] parts = entry.split(":", 4);
            if (parts.length != 4 || parts[3].isEmpty()) {
                throw new InvalidSettingException(setting, setting + " entries are domain:selector:algorithm:keyfile"
                        + " (e.g. shop.example:mr2026:rsa-sha256:/etc/mailroom/dkim/shop.pem), got '" + entry + "'");
            }
            String domain = parts[0].toLowerCase(Locale.ROOT);
            String selector = parts[1].toLowerCase(Locale.ROOT);
            if (!DOMAIN.matcher(domain).matches()) {
                throw new InvalidSettingException(setting, setting + ": '" + parts[0] + "' in '" + entry + "' is not a domain name");
            }
            if (!SELECTOR.matcher(selector).matches()) {
                throw new InvalidSettingException(setting, setting + ": '" + parts[1] + "' in '" + entry + "' is not a selector"
                        + " (letters, digits, '-', '_', dots between labels)");
            }
            DkimAlgorithm algorithm = DkimAlgorithm.parse(parts[2]);
            if (algorithm == null) {
                throw new InvalidSettingException(setting, setting + ": the algorithm in '" + entry
                        + "' must be rsa-sha256 or ed25519-sha256, got '" + parts[2] + "'");
            }
            keys.add(DkimKeys.load(setting, domain, selector, algorithm, parts[3], password));
        }
        return new DkimSettings(keys, check);
    }

    /**
     * Every sender whose mail goes out over SMTP (the default From when SMTP is the default
     * transport, and each topic's own From on SMTP) must have a key: with DKIM on, mail of a domain
     * without one would go out unsigned and fail DMARC, unnoticed.
     */
    static void requireKeyForEverySender(DkimSettings dkim, EmailAddress defaultFrom, String defaultTransport, EmailTopics topics) {
        if (dkim == null) {
            return;
        }
        if ("smtp".equals(defaultTransport) && defaultFrom != null) {
            requireKey(dkim, defaultFrom, "the default From (MAILROOM_MAIL_FROM or MAILROOM_SMTP_FROM)");
        }
        for (EmailTopics.Route route : topics.routes().values()) {
            boolean smtp = "smtp".equals(route.transportOr(defaultTransport));
            EmailAddress from = route.from() != null ? route.from() : defaultFrom;
            if (smtp && from != null) {
                requireKey(dkim, from, "the From of topic " + route.topic());
            }
        }
    }

    private static void requireKey(DkimSettings dkim, EmailAddress from, String whose) {
        if (dkim.keysFor(from.domain()).isEmpty()) {
            throw new InvalidSettingException(DkimSettings.SETTING, DkimSettings.SETTING + " has no key for " + from.domain() + ", "
                    + whose + " (" + from.address() + "): its mail would go out unsigned; add "
                    + from.domain() + ":<selector>:rsa-sha256:<keyfile>");
        }
    }
}
