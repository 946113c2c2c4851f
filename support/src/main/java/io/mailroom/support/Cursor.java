package io.mailroom.support;

import java.nio.charset.StandardCharsets;
import java.time.DateTimeException;
import java.time.Instant;
import java.util.Base64;
import java.util.Objects;

/**
 * Where a page of a list ended: the last row's time and key, the keyset the list is ordered by (the
 * time of its last change for a status list; the time it was queued for a search and for the list
 * of sent emails, {@code SupportStore.pageTime}). Opaque to callers (base64url), so its shape can
 * change without breaking them.
 */
public record Cursor(Instant updatedAt, String key) {

    static final int MAX_ENCODED_LENGTH = 400;

    public Cursor {
        Objects.requireNonNull(updatedAt, "updatedAt");
        Objects.requireNonNull(key, "key");
    }

    public String encode() {
        String raw = updatedAt + "|" + key;
        return Base64.getUrlEncoder().withoutPadding().encodeToString(raw.getBytes(StandardCharsets.UTF_8));
    }

    /** @throws InvalidParameterException naming {@code parameter} if {@code encoded} is not a cursor this service made */
    public static Cursor decode(String parameter, String encoded) {
        InvalidParameterException bad = new InvalidParameterException(parameter,
                parameter + " is not a valid page cursor; use the nextCursor of the previous page");
        if (encoded == null || encoded.isEmpty() || encoded.length() > MAX_ENCODED_LENGTH) {
            throw bad;
        }
        String raw;
        try {
            raw = new String(Base64.getUrlDecoder().decode(encoded), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw bad;
        }
        int bar = raw.indexOf('|');
        if (bar < 1) {
            throw bad;
        }
        Instant at;
        try {
            at = Instant.parse(raw.substring(0, bar));
        } catch (DateTimeException e) {
            throw bad;
        }
        if (io.mailroom.db.sql.PgValues.timeProblem(at).isPresent()) {
            throw bad;
        }
        String key = raw.substring(bar + 1);
        if (!Params.KEY.matcher(key).matches()) {
            throw bad;
        }
        return new Cursor(at, key);
    }
}
