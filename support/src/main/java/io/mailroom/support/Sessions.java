package io.mailroom.support;

import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.HexFormat;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Console logins, in memory (a restart logs everybody out, which is acceptable for an admin
 * console). The cookie carries a random 256-bit id; the map is keyed by its SHA-256, so the ids of
 * live sessions are not kept in memory either. Each session has its own CSRF token for the
 * console's forms (synchronizer token).
 */
final class Sessions {

    static final int MAX_SESSIONS = 10_000;

    private static final SecureRandom RANDOM = new SecureRandom();

    /** One login. The flash message is shown once, on the next page. */
    static final class Session {
        final Actor actor;
        final String csrfToken;
        final Instant expiresAt;
        private volatile String flash;
        private volatile boolean flashIsError;

        Session(Actor actor, String csrfToken, Instant expiresAt) {
            this.actor = actor;
            this.csrfToken = csrfToken;
            this.expiresAt = expiresAt;
        }

        void flash(String message, boolean error) {
            this.flash = message;
            this.flashIsError = error;
        }

        /** The pending message and whether it is an error, or null; cleared by reading. */
        synchronized Flash takeFlash() {
            String m = flash;
            flash = null;
            return m == null ? null : new Flash(m, flashIsError);
        }
    }

    record Flash(String message, boolean error) {
    }

    private final Map<String, Session> sessions = new ConcurrentHashMap<>();
    private final Duration ttl;
    private final Clock clock;

    Sessions(Duration ttl, Clock clock) {
        this.ttl = ttl;
        this.clock = clock;
    }

    /** A new session; returns the id for the cookie. Empty when the table is full of live sessions. */
    Optional<String> create(Actor actor) {
        if (sessions.size() >= MAX_SESSIONS) {
            sweep();
            if (sessions.size() >= MAX_SESSIONS) {
                return Optional.empty();
            }
        }
        String id = randomToken();
        sessions.put(hash(id), new Session(actor, randomToken(), clock.instant().plus(ttl)));
        return Optional.of(id);
    }

    Optional<Session> find(String id) {
        if (id == null || id.isEmpty() || id.length() > 100) {
            return Optional.empty();
        }
        String key = hash(id);
        Session s = sessions.get(key);
        if (s == null) {
            return Optional.empty();
        }
        if (!clock.instant().isBefore(s.expiresAt)) {
            sessions.remove(key, s);
            return Optional.empty();
        }
        return Optional.of(s);
    }

    void remove(String id) {
        if (id != null && id.length() <= 100) {
            sessions.remove(hash(id));
        }
    }

    Duration ttl() {
        return ttl;
    }

    private void sweep() {
        Instant now = clock.instant();
        sessions.values().removeIf(s -> !now.isBefore(s.expiresAt));
    }

    /** 256 random bits, base64url. */
    static String randomToken() {
        byte[] bytes = new byte[32];
        RANDOM.nextBytes(bytes);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    private static String hash(String id) {
        return HexFormat.of().formatHex(ApiToken.sha256(id));
    }
}
