package io.mailroom.support;

import java.util.List;
import java.util.Optional;

/**
 * Maps a presented token to the person it belongs to. Only hashes are held; a presented token is
 * hashed and compared with every configured hash in constant time, without stopping at a match, so
 * the answer's timing does not depend on which entry (if any) matched.
 */
final class Authenticator {

    static final Actor DEMO = new Actor("demo", Role.OPERATOR);

    private final List<ApiToken> tokens;
    private final boolean demo;

    Authenticator(List<ApiToken> tokens, boolean demo) {
        this.tokens = List.copyOf(tokens);
        this.demo = demo;
    }

    Optional<Actor> byToken(String presented) {
        if (presented == null || presented.isEmpty() || presented.length() > ApiToken.MAX_TOKEN_LENGTH) {
            return Optional.empty();
        }
        byte[] hash = ApiToken.sha256(presented);
        ApiToken found = null;
        for (ApiToken t : tokens) {
            if (t.matches(hash) & found == null) {
                found = t;
            }
        }
        return found == null ? Optional.empty() : Optional.of(new Actor(found.name(), found.role()));
    }

    /** Whether requests without credentials are let in as {@link #DEMO}. */
    boolean demo() {
        return demo;
    }
}
