package io.mailroom.support;

import io.mailroom.outbox.InvalidSettingException;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Settings of the support server. Immutable; {@link Builder#build()} rejects bad or conflicting
 * values with an {@link InvalidSettingException} naming the setting ({@link #SETTING_PORT} and the
 * other {@code SETTING_*} names, which a shell that reads them from its environment turns into its
 * variables with {@link InvalidSettingException#renamed}), never echoing a token. Nothing is clamped
 * silently.
 *
 * <p>Without tokens the server refuses to start, unless demo mode is switched on explicitly; demo
 * mode lets anyone in as an operator named {@code demo} and is therefore only allowed on a
 * loopback address.
 *
 * @param host          interface to bind; loopback by default, since this is an admin surface
 * @param port          TCP port, 0 for any free one
 * @param tokens        who may come in, with which role (hashes only)
 * @param demo          let requests without credentials in as the operator {@code demo} (loopback only)
 * @param secureCookies mark the session cookie {@code Secure} (set it when the console is served over HTTPS)
 * @param publicOrigin  the origin browsers see (e.g. {@code https://support.example.com}) behind a proxy;
 *                      null: form posts must come from the origin in the {@code Host} header
 * @param sessionTtl    how long a console login lasts
 * @param maxThreads    Jetty's request thread pool size
 */
public record SupportConfig(String host, int port, List<ApiToken> tokens, boolean demo, boolean secureCookies,
                            String publicOrigin, Duration sessionTtl, int maxThreads) {

    /** How errors name each setting. */
    public static final String SETTING_HOST = "support host";
    public static final String SETTING_PORT = "support port";
    public static final String SETTING_TOKENS = "support tokens";
    public static final String SETTING_DEMO = "support demo";
    public static final String SETTING_PUBLIC_ORIGIN = "support public origin";
    public static final String SETTING_SESSION_TTL = "support session TTL";
    public static final String SETTING_THREADS = "support HTTP threads";

    public static final String DEFAULT_HOST = "127.0.0.1";
    public static final int DEFAULT_PORT = 8083;
    public static final Duration DEFAULT_SESSION_TTL = Duration.ofHours(8);
    public static final int DEFAULT_MAX_THREADS = 16;
    public static final int MIN_THREADS = 8;
    public static final int MAX_THREADS = 500;

    private static final Pattern NAME = Pattern.compile("^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$");
    private static final Pattern ORIGIN = Pattern.compile("^https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?$");

    public SupportConfig {
        tokens = List.copyOf(tokens);
    }

    public static Builder builder() {
        return new Builder();
    }

    /**
     * Parses {@code name:role:token,name:role:token}. The token is everything after the second colon
     * (it may contain colons, not commas); it must be at least {@value ApiToken#MIN_TOKEN_LENGTH}
     * characters. Errors name the entry by position and name, never by its token.
     */
    public static List<ApiToken> parseTokens(String spec) {
        List<ApiToken> out = new ArrayList<>();
        Set<String> names = new HashSet<>();
        List<byte[]> hashes = new ArrayList<>();
        String[] entries = spec.split(",", -1);
        for (int i = 0; i < entries.length; i++) {
            String entry = entries[i].trim();
            String where = SETTING_TOKENS + " entry " + (i + 1);
            if (entry.isEmpty()) {
                throw new InvalidSettingException(SETTING_TOKENS, where + " is empty; expected name:role:token, separated by commas");
            }
            String[] parts = entry.split(":", 3);
            if (parts.length < 3) {
                throw new InvalidSettingException(SETTING_TOKENS, where + " must be name:role:token");
            }
            String name = parts[0].trim();
            if (!NAME.matcher(name).matches()) {
                throw new InvalidSettingException(SETTING_TOKENS, where + ": the name must be 1..64 letters, digits or . _ @ -");
            }
            Role role = Role.parse(parts[1]);
            if (role == null) {
                throw new InvalidSettingException(SETTING_TOKENS, where + " (" + name + "): the role must be viewer, support or operator");
            }
            String token = parts[2].trim();
            if (token.length() < ApiToken.MIN_TOKEN_LENGTH || token.length() > ApiToken.MAX_TOKEN_LENGTH) {
                throw new InvalidSettingException(SETTING_TOKENS, where + " (" + name + "): the token must be "
                        + ApiToken.MIN_TOKEN_LENGTH + ".." + ApiToken.MAX_TOKEN_LENGTH + " characters");
            }
            for (int c = 0; c < token.length(); c++) {
                char ch = token.charAt(c);
                if (ch <= ' ' || ch > '~') {
                    throw new InvalidSettingException(SETTING_TOKENS, where + " (" + name + "): the token must be printable ASCII without spaces");
                }
            }
            if (!names.add(name.toLowerCase(Locale.ROOT))) {
                throw new InvalidSettingException(SETTING_TOKENS, where + ": the name " + name + " appears twice");
            }
            byte[] hash = ApiToken.sha256(token);
            for (byte[] other : hashes) {
                if (java.security.MessageDigest.isEqual(other, hash)) {
                    throw new InvalidSettingException(SETTING_TOKENS, where + " (" + name + "): the same token is given to two people");
                }
            }
            hashes.add(hash);
            out.add(ApiToken.of(name, role, token));
        }
        return out;
    }

    static boolean isLoopback(String host) {
        return BindAddress.isLoopback(host);
    }

    /** Secrets masked: tokens show as {@code name:role:****}. */
    @Override
    public String toString() {
        return "SupportConfig[host=" + host + ", port=" + port + ", tokens=" + tokens + ", demo=" + demo
                + ", secureCookies=" + secureCookies + ", publicOrigin=" + publicOrigin + ", sessionTtl=" + sessionTtl
                + ", maxThreads=" + maxThreads + "]";
    }

    public static final class Builder {
        private String host = DEFAULT_HOST;
        private int port = DEFAULT_PORT;
        private final List<ApiToken> tokens = new ArrayList<>();
        private boolean demo;
        private boolean secureCookies;
        private String publicOrigin;
        private Duration sessionTtl = DEFAULT_SESSION_TTL;
        private int maxThreads = DEFAULT_MAX_THREADS;

        private Builder() {
        }

        public Builder host(String v) { this.host = v; return this; }
        public Builder port(int v) { this.port = v; return this; }
        /** Adds one person; the token is hashed at once. */
        public Builder token(String name, Role role, String token) {
            this.tokens.addAll(parseTokens(name + ":" + role.word() + ":" + token));
            return this;
        }
        /** Adds people from a {@code name:role:token,...} list (see {@link #parseTokens}). */
        public Builder tokens(String spec) { this.tokens.addAll(parseTokens(spec)); return this; }
        public Builder demo(boolean v) { this.demo = v; return this; }
        public Builder secureCookies(boolean v) { this.secureCookies = v; return this; }
        public Builder publicOrigin(String v) { this.publicOrigin = v; return this; }
        public Builder sessionTtl(Duration v) { this.sessionTtl = v; return this; }
        public Builder maxThreads(int v) { this.maxThreads = v; return this; }

        public SupportConfig build() {
            if (host == null || host.isBlank()) {
                throw new InvalidSettingException(SETTING_HOST, SETTING_HOST + " must not be blank");
            }
            if (port < 0 || port > 65535) {
                throw new InvalidSettingException(SETTING_PORT, SETTING_PORT + " must be between 0 and 65535, got " + port);
            }
            if (tokens.isEmpty() && !demo) {
                throw new InvalidSettingException(SETTING_TOKENS, SETTING_TOKENS + " is empty: the support server needs at"
                        + " least one name:role:token (roles viewer, support, operator); to try it without tokens on this"
                        + " machine, set " + SETTING_DEMO + "=true with " + SETTING_HOST + "=127.0.0.1");
            }
            if (demo && !isLoopback(host)) {
                throw new InvalidSettingException(SETTING_DEMO, SETTING_DEMO + "=true lets anyone in as an operator, so it is"
                        + " only allowed with " + SETTING_HOST + " on a loopback address (127.0.0.1, ::1 or localhost)");
            }
            if (publicOrigin != null) {
                if (!ORIGIN.matcher(publicOrigin).matches()) {
                    throw new InvalidSettingException(SETTING_PUBLIC_ORIGIN, SETTING_PUBLIC_ORIGIN
                            + " must look like https://support.example.com (scheme, host, optional port, no path)");
                }
            }
            Objects.requireNonNull(sessionTtl, "sessionTtl");
            if (sessionTtl.compareTo(Duration.ofMinutes(1)) < 0 || sessionTtl.compareTo(Duration.ofDays(7)) > 0) {
                throw new InvalidSettingException(SETTING_SESSION_TTL, SETTING_SESSION_TTL
                        + " must be between 1 minute and 7 days, got " + sessionTtl);
            }
            if (maxThreads < MIN_THREADS || maxThreads > MAX_THREADS) {
                throw new InvalidSettingException(SETTING_THREADS, SETTING_THREADS + " must be between " + MIN_THREADS
                        + " and " + MAX_THREADS + ", got " + maxThreads);
            }
            return new SupportConfig(host.trim(), port, tokens, demo, secureCookies, publicOrigin, sessionTtl, maxThreads);
        }
    }
}
