package io.mailroom.support;

import io.mailroom.delivery.Addresses;
import io.mailroom.mailbox.TagRules;

import java.net.IDN;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * A search of every email the history keeps (issue 26): any combination of recipient (exact
 * address, normalised as the suppression list does), recipient domain, topic, template, status,
 * delivery state, idempotency key (exact or prefix), the provider's message id, words of the last
 * error, the entity it is about, and when it was queued; newest first, a page at a time. Build it
 * from raw request values with {@link #parse}, which names the parameter of any bad value.
 *
 * @param since  queued at or after
 * @param until  queued before
 * @param cursor where the previous page ended (queued at, key), or null for the first page
 * @param tag    a tag the email was sent with, {@code name=value} (its {@code tag:} search term), or null
 */
public record EmailSearch(String recipient, String domain, String topic, String template, EmailStatus status,
                          String delivery, String key, String keyPrefix, String providerMessageId, String error,
                          About about, Instant since, Instant until, Cursor cursor, int limit, String tag) {

    /** The parameters that make a list request a search (beside status, times, cursor and limit). */
    public static final Set<String> FILTERS = Set.of(SupportParams.RECIPIENT, SupportParams.DOMAIN, SupportParams.TOPIC,
            SupportParams.TEMPLATE, SupportParams.DELIVERY, SupportParams.KEY, SupportParams.KEY_PREFIX,
            SupportParams.PROVIDER_MESSAGE_ID, SupportParams.ERROR, SupportParams.ABOUT, SupportParams.TAG);

    /** Every parameter a search reads. */
    public static final Set<String> PARAMETERS;

    static {
        var all = new java.util.HashSet<>(FILTERS);
        all.addAll(Set.of(SupportParams.STATUS, SupportParams.SINCE, SupportParams.UNTIL, SupportParams.OLDER_THAN,
                SupportParams.CURSOR, SupportParams.LIMIT));
        PARAMETERS = Set.copyOf(all);
    }

    static final Set<String> DELIVERY_STATES = Set.of("delivered", "deferred", "bounced", "complained");
    private static final Pattern NAME = Pattern.compile("^[a-z0-9][a-z0-9_.-]{0,127}$");
    private static final int MAX_TEXT = 200;

    public EmailSearch {
        if (since != null && until != null && !since.isBefore(until)) {
            throw new InvalidParameterException(SupportParams.SINCE, "since must be before until");
        }
        if (limit < 1 || limit > SupportService.MAX_PAGE_SIZE) {
            throw new InvalidParameterException(SupportParams.LIMIT, "limit must be between 1 and " + SupportService.MAX_PAGE_SIZE);
        }
    }

    /** A search without a tag. */
    public EmailSearch(String recipient, String domain, String topic, String template, EmailStatus status,
                       String delivery, String key, String keyPrefix, String providerMessageId, String error,
                       About about, Instant since, Instant until, Cursor cursor, int limit) {
        this(recipient, domain, topic, template, status, delivery, key, keyPrefix, providerMessageId, error, about, since,
                until, cursor, limit, null);
    }

    /**
     * Whether anything narrows the search beyond status and time (a search, not a status list).
     * Scheduled is one: a status list reads the stored status, which is pending for a scheduled email.
     */
    public boolean hasFilter() {
        return status == EmailStatus.SCHEDULED || tag != null || recipient != null || domain != null || topic != null || template != null || delivery != null || key != null
                || keyPrefix != null || providerMessageId != null || error != null || about != null;
    }

    /** The same search continuing at {@code next}. */
    public EmailSearch from(Cursor next) {
        return new EmailSearch(recipient, domain, topic, template, status, delivery, key, keyPrefix, providerMessageId,
                error, about, since, until, next, limit, tag);
    }

    /** The same search, one page of {@code size} starting after {@code next} (null: from the start). */
    public EmailSearch page(Cursor next, int size) {
        return new EmailSearch(recipient, domain, topic, template, status, delivery, key, keyPrefix, providerMessageId,
                error, about, since, until, next, size, tag);
    }

    /** The same search restricted to one key (nothing matches when the search names another key). */
    EmailSearch only(String k) {
        return new EmailSearch(recipient, domain, topic, template, status, delivery, k, keyPrefix, providerMessageId,
                error, about, since, until, null, 1, tag);
    }

    /** The search as request parameters (what a link to it carries), without the cursor. */
    public Map<String, String> parameters() {
        Map<String, String> out = new LinkedHashMap<>();
        put(out, SupportParams.RECIPIENT, recipient);
        put(out, SupportParams.DOMAIN, domain);
        put(out, SupportParams.TOPIC, topic);
        put(out, SupportParams.TEMPLATE, template);
        put(out, SupportParams.STATUS, status == null ? null : status.code());
        put(out, SupportParams.DELIVERY, delivery);
        put(out, SupportParams.KEY, key);
        put(out, SupportParams.KEY_PREFIX, keyPrefix);
        put(out, SupportParams.PROVIDER_MESSAGE_ID, providerMessageId);
        put(out, SupportParams.ERROR, error);
        put(out, SupportParams.ABOUT, about == null ? null : about.type() + ":" + about.id());
        put(out, SupportParams.TAG, tag);
        put(out, SupportParams.SINCE, since == null ? null : since.toString());
        put(out, SupportParams.UNTIL, until == null ? null : until.toString());
        if (limit != SupportService.DEFAULT_PAGE_SIZE) {
            out.put(SupportParams.LIMIT, Integer.toString(limit));
        }
        return out;
    }

    private static void put(Map<String, String> out, String name, String value) {
        if (value != null) {
            out.put(name, value);
        }
    }

    /**
     * A search from raw request values ({@code get} returns null for a parameter not given);
     * {@code olderThan} becomes "queued before now minus it".
     */
    public static EmailSearch parse(java.util.function.Function<String, String> get, Instant now) {
        String status = get.apply(SupportParams.STATUS);
        Instant until = Params.time(SupportParams.UNTIL, get.apply(SupportParams.UNTIL), now);
        Duration older = Params.duration(SupportParams.OLDER_THAN, get.apply(SupportParams.OLDER_THAN));
        if (older != null) {
            Instant cut = now.minus(older);
            until = until == null || cut.isBefore(until) ? cut : until;
        }
        return new EmailSearch(
                address(get.apply(SupportParams.RECIPIENT)),
                domain(get.apply(SupportParams.DOMAIN)),
                name(SupportParams.TOPIC, get.apply(SupportParams.TOPIC)),
                name(SupportParams.TEMPLATE, get.apply(SupportParams.TEMPLATE)),
                status == null || status.isBlank() ? null : Params.status(SupportParams.STATUS, status),
                delivery(get.apply(SupportParams.DELIVERY)),
                optional(get.apply(SupportParams.KEY)) == null ? null : Params.key(SupportParams.KEY, get.apply(SupportParams.KEY)),
                text(SupportParams.KEY_PREFIX, get.apply(SupportParams.KEY_PREFIX)),
                text(SupportParams.PROVIDER_MESSAGE_ID, get.apply(SupportParams.PROVIDER_MESSAGE_ID)),
                text(SupportParams.ERROR, get.apply(SupportParams.ERROR)),
                optional(get.apply(SupportParams.ABOUT)) == null ? null : Params.about(SupportParams.ABOUT, get.apply(SupportParams.ABOUT)),
                Params.time(SupportParams.SINCE, get.apply(SupportParams.SINCE), now),
                until,
                Params.cursor(SupportParams.CURSOR, get.apply(SupportParams.CURSOR)),
                Params.limit(SupportParams.LIMIT, get.apply(SupportParams.LIMIT)),
                tag(get.apply(SupportParams.TAG)));
    }

    /** {@code name=value} as the email API allows a tag ({@link TagRules}). */
    private static String tag(String raw) {
        String v = optional(raw);
        if (v == null) {
            return null;
        }
        int eq = v.indexOf('=');
        if (eq < 0 || TagRules.nameProblem(v.substring(0, eq)).isPresent() || TagRules.valueProblem(v.substring(eq + 1)).isPresent()) {
            throw new InvalidParameterException(SupportParams.TAG, SupportParams.TAG
                    + " must be name=value as the email was tagged, e.g. category=invoice (a name of A-Z, a-z, 0-9, '_', '-';"
                    + " a value of those and '.', ':', '@', '/')");
        }
        return v;
    }

    private static String optional(String raw) {
        return raw == null || raw.isBlank() ? null : raw.strip();
    }

    private static String address(String raw) {
        String v = optional(raw);
        if (v == null) {
            return null;
        }
        try {
            return Addresses.normalize(v);
        } catch (IllegalArgumentException e) {
            throw new InvalidParameterException(SupportParams.RECIPIENT, SupportParams.RECIPIENT
                    + " must be an email address such as ann@example.com (for a whole domain use domain=example.com)");
        }
    }

    private static String domain(String raw) {
        String v = optional(raw);
        if (v == null) {
            return null;
        }
        if (v.startsWith("@")) {
            v = v.substring(1);
        }
        String ascii;
        try {
            ascii = IDN.toASCII(v, IDN.ALLOW_UNASSIGNED).toLowerCase(Locale.ROOT);
        } catch (IllegalArgumentException e) {
            ascii = "";
        }
        if (!ascii.matches("^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+$")) {
            throw new InvalidParameterException(SupportParams.DOMAIN, SupportParams.DOMAIN
                    + " must be a domain name such as example.com");
        }
        return ascii;
    }

    private static String name(String parameter, String raw) {
        String v = optional(raw);
        if (v == null) {
            return null;
        }
        if (!NAME.matcher(v).matches()) {
            throw new InvalidParameterException(parameter, parameter
                    + " must be 1-128 of a-z, 0-9, '_', '.', '-', e.g. email.password_reset or receipt");
        }
        return v;
    }

    private static String delivery(String raw) {
        String v = optional(raw);
        if (v == null) {
            return null;
        }
        String s = v.toLowerCase(Locale.ROOT);
        if (!DELIVERY_STATES.contains(s)) {
            throw new InvalidParameterException(SupportParams.DELIVERY, SupportParams.DELIVERY
                    + " must be one of delivered, deferred, bounced, complained");
        }
        return s;
    }

    private static String text(String parameter, String raw) {
        String v = optional(raw);
        if (v == null) {
            return null;
        }
        if (v.length() > MAX_TEXT) {
            throw new InvalidParameterException(parameter, parameter + " must be at most " + MAX_TEXT + " characters");
        }
        if (v.chars().anyMatch(Character::isISOControl)) {
            throw new InvalidParameterException(parameter, parameter + " must not contain control characters");
        }
        return v;
    }
}
