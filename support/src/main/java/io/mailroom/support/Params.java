package io.mailroom.support;

import io.mailroom.outbox.NewMessage;

import io.mailroom.db.sql.PgValues;
import io.mailroom.outbox.Durations;
import io.mailroom.outbox.InvalidSettingException;

import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.regex.Pattern;

/**
 * Turns raw request values (query parameters, form fields, CLI options) into typed ones, or throws
 * {@link InvalidParameterException} naming the parameter. Everything a person can type passes
 * through here before it reaches SQL or a page; patterns are strict allow-lists.
 */
public final class Params {

    /** Order numbers: positive whole numbers that fit a bigint. */
    static final Pattern ORDER_ID = Pattern.compile("^[1-9][0-9]{0,18}$");
    /**
     * Idempotency keys as support addresses them: letters, digits and {@code . _ : @ + -}, starting
     * with a letter or digit, at most 200 characters ({@code email-order-102-resend-1}).
     */
    public static final Pattern KEY = Pattern.compile("^[A-Za-z0-9][A-Za-z0-9._:@+-]{0,199}$");
    /** A pause scope: {@code *} (everything) or a topic. */
    static final Pattern SCOPE = Pattern.compile("^(\\*|[a-z0-9][a-z0-9._-]{0,199})$");

    public static final int MAX_REASON_LENGTH = 500;
    public static final int MAX_PROVIDER_ID_LENGTH = 500;
    /** Longest look-back or "older than" accepted. */
    public static final Duration MAX_DURATION = Duration.ofDays(3660);

    /** A parameter name shown back in an error: a plain word; anything else is called "query". */
    private static final Pattern PARAMETER_NAME = Pattern.compile("^[A-Za-z][A-Za-z0-9_]{0,39}$");

    private Params() {
    }

    /**
     * Refuses a query parameter the route does not read, naming it and listing the ones it
     * accepts: an unknown filter silently ignored answers more than was asked for, as if it had
     * been applied ({@code GET /api/emails?recipient=...} answered every email).
     *
     * @param given    the names in the query string
     * @param accepted the names the route reads; empty for a route that takes none
     */
    public static void onlyKnown(java.util.Collection<String> given, java.util.Set<String> accepted) {
        for (String name : given) {
            if (!accepted.contains(name)) {
                String shown = PARAMETER_NAME.matcher(name).matches() ? name : "query";
                throw new InvalidParameterException(shown, "unknown parameter " + shown + (accepted.isEmpty()
                        ? "; this route takes no query parameters"
                        : "; accepted: " + String.join(", ", new java.util.TreeSet<>(accepted))));
            }
        }
    }

    /**
     * The type of a business entity ({@code order}, {@code user}, {@code invoice}): what the enqueue
     * API accepts, text without control characters, at most {@value NewMessage#MAX_KEY_LENGTH} characters.
     */
    public static String aboutType(String parameter, String raw) {
        return entityPart(parameter, raw, "an entity type such as order, user or invoice");
    }

    /** The id of a business entity ({@code 102}, {@code 2026-17}), as stored. */
    public static String aboutId(String parameter, String raw) {
        return entityPart(parameter, raw, "an entity id such as 102 or 2026-17");
    }

    private static String entityPart(String parameter, String raw, String what) {
        String v = required(parameter, raw);
        if (v.length() > NewMessage.MAX_KEY_LENGTH) {
            throw new InvalidParameterException(parameter, parameter + " must be " + what + " of at most "
                    + NewMessage.MAX_KEY_LENGTH + " characters, got " + v.length());
        }
        if (v.chars().anyMatch(Character::isISOControl)) {
            throw new InvalidParameterException(parameter, parameter + " must be " + what + " without control characters");
        }
        return v;
    }

    /**
     * {@code TYPE:ID} as the CLI takes it ({@code user:42}, {@code invoice:2026-17}): split at the first colon.
     */
    public static About about(String parameter, String raw) {
        String v = required(parameter, raw);
        int colon = v.indexOf(':');
        if (colon <= 0 || colon == v.length() - 1) {
            throw new InvalidParameterException(parameter, parameter + " must be TYPE:ID, e.g. order:102 or user:42");
        }
        return new About(aboutType(parameter, v.substring(0, colon)), aboutId(parameter, v.substring(colon + 1)));
    }

    /** An order number, e.g. {@code 102}, as the string stored in {@code aggregate_id}. */
    public static String orderId(String parameter, String raw) {
        String v = required(parameter, raw);
        if (!ORDER_ID.matcher(v).matches()) {
            throw new InvalidParameterException(parameter, parameter + " must be an order number: a positive whole number such as 102");
        }
        try {
            return Long.toString(Long.parseLong(v));
        } catch (NumberFormatException e) {
            // 19 digits can still exceed a bigint
            throw new InvalidParameterException(parameter, parameter + " is too large for an order number");
        }
    }

    public static String key(String parameter, String raw) {
        String v = required(parameter, raw);
        if (!KEY.matcher(v).matches()) {
            throw new InvalidParameterException(parameter, parameter
                    + " must be an email key such as email-order-102: letters, digits and . _ : @ + - only, at most 200 characters");
        }
        return v;
    }

    public static EmailStatus status(String parameter, String raw) {
        String v = required(parameter, raw);
        EmailStatus s = EmailStatus.parse(v);
        if (s == null || s == EmailStatus.SENDING) {
            throw new InvalidParameterException(parameter, parameter + " must be one of pending, scheduled, failed, review, sent, cancelled, closed");
        }
        return s;
    }

    /**
     * A point in time: an ISO-8601 instant ({@code 2025-01-31T09:15:00Z}), a date-time with an
     * offset ({@code 2025-01-31T10:15:00+01:00}), or a time ago ({@code 30m}, {@code 1h}, {@code 2d}).
     * Null or blank means "not given".
     */
    public static Instant time(String parameter, String raw, Instant now) {
        if (raw == null || raw.isBlank()) {
            return null;
        }
        String v = raw.trim();
        if (v.length() > 40) {
            throw badTime(parameter);
        }
        Duration ago = parseDuration(v);
        if (ago != null) {
            checkDuration(parameter, ago);
            return now.minus(ago);
        }
        Instant at;
        try {
            at = Instant.parse(v);
        } catch (DateTimeException e) {
            try {
                at = OffsetDateTime.parse(v).toInstant();
            } catch (DateTimeException e2) {
                throw badTime(parameter);
            }
        }
        // before SQL: the query would fail with a data exception (22008), not answer
        PgValues.timeProblem(at).ifPresent(problem -> {
            throw new InvalidParameterException(parameter, parameter + " " + problem);
        });
        return at;
    }

    /**
     * A duration as {@link Durations} reads it: {@code 90s}, {@code 30m}, {@code 1h}, {@code 2d}, {@code 1w}, or
     * ISO-8601 ({@code PT30M}). Null or blank: not given.
     */
    public static Duration duration(String parameter, String raw) {
        if (raw == null || raw.isBlank()) {
            return null;
        }
        String v = raw.trim();
        Duration d = v.length() <= 40 ? parseDuration(v) : null;
        if (d == null) {
            throw new InvalidParameterException(parameter, parameter + " must be a duration such as 30m, 1h, 2d or PT1H");
        }
        checkDuration(parameter, d);
        return d;
    }

    /** A page size, {@value SupportService#DEFAULT_PAGE_SIZE} when not given. */
    public static int limit(String parameter, String raw) {
        if (raw == null || raw.isBlank()) {
            return SupportService.DEFAULT_PAGE_SIZE;
        }
        String v = raw.trim();
        if (!v.matches("^[0-9]{1,4}$")) {
            throw badLimit(parameter);
        }
        int n = Integer.parseInt(v);
        if (n < 1 || n > SupportService.MAX_PAGE_SIZE) {
            throw badLimit(parameter);
        }
        return n;
    }

    /** A positive row id (keyset paging by id), or null when not given. */
    public static Long optionalId(String parameter, String raw) {
        if (raw == null || raw.isBlank()) {
            return null;
        }
        String v = raw.trim();
        if (!v.matches("^[0-9]{1,18}$") || Long.parseLong(v) < 1) {
            throw new InvalidParameterException(parameter, parameter + " must be a positive whole number");
        }
        return Long.parseLong(v);
    }

    /** A page cursor, or null when not given. */
    public static Cursor cursor(String parameter, String raw) {
        if (raw == null || raw.isBlank()) {
            return null;
        }
        return Cursor.decode(parameter, raw.trim());
    }

    /** The filter of a list request, every part validated and named. */
    public static EmailFilter filter(String status, String since, String until, String olderThan, String cursor,
                                     String limit, Instant now) {
        EmailStatus s = status(SupportParams.STATUS, status);
        Instant from = time(SupportParams.SINCE, since, now);
        Instant to = time(SupportParams.UNTIL, until, now);
        Duration older = duration(SupportParams.OLDER_THAN, olderThan);
        Cursor c = cursor(SupportParams.CURSOR, cursor);
        int n = limit(SupportParams.LIMIT, limit);
        return new EmailFilter(s, from, to, older, c, n);
    }

    /** A reason a person gives for an action; required or not. Returns the trimmed text or null. */
    public static String reason(String parameter, String raw, boolean required) {
        if (raw == null || raw.isBlank()) {
            if (required) {
                throw new InvalidParameterException(parameter, parameter + " is required: say why, in a few words");
            }
            return null;
        }
        String v = raw.strip();
        if (v.length() > MAX_REASON_LENGTH) {
            throw new InvalidParameterException(parameter, parameter + " must be at most " + MAX_REASON_LENGTH + " characters");
        }
        requirePrintable(parameter, v, true);
        return v;
    }

    /** A provider message id a person read somewhere, or null. */
    public static String providerMessageId(String parameter, String raw) {
        if (raw == null || raw.isBlank()) {
            return null;
        }
        String v = raw.strip();
        if (v.length() > MAX_PROVIDER_ID_LENGTH) {
            throw new InvalidParameterException(parameter, parameter + " must be at most " + MAX_PROVIDER_ID_LENGTH + " characters");
        }
        requirePrintable(parameter, v, false);
        return v;
    }

    /** {@code *} or a topic; {@code *} when not given. */
    public static String scope(String parameter, String raw) {
        if (raw == null || raw.isBlank()) {
            return "*";
        }
        String v = raw.trim();
        if (!SCOPE.matcher(v).matches()) {
            throw new InvalidParameterException(parameter, parameter + " must be * (everything) or a topic such as email.order_confirmation");
        }
        return v;
    }

    private static String required(String parameter, String raw) {
        if (raw == null || raw.isBlank()) {
            throw new InvalidParameterException(parameter, parameter + " is required");
        }
        return raw.trim();
    }

    /** The duration, or null when {@code v} is none; the caller words the error (a typed value is never echoed). */
    private static Duration parseDuration(String v) {
        try {
            return Durations.parse("duration", v);
        } catch (InvalidSettingException e) {
            return null;
        }
    }

    private static void checkDuration(String parameter, Duration d) {
        if (d.isNegative() || d.isZero() || d.compareTo(MAX_DURATION) > 0) {
            throw new InvalidParameterException(parameter, parameter + " must be more than 0 and at most 3660 days");
        }
    }

    private static InvalidParameterException badTime(String parameter) {
        return new InvalidParameterException(parameter, parameter
                + " must be a time such as 2025-01-31T09:15:00Z or 2025-01-31T10:15:00+01:00, or a time ago such as 30m, 1h, 2d");
    }

    private static InvalidParameterException badLimit(String parameter) {
        return new InvalidParameterException(parameter, parameter + " must be a whole number between 1 and " + SupportService.MAX_PAGE_SIZE);
    }

    private static void requirePrintable(String parameter, String v, boolean allowNewlines) {
        for (int i = 0; i < v.length(); i++) {
            char c = v.charAt(i);
            boolean newline = c == '\n' || c == '\r' || c == '\t';
            if ((Character.isISOControl(c) && !(allowNewlines && newline))
                    || Character.getType(c) == Character.FORMAT && c != '\u200d') {
                throw new InvalidParameterException(parameter, parameter + " must not contain control characters");
            }
        }
    }
}
