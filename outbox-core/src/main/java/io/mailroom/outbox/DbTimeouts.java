package io.mailroom.outbox;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How long any Mailroom process waits on its database over the network, the one choice for every
 * pool and data source (dispatcher, reservations, support, webhooks, the order service, the CLI
 * commands and the DSN pipe). Without these a path that drops packets without closing (a NAT or
 * firewall that lost its state, a host that vanished) leaves every session waiting for TCP
 * keepalive, about two hours, and the process does not recover when the network does.
 *
 * <p>pgjdbc's part ({@code connectTimeout}, {@code loginTimeout}, {@code socketTimeout},
 * {@code tcpKeepAlive}) goes into the JDBC URL by {@link #jdbcUrl}, each only where the URL does
 * not set it already: what an operator wrote in the URL wins. The pool's part (how long a caller
 * waits for a session, how long a validation may take, how often an idle session is checked, how
 * long a session lives) is applied by whoever builds the pool. Statements that legitimately run
 * longer than {@link #socket()} (retention, migrations) take a bound of their own through
 * {@link #withSocketTimeout}.
 *
 * <p>It reads no environment: a program builds it from its own settings ({@link #of}), and each error
 * names the timeout by its {@code SETTING_*} name ({@value #SETTING_SOCKET}), which a program that
 * reads them from its environment turns into its variables ({@link InvalidSettingException#renamed}).
 *
 * @param connect     pgjdbc {@code connectTimeout}: the TCP connect ({@value #SETTING_CONNECT})
 * @param login       pgjdbc {@code loginTimeout}: connect, TLS and authentication together ({@value #SETTING_LOGIN})
 * @param socket      pgjdbc {@code socketTimeout}: the longest wait for one read from the server; a session
 *                    silent this long is dropped ({@value #SETTING_SOCKET})
 * @param acquire     the pool's connection timeout: how long a caller waits for a session ({@value #SETTING_ACQUIRE})
 * @param keepalive   how often the pool checks an idle session ({@value #SETTING_KEEPALIVE})
 * @param maxLifetime how long the pool keeps a session before replacing it ({@value #SETTING_MAX_LIFETIME})
 * @param migration   the read bound of schema migrations, which may build indexes for minutes ({@value #SETTING_MIGRATION})
 */
public record DbTimeouts(Duration connect, Duration login, Duration socket, Duration acquire, Duration keepalive,
                         Duration maxLifetime, Duration migration) {

    /** How errors name each timeout, and the keys {@link #of} asks for. */
    public static final String SETTING_CONNECT = "db connect timeout";
    public static final String SETTING_LOGIN = "db login timeout";
    public static final String SETTING_SOCKET = "db socket timeout";
    public static final String SETTING_ACQUIRE = "db acquire timeout";
    public static final String SETTING_KEEPALIVE = "db keepalive";
    public static final String SETTING_MAX_LIFETIME = "db max lifetime";
    public static final String SETTING_MIGRATION = "db migration socket timeout";
    /** The JDBC URL, named where its own {@code socketTimeout} is malformed ({@link #effectiveSocket}). */
    public static final String SETTING_URL = "db url";

    public static final Duration DEFAULT_CONNECT = Duration.ofSeconds(5);
    public static final Duration DEFAULT_LOGIN = Duration.ofSeconds(10);
    /**
     * Longer than the dispatcher's statement timeout (10 s) so that the server cancels a slow
     * statement first, shorter than its lease (60 s) so that a half-open session is dropped before
     * the claim it holds expires.
     */
    public static final Duration DEFAULT_SOCKET = Duration.ofSeconds(30);
    public static final Duration DEFAULT_ACQUIRE = Duration.ofSeconds(5);
    public static final Duration DEFAULT_KEEPALIVE = Duration.ofSeconds(60);
    public static final Duration DEFAULT_MAX_LIFETIME = Duration.ofMinutes(30);
    public static final Duration DEFAULT_MIGRATION = Duration.ofMinutes(30);
    /** The longest a pooled session may take to answer a validation, at most the acquire timeout. */
    public static final Duration MAX_VALIDATION = Duration.ofSeconds(2);
    /** HikariCP's smallest keepalive interval. */
    public static final Duration MIN_KEEPALIVE = Duration.ofSeconds(30);

    private static final Duration MAX = Duration.ofHours(1);

    public static final DbTimeouts DEFAULTS = new DbTimeouts(DEFAULT_CONNECT, DEFAULT_LOGIN, DEFAULT_SOCKET, DEFAULT_ACQUIRE,
            DEFAULT_KEEPALIVE, DEFAULT_MAX_LIFETIME, DEFAULT_MIGRATION);

    public DbTimeouts {
        wholeSeconds(SETTING_CONNECT, connect, Duration.ofMinutes(5));
        wholeSeconds(SETTING_LOGIN, login, Duration.ofMinutes(5));
        wholeSeconds(SETTING_SOCKET, socket, MAX);
        Checks.atMost(SETTING_ACQUIRE, Checks.atLeast(SETTING_ACQUIRE, acquire, Duration.ofMillis(250), "HikariCP's smallest"),
                Duration.ofMinutes(5));
        Checks.atLeast(SETTING_KEEPALIVE, Checks.notNull(SETTING_KEEPALIVE, keepalive), MIN_KEEPALIVE, "HikariCP's smallest");
        Checks.atLeast(SETTING_MAX_LIFETIME, Checks.notNull(SETTING_MAX_LIFETIME, maxLifetime), Duration.ofMinutes(1), null);
        if (keepalive.compareTo(maxLifetime) >= 0) {
            throw new InvalidSettingException(SETTING_KEEPALIVE, SETTING_KEEPALIVE + " (" + Durations.format(keepalive)
                    + ") must be shorter than " + SETTING_MAX_LIFETIME + " (" + Durations.format(maxLifetime) + ")");
        }
        wholeSeconds(SETTING_MIGRATION, migration, Duration.ofHours(24));
        if (login.compareTo(connect) < 0) {
            throw new InvalidSettingException(SETTING_LOGIN, SETTING_LOGIN + " (" + Durations.format(login) + ") covers the"
                    + " connect: it must be at least " + SETTING_CONNECT + " (" + Durations.format(connect) + ")");
        }
    }

    /**
     * The timeouts {@code setting} gives for each {@code SETTING_*} name, the default where it gives
     * null: a program passes how it reads its own settings (its environment, its properties).
     */
    public static DbTimeouts of(Function<String, Duration> setting) {
        return new DbTimeouts(or(setting, SETTING_CONNECT, DEFAULT_CONNECT), or(setting, SETTING_LOGIN, DEFAULT_LOGIN),
                or(setting, SETTING_SOCKET, DEFAULT_SOCKET), or(setting, SETTING_ACQUIRE, DEFAULT_ACQUIRE),
                or(setting, SETTING_KEEPALIVE, DEFAULT_KEEPALIVE), or(setting, SETTING_MAX_LIFETIME, DEFAULT_MAX_LIFETIME),
                or(setting, SETTING_MIGRATION, DEFAULT_MIGRATION));
    }

    /** The same with another acquire timeout (tests, and pools whose callers must fail faster). */
    public DbTimeouts withAcquire(Duration newAcquire) {
        return new DbTimeouts(connect, login, socket, newAcquire, keepalive, maxLifetime, migration);
    }

    /** The same with another socket timeout. */
    public DbTimeouts withSocket(Duration newSocket) {
        return new DbTimeouts(connect, login, newSocket, acquire, keepalive, maxLifetime, migration);
    }

    /** How long the pool lets a validation of a session take: {@link #MAX_VALIDATION}, or less when the acquire timeout is shorter. */
    public Duration validation() {
        Duration half = acquire.dividedBy(2);
        return half.compareTo(MAX_VALIDATION) < 0 ? half : MAX_VALIDATION;
    }

    /**
     * {@code url} with {@code connectTimeout}, {@code loginTimeout}, {@code socketTimeout} (seconds)
     * and {@code tcpKeepAlive=true} added, each only when the URL does not name it.
     */
    public String jdbcUrl(String url) {
        if (url == null || !url.startsWith("jdbc:postgresql:")) {
            throw new IllegalArgumentException("not a PostgreSQL JDBC URL: " + url);
        }
        StringBuilder out = new StringBuilder(url);
        add(out, "connectTimeout", connect.toSeconds());
        add(out, "loginTimeout", login.toSeconds());
        add(out, "socketTimeout", socket.toSeconds());
        add(out, "tcpKeepAlive", "true");
        return out.toString();
    }

    /**
     * The socket timeout pgjdbc will use for {@code url}: the URL's own {@code socketTimeout} when it
     * has one (0: none, returned as {@link Duration#ZERO}), else {@link #socket()}.
     */
    public Duration effectiveSocket(String url) {
        Matcher m = param("socketTimeout").matcher(url);
        if (!m.find()) {
            return socket;
        }
        try {
            return Duration.ofSeconds(Long.parseLong(m.group(1).trim()));
        } catch (NumberFormatException e) {
            throw new InvalidSettingException(SETTING_URL, "socketTimeout in the JDBC URL must be whole seconds, got '"
                    + m.group(1) + "'");
        }
    }

    /**
     * {@code dataSource} whose sessions wait up to {@code readBound} for each read from the server
     * instead of the URL's socket timeout, for statements that legitimately run longer (retention,
     * migrations). A pool puts its own bound back when the session returns (HikariCP resets the
     * network timeout of a session whose timeout was changed).
     */
    public static DataSource withSocketTimeout(DataSource dataSource, Duration readBound) {
        Checks.positive("readBound", readBound);
        int millis = (int) Math.min(Integer.MAX_VALUE, readBound.toMillis());
        return new DelegatingDataSource(dataSource) {
            @Override
            Connection prepare(Connection c) throws SQLException {
                try {
                    c.setNetworkTimeout(Runnable::run, millis); // pgjdbc sets SO_TIMEOUT at once, without the executor
                } catch (SQLException | RuntimeException e) {
                    c.close();
                    throw e;
                }
                return c;
            }
        };
    }

    @Override
    public String toString() {
        return "connect=" + Durations.format(connect) + ", login=" + Durations.format(login) + ", socket="
                + Durations.format(socket) + ", acquire=" + Durations.format(acquire) + ", keepalive="
                + Durations.format(keepalive) + ", maxLifetime=" + Durations.format(maxLifetime)
                + ", migrationSocket=" + Durations.format(migration);
    }

    private static void add(StringBuilder url, String name, Object value) {
        if (param(name).matcher(url).find()) {
            return;
        }
        url.append(url.indexOf("?") < 0 ? '?' : '&').append(name).append('=').append(value);
    }

    /** {@code name=value} as a URL parameter, case-insensitive as pgjdbc reads it. */
    private static Pattern param(String name) {
        return Pattern.compile("[?&]" + Pattern.quote(name) + "=([^&]*)", Pattern.CASE_INSENSITIVE);
    }

    private static Duration or(Function<String, Duration> setting, String name, Duration fallback) {
        Duration value = setting.apply(name);
        return value == null ? fallback : value;
    }

    /** At least one second and at most {@code max}, in whole seconds: pgjdbc takes these in seconds. */
    private static void wholeSeconds(String setting, Duration value, Duration max) {
        Checks.atMost(setting, Checks.atLeast(setting, Checks.notNull(setting, value), Duration.ofSeconds(1), null), max);
        if (value.toMillis() % 1000 != 0) {
            throw new InvalidSettingException(setting, setting + " must be whole seconds (pgjdbc's unit), got "
                    + Durations.format(value));
        }
    }
}
